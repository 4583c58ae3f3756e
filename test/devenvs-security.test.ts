import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEPT_CAPABILITIES, WORKSPACE } from '../src/platform/devenvs/containers.js';
import { accountNetworkName } from '../src/platform/devenvs/labels.js';
import { DEVENV_ENV, SKIP_DOCKER, containersOf, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';

async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return result.structuredContent as Record<string, any>;
}

/**
 * Containment (docs/design.md, "Security stance"). Each case runs
 * in an environment of its own, so that what one leaves running (a fork bomb, a full process table)
 * cannot change the next one's outcome.
 */
describe.skipIf(SKIP_DOCKER)('development environment containment', () => {
  const LIMIT = 64;
  let server: TestServer;
  let client: AnyMcpClient;
  const run = (id: string, command: string) => call(client, 'executeCommand', { developmentEnvironmentId: id, command });
  const inspect = (id: string, commandExecutionId: string) => call(client, 'inspectCommandExecution', { developmentEnvironmentId: id, commandExecutionId });
  const exit = (id: string, commandExecutionId: string) => call(client, 'interactWithCommandExecution', { developmentEnvironmentId: id, commandExecutionId, exit: true });
  const environment = async (chatTitle: string): Promise<string> => (await call(client, 'createDevelopmentEnvironment', { chatTitle })).id;
  /** Tasks in the environment's pids cgroup, as the engine counts them (no exec needed). */
  const tasks = async (id: string) => {
    const [info] = await containersOf(id);
    return ((await docker.getContainer(info!.Id).stats({ stream: false })) as { pids_stats?: { current?: number } }).pids_stats?.current;
  };

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer({ ...DEVENV_ENV, BACKYARD_DEVENV_MEMORY_MB: '96', BACKYARD_DEVENV_PIDS: String(LIMIT) });
    client = await modernHttpClient(server.url, server.alice);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    if (server) await removeDevenvs(server.home);
  });

  it('is not privileged, mounts nothing of the host, drops capabilities and has limits', async () => {
    const envId = await environment('privileges');
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
    expect(host.PidsLimit).toBe(LIMIT);
    expect(host.NanoCpus).toBe(1e9);
    // On its account's own network, and on no other (test/container-networks.test.ts).
    const network = accountNetworkName(server.home, (await server.platform.services.accounts.findByLogin('alice'))!.id);
    expect(host.NetworkMode).toBe(network);
    expect(Object.keys(inspected.NetworkSettings.Networks)).toEqual([network]);
    // Inside: no docker socket, no mounting, no raw sockets, no device nodes.
    const probe = await run(envId, 'ls /var/run/docker.sock; mount -t tmpfs none /mnt; mknod /tmp/d c 1 3; grep CapEff /proc/self/status');
    expect(probe.stdout).toBe('CapEff:\t00000000000004fb\n');
    expect(probe.stderr).toMatch(/docker.sock/);
    expect(probe.stderr).toMatch(/mount.*(denied|not permitted)/i);
    expect(probe.stderr).toMatch(/mknod.*(denied|not permitted)/i);
  });

  it('contains a fork bomb at the process limit; Backyard and other environments keep working', async () => {
    const envId = await environment('bomb');
    const otherId = await environment('neighbour');
    // `wait` keeps the command running while its bomb does: without it the command's shell returns at
    // once and the bomb, left without a command to end, had to die down by itself, which took more
    // than a minute once on a loaded machine.
    const bomb = await run(envId, 'bomb() { bomb | bomb & }; bomb; wait');
    expect(await run(otherId, 'echo fine')).toMatchObject({ stdout: 'fine\n', exitCode: 0 });
    expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);
    // The kernel refuses forks at the limit: the bomb's shells say so on the stream Backyard follows.
    await expect.poll(async () => (await inspect(envId, bomb.id)).stderr, { timeout: 60_000, interval: 250 }).toMatch(/can't fork/);
    // The bomb may have died down by itself (each shell gives up when it cannot fork); else end it.
    const state = await inspect(envId, bomb.id);
    if (state.status === 'running') await exit(envId, bomb.id).catch((error: Error) => expect(error.message).toMatch(/has already exited/));
    await expect.poll(() => tasks(envId), { timeout: 60_000, interval: 250 }).toBeLessThanOrEqual(3);
    expect(await run(envId, 'echo recovered | cat')).toMatchObject({ stdout: 'recovered\n', exitCode: 0 });
  }, 150_000);

  it('answers a command that cannot start for want of process slots as not started, and says how to free them', async () => {
    const envId = await environment('full');
    // init + main process + this shell + the sleeps = every slot (a shell that cannot fork gives up, so count).
    const hold = await run(envId, `i=0; while [ $i -lt ${LIMIT - 3} ]; do sleep 120 & i=$((i+1)); done; echo full; exec sleep 120`);
    expect(hold).toMatchObject({ status: 'running', stdout: 'full\n' });
    expect(await tasks(envId)).toBe(LIMIT);
    const refused = await run(envId, 'ls / | cat');
    if (refused.startError !== undefined) {
      // runc 1.1 (Debian's engine) cannot start its own init in a full cgroup: no exit code 126 from the runtime.
      expect(refused).toEqual({ id: refused.id, status: 'exited', stdout: '', stderr: '', startError: expect.any(String) });
      expect(refused.startError).toMatch(/could not start.*no process slots left \(\d+ of 64 in use/);
      expect(refused.startError).toContain(`interactWithCommandExecution and exit: true (running now: ${hold.id})`);
      expect(refused.startError).toMatch(/OCI runtime exec failed/);
      // Recorded as such: read back from platform.db once the execution is no longer followed.
      expect(await inspect(envId, refused.id)).toEqual(refused);
    } else {
      // A runtime that can start the exec beside a full table: the command's own forks fail.
      expect(refused).toMatchObject({ status: 'exited', exitCode: 2, stderr: expect.stringMatching(/can't fork/) });
    }
    // Ended either way: by SIGTERM when the signalling exec could start (the runtime's init may join a full
    // cgroup before it needs threads), else by a restart of the environment, which the stderr then says.
    const ended = await exit(envId, hold.id);
    expect(ended.status).toBe('exited');
    expect([137, 143]).toContain(ended.exitCode);
    if (ended.exitCode === 137) expect(ended.stderr).toMatch(/environment was restarted to end it/);
    expect(await run(envId, 'ps | grep -c "[s]leep 120"')).toMatchObject({ stdout: '0\n', exitCode: 1 });
  }, 90_000);

  it('restarts the environment, keeping /workspace, when a command cannot be found to be signalled', async () => {
    const envId = await environment('hidden');
    await run(envId, 'echo survives > /workspace/file');
    const hidden = await run(envId, 'rm -f /tmp/.backyard-exec/$BACKYARD_EXECUTION_ID.pid; echo hidden; sleep 120');
    expect(hidden).toMatchObject({ status: 'running', stdout: 'hidden\n' });
    const ended = await exit(envId, hidden.id);
    expect(ended).toMatchObject({ status: 'exited', exitCode: 137 });
    expect(await run(envId, 'cat /workspace/file; ps | grep -c "[s]leep 120"')).toMatchObject({ stdout: 'survives\n0\n' });
  }, 60_000);

  it('kills a memory hog at the memory limit without stopping the environment', async () => {
    const envId = await environment('hog');
    const hog = await run(envId, 'head -c 400m /dev/zero | tail');
    // On a loaded machine the kill may come after executeCommand's wait: follow the execution until it ends.
    await expect.poll(async () => (await inspect(envId, hog.id)).status, { timeout: 60_000, interval: 250 }).toBe('exited');
    expect(await inspect(envId, hog.id)).toMatchObject({ status: 'exited', exitCode: 137 });
    const [info] = await containersOf(envId);
    expect(info!.State).toBe('running');
    expect(await run(envId, 'echo alive')).toMatchObject({ stdout: 'alive\n', exitCode: 0 });
    expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);
  }, 90_000);
});
