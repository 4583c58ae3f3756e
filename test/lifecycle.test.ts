/**
 * Lifecycle operations beyond the spec's 20: deleting a Backend App, stopping,
 * starting and deleting a Web App, deleting and restarting a development environment, through real
 * MCP and REST clients on a real Docker engine. Each shows that nothing is left behind and that
 * another account's ids answer 404.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homePaths } from '../src/config.js';
import { LABEL_ACCOUNT, LABEL_ENVIRONMENT, LABEL_HOME, accountNetworkName, networkHomeFilter, volumeName } from '../src/platform/devenvs/labels.js';
import { LABEL_WEBAPP, imageFilter } from '../src/platform/webapps/labels.js';
import { DEVENV_ENV, SKIP_DOCKER, docker, removeDevenvs, requireDocker } from './helpers/devenvs.js';
import { modernHttpClient, type AnyMcpClient } from './helpers/mcpClients.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';
import { WEBAPP_ENV, call, commit, fetchApp, push, removeWebApps, sampleApp, settle } from './helpers/webapps.js';

describe.skipIf(SKIP_DOCKER)('lifecycle operations', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let work: string;

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer({ ...WEBAPP_ENV, ...DEVENV_ENV });
    client = await modernHttpClient(server.url, server.alice);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-lifecycle-'));
  });
  afterAll(async () => {
    await client?.close();
    if (server) {
      const home = server.home;
      await server.close();
      await removeWebApps(home);
      await removeDevenvs(home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('deleteBackendApp removes the record, keys, data folder, cloud code worker and hosting subdomain; bob gets 404; twice answers 404', async () => {
    const app = await call(client, 'createBackendApp', { appName: 'doomed' });
    const { appId } = app;
    const { publicWebHostingURL } = await call(client, 'activateWebHosting', { appId });
    expect((await fetchApp(publicWebHostingURL)).status).toBe(200);
    const { responses } = await call(client, 'callBackendAPI', {
      appId,
      requests: [
        { method: 'POST', url: '/classes/Thing', body: { n: 1 } },
        { method: 'POST', url: '/functions/hello', body: {} },
      ],
    });
    expect(responses.map((r: { code: number }) => r.code)).toEqual([201, 200]);
    expect(server.platform.services.cloud.liveWorkers(appId)).toBeGreaterThan(0);
    const folder = homePaths(server.home).app(appId);
    expect(fs.existsSync(path.join(folder, 'data.db'))).toBe(true);

    expect((await api(server, 'DELETE', `/backend-apps/${appId}`, { token: server.bob })).status).toBe(404);
    expect(fs.existsSync(folder)).toBe(true);

    expect(await call(client, 'deleteBackendApp', { appId })).toEqual({ appId, deleted: true });
    expect(fs.existsSync(folder)).toBe(false);
    expect(server.platform.services.cloud.liveWorkers(appId)).toBe(0);
    expect((await call(client, 'getBackendApps', {})).backendApps.map((a: { appId: string }) => a.appId)).not.toContain(appId);
    expect(await server.platform.services.backendApps.keys(appId)).toBeUndefined();
    const hosted = await fetchApp(publicWebHostingURL);
    expect(hosted.status).toBe(404);
    expect(hosted.text).toMatch(/No site is hosted/);
    // Its keys open nothing any more.
    const data = await fetch(`${app.apiURL}/classes/Thing`, { headers: { 'X-Parse-Application-Id': appId, 'X-Parse-REST-API-Key': app.restKey } });
    expect(data.status).not.toBe(200);
    expect(fs.existsSync(folder)).toBe(false);

    const again = await api(server, 'DELETE', `/backend-apps/${appId}`, { token: server.alice });
    expect(again.status).toBe(404);
  });

  it('stopWebApp, startWebApp and deleteWebApp: stopped, running again, then no container, image, row or subdomain left', async () => {
    const repo = path.join(work, 'site');
    await commit(repo, sampleApp('<h1>site</h1>\n'), 'first');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await push(server.url, repo, 'alice', 'site', token);
    const created = await call(client, 'createWebApp', { appName: 'site', repositoryOwnerLogin: 'alice', repositoryName: 'site' });
    const { appId, appURL } = created;
    expect((await settle(client, appId, created.lastDeployment.id)).status).toBe('active');
    expect((await fetchApp(appURL)).status).toBe(200);
    const byApp = { label: [`${LABEL_WEBAPP}=${appId}`] };
    const running = async () => (await docker.listContainers({ filters: byApp })).length;
    expect(await running()).toBe(1);

    for (const op of ['stopWebApp', 'startWebApp', 'deleteWebApp']) {
      expect((await api(server, op === 'deleteWebApp' ? 'DELETE' : 'POST', `/web-apps/${appId}${op === 'deleteWebApp' ? '' : `/${op === 'stopWebApp' ? 'stop' : 'start'}`}`, { token: server.bob })).status, op).toBe(404);
    }

    const stopped = await call(client, 'stopWebApp', { appId });
    expect(stopped).toMatchObject({ appId, status: 'stopped', error: '' });
    expect(await running()).toBe(0);
    expect((await call(client, 'getWebApp', { appId })).status).toBe('stopped');
    expect((await fetchApp(appURL)).status).not.toBe(200);
    expect(await running()).toBe(0); // the proxy does not start it again
    expect((await call(client, 'stopWebApp', { appId })).status).toBe('stopped');

    const started = await call(client, 'startWebApp', { appId });
    expect(started.status).toBe('running');
    expect(await running()).toBe(1);
    // httpd may take a moment to listen again after the start.
    await expect.poll(async () => (await fetchApp(appURL)).status, { timeout: 30_000, interval: 100 }).toBe(200);

    const home = server.home;
    expect((await docker.listImages({ filters: imageFilter(home) })).length).toBeGreaterThan(0);
    expect(await call(client, 'deleteWebApp', { appId })).toEqual({ appId, deleted: true });
    expect(await docker.listContainers({ all: true, filters: byApp })).toEqual([]);
    // The account's network (and its subnet) goes with its last container, and stays while it has others.
    const aliceId = (await server.platform.services.accounts.findByLogin('alice'))!.id;
    const others = await docker.listContainers({ all: true, filters: { label: [`${LABEL_HOME}=${home}`, `${LABEL_ACCOUNT}=${aliceId}`] } });
    const network = (await docker.listNetworks({ filters: networkHomeFilter(home) })).filter((n) => n.Name === accountNetworkName(home, aliceId));
    expect(network).toHaveLength(others.length > 0 ? 1 : 0);
    expect((await docker.listImages({ filters: imageFilter(home) })).flatMap((i) => i.RepoTags ?? []).filter((t) => t.includes('/site:'))).toEqual([]);
    expect((await call(client, 'getWebApps', {})).webApps.map((a: { appId: string }) => a.appId)).not.toContain(appId);
    const rows = (await server.platform.db.get('SELECT (SELECT COUNT(*) FROM deployments WHERE web_app_id = ?) AS d, (SELECT COUNT(*) FROM deployment_logs WHERE deployment_id = ?) AS l', appId, created.lastDeployment.id)) as { d: number; l: number };
    expect(rows).toEqual({ d: 0, l: 0 });
    const gone = await fetchApp(appURL);
    expect(gone.status).toBe(404);
    expect(gone.text).toMatch(/No site is hosted/);
    expect((await api(server, 'DELETE', `/web-apps/${appId}`, { token: server.alice })).status).toBe(404);
    expect((await api(server, 'POST', `/web-apps/${appId}/start`, { token: server.alice })).status).toBe(404);
  });

  it('restartDevelopmentEnvironment ends a running sleep 300 and keeps /workspace', async () => {
    const env = await call(client, 'createDevelopmentEnvironment', { chatTitle: 'lifecycle restart' });
    const id = env.id;
    const run = (command: string) => call(client, 'executeCommand', { developmentEnvironmentId: id, command });
    expect((await run('echo kept > /workspace/file.txt')).exitCode).toBe(0);
    const sleeping = await run('sleep 300');
    expect(sleeping.status).toBe('running');

    expect((await api(server, 'POST', `/development-environments/${id}/restart`, { token: server.bob })).status).toBe(404);
    const restarted = await call(client, 'restartDevelopmentEnvironment', { developmentEnvironmentId: id });
    expect(restarted).toMatchObject({ id, chatTitle: 'lifecycle restart' });
    const after = await call(client, 'inspectCommandExecution', { developmentEnvironmentId: id, commandExecutionId: sleeping.id });
    expect(after.status).toBe('exited');
    expect(after.stderr).toContain('restartDevelopmentEnvironment');
    expect((await run('cat /workspace/file.txt')).stdout).toBe('kept\n');
    expect((await run('ps')).stdout).not.toContain('sleep 300');
  });

  it('deleteDevelopmentEnvironment ends running commands and removes container, volume and rows; bob gets 404; twice answers 404', async () => {
    const env = await call(client, 'createDevelopmentEnvironment', { chatTitle: 'lifecycle delete' });
    const id = env.id;
    const sleeping = await call(client, 'executeCommand', { developmentEnvironmentId: id, command: 'sleep 300' });
    expect(sleeping.status).toBe('running');
    const byEnv = { label: [`${LABEL_ENVIRONMENT}=${id}`] };
    expect((await docker.listContainers({ all: true, filters: byEnv })).length).toBe(1);

    expect((await api(server, 'DELETE', `/development-environments/${id}`, { token: server.bob })).status).toBe(404);
    expect(await call(client, 'deleteDevelopmentEnvironment', { developmentEnvironmentId: id })).toEqual({ developmentEnvironmentId: id, deleted: true });
    expect(await docker.listContainers({ all: true, filters: byEnv })).toEqual([]);
    const { Volumes } = await docker.listVolumes({ filters: { name: [volumeName(id)] } });
    expect(Volumes ?? []).toEqual([]);
    expect((await call(client, 'getDevelopmentEnvironments', {})).developmentEnvironments.map((e: { id: string }) => e.id)).not.toContain(id);
    const rows = (await server.platform.db.get('SELECT COUNT(*) AS n FROM command_executions WHERE environment_id = ?', id)) as { n: number };
    expect(rows.n).toBe(0);
    expect((await api(server, 'DELETE', `/development-environments/${id}`, { token: server.alice })).status).toBe(404);
    expect((await api(server, 'GET', `/development-environments/${id}/commands-executions/${sleeping.id}`, { token: server.alice })).status).toBe(404);
  });
});
