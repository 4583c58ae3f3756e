import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVENV_ENV, SKIP_DOCKER, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { CLI, stdioEnv, type AnyMcpClient } from './helpers/mcpClients.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';

const exec = promisify(execFile);


async function call(client: AnyMcpClient, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
  return result.structuredContent as Record<string, any>;
}

/**
 * Restarts of the Backyard server process: real `backyard serve` processes on one
 * home, stopped with SIGTERM (a clean stop) and with SIGKILL (a crash).
 */
describe.skipIf(SKIP_DOCKER)('development environments across restarts of the server process', () => {
  let home: string;
  let token: string;
  let port: number;
  let server: ServeProcess;
  const env = () => stdioEnv(home, { ...DEVENV_ENV, BACKYARD_LOG_LEVEL: 'warn' });

  const start = () => server.start();
  const stop = (signal: NodeJS.Signals) => server.stop(signal);

  beforeAll(async () => {
    await requireDocker();
    home = makeHome();
    port = await freePort();
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: env() })).stdout.trim();
    server = new ServeProcess(port, token, env);
  });
  afterAll(async () => {
    if (server?.running) await stop('SIGKILL');
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
