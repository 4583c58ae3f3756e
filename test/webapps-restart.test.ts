/**
 * Web Apps across restarts of the Backyard server process: real `backyard serve`
 * processes on one home, stopped with SIGKILL (a crash) and SIGTERM (a clean stop) in the middle of
 * a build. The interrupted deployment reads failed with a reason, the active container is found
 * again by its label (even on a new port) and keeps serving, and auto-deploy works afterwards.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_DEPLOYMENT } from '../src/platform/webapps/labels.js';
import { SKIP_DOCKER, docker, requireDocker } from './helpers/devenvs.js';
import { CLI, stdioEnv, type AnyMcpClient } from './helpers/mcpClients.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';
import { WEBAPP_ENV, call, commit, fetchApp, push, removeWebApps, sampleApp, settle } from './helpers/webapps.js';

const exec = promisify(execFile);


describe.skipIf(SKIP_DOCKER)('Web Apps across restarts of the server process', () => {
  let home: string;
  let work: string;
  let repo: string;
  let token: string;
  let port: number;
  let url: string;
  let server: ServeProcess;
  const env = () => stdioEnv(home, { ...WEBAPP_ENV, BACKYARD_LOG_LEVEL: process.env.BACKYARD_TEST_LOG_LEVEL ?? 'warn' });

  const start = () => server.start();
  const stop = (signal: NodeJS.Signals) => server.stop(signal);

  /** Pushes a commit whose build sleeps, and waits until the build is in its sleep. */
  async function pushSlowBuild(mcp: AnyMcpClient, appId: string): Promise<string> {
    await commit(repo, { Dockerfile: `${sampleApp('').Dockerfile}RUN echo sleeping && sleep 60\n` }, 'slow build');
    await push(url, repo, 'alice', 'hello', token);
    const deploymentId = (await call(mcp, 'getWebApp', { appId })).lastDeployment.id as string;
    const sleeping = async () => {
      const d = await call(mcp, 'getDeployment', { appId, deploymentId, includeBuildLogs: true });
      return d.buildLogs.some((r: { message: string }) => r.message === 'sleeping') ? d.status : undefined;
    };
    await expect.poll(sleeping, { timeout: 60_000, interval: 100, message: 'the slow build did not start' }).toBe('building');
    return deploymentId;
  }

  beforeAll(async () => {
    await requireDocker();
    home = makeHome();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-webapps-restart-'));
    repo = path.join(work, 'hello');
    port = await freePort();
    url = `http://localhost:${port}`;
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: env() })).stdout.trim();
    server = new ServeProcess(port, token, env);
  });
  afterAll(async () => {
    if (server?.running) await stop('SIGKILL');
    if (home) {
      await removeWebApps(home);
      removeHome(home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('a crash in the middle of a build: the deployment reads failed, the active container is found again and serves', async () => {
    let mcp = await start();
    await commit(repo, sampleApp('<h1>before the crash</h1>\n'), 'first');
    await push(url, repo, 'alice', 'hello', token);
    const created = await call(mcp, 'createWebApp', { appName: 'hello', repositoryOwnerLogin: 'alice', repositoryName: 'hello', autoDeploy: true });
    const appId = created.appId as string;
    const active = await settle(mcp, appId, created.lastDeployment.id);
    expect(active.status).toBe('active');
    expect((await fetchApp(created.appURL)).text).toBe('<h1>before the crash</h1>\n');

    const interrupted = await pushSlowBuild(mcp, appId);
    await stop('SIGKILL');
    // While Backyard is down the engine restarts the container, which may publish it on another port.
    const [container] = await docker.listContainers({ filters: { label: [`${LABEL_DEPLOYMENT}=${active.id}`] } });
    await docker.getContainer(container!.Id).restart({ t: 0 });

    mcp = await start();
    const after = await call(mcp, 'getDeployment', { appId, deploymentId: interrupted });
    expect(after.status).toBe('failed');
    expect(after.error).toMatch(/^Backyard stopped or restarted while this deployment was building/);
    const app = await call(mcp, 'getWebApp', { appId });
    expect(app).toMatchObject({ status: 'failed', lastDeployment: { id: interrupted, status: 'failed' }, activeDeployment: { id: active.id, status: 'active' } });
    await expect.poll(async () => (await fetchApp(created.appURL)).text, { timeout: 10_000 }).toBe('<h1>before the crash</h1>\n');

    // Auto-deploy works after the restart.
    const fixed = await commit(repo, { Dockerfile: sampleApp('').Dockerfile!, 'www/index.html': '<h1>after the crash</h1>\n' }, 'fixed');
    await push(url, repo, 'alice', 'hello', token);
    const next = await settle(mcp, appId, (await call(mcp, 'getWebApp', { appId })).lastDeployment.id);
    expect(next).toMatchObject({ status: 'active', commitSHA: fixed });
    expect((await fetchApp(created.appURL)).text).toBe('<h1>after the crash</h1>\n');

    // A clean stop (SIGTERM) in the middle of a build: the same, and nothing of that build is left running.
    const second = await pushSlowBuild(mcp, appId);
    await stop('SIGTERM');
    mcp = await start();
    expect(await call(mcp, 'getDeployment', { appId, deploymentId: second })).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^Backyard stopped or restarted while this deployment was building/),
    });
    expect((await fetchApp(created.appURL)).text).toBe('<h1>after the crash</h1>\n');
    await stop('SIGTERM');
    // The active container outlives Backyard (restart policy unless-stopped).
    const running = await docker.listContainers({ filters: { label: [`${LABEL_DEPLOYMENT}=${next.id}`] } });
    expect(running).toHaveLength(1);
  }, 120_000);
});
