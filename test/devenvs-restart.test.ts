import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVENV_ENV, SKIP_DOCKER, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { CLI, modernHttpClient, stdioEnv, type AnyMcpClient } from './helpers/mcpClients.js';
import { makeHome, removeHome } from './helpers/server.js';

const exec = promisify(execFile);

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return result.structuredContent as Record<string, any>;
}

/**
 * Restarts of the Backyard server process (issue 5, item 6): real `backyard serve` processes on one
 * home, stopped with SIGTERM (a clean stop) and with SIGKILL (a crash).
 */
describe.skipIf(SKIP_DOCKER)('development environments across restarts of the server process', () => {
  let home: string;
  let token: string;
  let port: number;
  let child: ChildProcess | undefined;
  let client: AnyMcpClient | undefined;
  const env = () => stdioEnv(home, { ...DEVENV_ENV, BACKYARD_LOG_LEVEL: 'warn' });

  async function start(): Promise<AnyMcpClient> {
    child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], { env: env(), stdio: ['ignore', 'ignore', 'inherit'] });
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`http://localhost:${port}/healthz`)).ok) return (client = await modernHttpClient(`http://localhost:${port}`, token));
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('backyard serve did not start');
  }

  async function stop(signal: NodeJS.Signals): Promise<void> {
    await client?.close().catch(() => undefined);
    client = undefined;
    const proc = child!;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
  }

  beforeAll(async () => {
    await requireDocker();
    home = makeHome();
    port = await freePort();
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: env() })).stdout.trim();
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) await stop('SIGKILL');
    if (home) {
      await removeDevenvs(home);
      removeHome(home);
    }
  });

  it('finds environments again, keeps /workspace, and reads interrupted executions as exited', async () => {
    let mcp = await start();
    const { id } = await call(mcp, 'createDevelopmentEnvironment', { chatTitle: 'Restart me' });
    const run = (command: string) => call(mcp, 'executeCommand', { developmentEnvironmentId: id, command });
    const inspect = (commandExecutionId: string) => call(mcp, 'inspectCommandExecution', { developmentEnvironmentId: id, commandExecutionId });
    expect((await run('echo before > /workspace/kept.txt')).exitCode).toBe(0);
    const interrupted = await run('echo started; sleep 61');
    expect(interrupted).toMatchObject({ status: 'running', stdout: 'started\n' });

    // A clean stop (SIGTERM): the running command is ended and reads as exited, with a note.
    await stop('SIGTERM');
    mcp = await start();
    expect((await call(mcp, 'getDevelopmentEnvironments', { chatTitle: 'Restart me' })).developmentEnvironments).toEqual([
      expect.objectContaining({ id, chatTitle: 'Restart me' }),
    ]);
    const afterStop = await inspect(interrupted.id);
    expect(afterStop).toMatchObject({ status: 'exited', exitCode: -1, stdout: 'started\n' });
    expect(afterStop.stderr).toMatch(/Backyard stopped or restarted while this command was running/);
    expect((await run('cat /workspace/kept.txt')).stdout).toBe('before\n');
    await expect.poll(async () => (await run('ps')).stdout, { timeout: 10_000 }).not.toContain('sleep 61');

    // A crash (SIGKILL): the next Backyard sees that the owner is gone.
    const crashed = await run('echo crash; sleep 62');
    expect(crashed.status).toBe('running');
    await stop('SIGKILL');
    mcp = await start();
    const afterCrash = await inspect(crashed.id);
    expect(afterCrash).toMatchObject({ status: 'exited', exitCode: -1, stdout: 'crash\n' });
    expect(afterCrash.stderr).toMatch(/Backyard stopped or restarted while this command was running/);
    expect(await run('echo still here')).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'still here\n' });
    await expect.poll(async () => (await run('ps')).stdout, { timeout: 10_000 }).not.toContain('sleep 62');
    await stop('SIGTERM');
  }, 90_000);
});
