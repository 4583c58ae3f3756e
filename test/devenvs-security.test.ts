import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_CAPABILITIES, WORKSPACE } from '../src/platform/devenvs/containers.js';
import { DEVENV_ENV, SKIP_DOCKER, containersOf, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';

async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return result.structuredContent as Record<string, any>;
}

/** Containment (design.md, "Security stance"; issue 5, "What it must show": security). */
describe.skipIf(SKIP_DOCKER)('development environment containment', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let envId: string;
  let otherId: string;
  const run = (command: string, id = envId) => call(client, 'executeCommand', { developmentEnvironmentId: id, command });

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer({ ...DEVENV_ENV, BACKYARD_DEVENV_MEMORY_MB: '96', BACKYARD_DEVENV_PIDS: '64' });
    client = await modernHttpClient(server.url, server.alice);
    envId = (await call(client, 'createDevelopmentEnvironment', { chatTitle: 'contained' })).id;
    otherId = (await call(client, 'createDevelopmentEnvironment', { chatTitle: 'neighbour' })).id;
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    if (server) await removeDevenvs(server.home);
  });

  it('is not privileged, mounts nothing of the host, drops capabilities and has limits', async () => {
    const [info] = await containersOf(envId);
    const inspected = await docker.getContainer(info!.Id).inspect();
    const host = inspected.HostConfig;
    expect(host.Privileged).toBe(false);
    expect(host.Binds ?? []).toEqual([]);
    expect(inspected.Mounts).toEqual([expect.objectContaining({ Type: 'volume', Destination: WORKSPACE })]);
    expect(host.CapDrop).toEqual(['ALL']);
    expect([...(host.CapAdd ?? [])].sort()).toEqual([...KEPT_CAPABILITIES].sort());
    expect(host.SecurityOpt).toContain('no-new-privileges');
    expect(host.Init).toBe(true);
    expect(host.Memory).toBe(96 * 1024 * 1024);
    expect(host.PidsLimit).toBe(64);
    expect(host.NanoCpus).toBe(1e9);
    expect(host.NetworkMode).toBe('bridge');
    // Inside: no docker socket, no mounting, no raw sockets, no device nodes.
    const probe = await run('ls /var/run/docker.sock; mount -t tmpfs none /mnt; mknod /tmp/d c 1 3; grep CapEff /proc/self/status');
    expect(probe.stdout).toBe('CapEff:\t00000000000004fb\n');
    expect(probe.stderr).toMatch(/docker.sock/);
    expect(probe.stderr).toMatch(/mount.*(denied|not permitted)/i);
    expect(probe.stderr).toMatch(/mknod.*(denied|not permitted)/i);
  });

  it('contains a fork bomb at the process limit; Backyard and other environments keep working', async () => {
    const bomb = await run('bomb() { bomb | bomb & }; bomb');
    const t0 = Date.now();
    expect(await run('echo fine', otherId)).toMatchObject({ stdout: 'fine\n', exitCode: 0 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);
    // The kernel refused forks at the limit (pids.events counts them); while the bomb holds every
    // process slot, even a new command may be refused, so ask until one runs.
    const events = async () => {
      try {
        const r = await run('cat /sys/fs/cgroup/pids/pids.events 2>/dev/null || cat /sys/fs/cgroup/pids.events');
        return r.stdout as string;
      } catch {
        return '';
      }
    };
    await expect.poll(events, { timeout: 20_000 }).toMatch(/^max [1-9]\d*$/m);
    const state = await call(client, 'inspectCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: bomb.id });
    expect(state.stderr).toMatch(/can't fork/);
    if (state.status === 'running') {
      await call(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: bomb.id, exit: true });
    }
    // The bomb dies down (each shell gives up when it cannot fork); the environment is usable again.
    const [info] = await containersOf(envId);
    const pids = async () => ((await docker.getContainer(info!.Id).stats({ stream: false })) as { pids_stats?: { current?: number } }).pids_stats?.current;
    await expect.poll(pids, { timeout: 30_000, interval: 500 }).toBeLessThanOrEqual(3);
    expect(await run('echo recovered | cat')).toMatchObject({ stdout: 'recovered\n', exitCode: 0 });
  }, 60_000);

  it('ends a command that holds every process slot (the signals need no fork)', async () => {
    // init + main process + this shell + 61 sleeps = the limit of 64.
    const hold = await run('i=0; while [ $i -lt 61 ]; do sleep 120 & i=$((i+1)); done; echo full; exec sleep 120');
    expect(hold).toMatchObject({ status: 'running', stdout: 'full\n' });
    expect(await run('ls / | cat')).toMatchObject({ exitCode: 2, stderr: expect.stringMatching(/can't fork/) });
    const ended = await call(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: hold.id, exit: true });
    expect(ended).toMatchObject({ status: 'exited', exitCode: 143 });
    expect(await run('ps | grep -c "[s]leep 120"')).toMatchObject({ stdout: '0\n' });
  }, 60_000);

  it('restarts the environment, keeping /workspace, when a command cannot be found to be signalled', async () => {
    await run('echo survives > /workspace/file');
    const hidden = await run('rm -f /tmp/.backyard-exec/$BACKYARD_EXECUTION_ID.pid; echo hidden; sleep 120');
    expect(hidden).toMatchObject({ status: 'running', stdout: 'hidden\n' });
    const ended = await call(client, 'interactWithCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: hidden.id, exit: true });
    expect(ended).toMatchObject({ status: 'exited', exitCode: 137 });
    expect(await run('cat /workspace/file; ps | grep -c "[s]leep 120"')).toMatchObject({ stdout: 'survives\n0\n' });
  }, 60_000);

  it('kills a memory hog at the memory limit without stopping the environment', async () => {
    let hog = await run('head -c 400m /dev/zero | tail');
    // On a loaded machine the kill may come after executeCommand's wait: follow the execution until it ends.
    for (let i = 0; i < 60 && hog.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 500));
      hog = await call(client, 'inspectCommandExecution', { developmentEnvironmentId: envId, commandExecutionId: hog.id });
    }
    expect(hog).toMatchObject({ status: 'exited', exitCode: 137 });
    const [info] = await containersOf(envId);
    expect(info!.State).toBe('running');
    expect(await run('echo alive')).toMatchObject({ stdout: 'alive\n', exitCode: 0 });
    expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);
  }, 60_000);
});
