/**
 * Web Apps, what callers may get wrong, over the REST API: bad names, ports and
 * paths, a missing repository, branch or Dockerfile (400 with a text that says which), unknown ids
 * and other accounts' apps (404), updates that change nothing, and the one subdomain namespace
 * shared with hosted Backend Apps.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_DOCKER, requireDocker } from './helpers/devenvs.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';
import { WEBAPP_ENV, commit, push, removeWebApps, sampleApp } from './helpers/webapps.js';

describe.skipIf(SKIP_DOCKER)('Web App input checks (REST)', () => {
  let server: TestServer;
  let work: string;
  let appId: string;
  let firstDeployment: string;
  const as = (token: string) => ({
    get: (p: string) => api(server, 'GET', p, { token }),
    post: (p: string, body: unknown = {}) => api(server, 'POST', p, { token, body }),
    put: (p: string, body: unknown) => api(server, 'PUT', p, { token, body }),
  });
  const alice = () => as(server.alice);
  const bob = () => as(server.bob);
  const base = { repositoryOwnerLogin: 'alice', repositoryName: 'site' };

  beforeAll(async () => {
    await requireDocker();
    server = await startTestServer(WEBAPP_ENV);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-webapps-input-'));
    const dir = path.join(work, 'site');
    await commit(dir, { ...sampleApp('<p>site</p>\n'), 'nested/app/Dockerfile': sampleApp('').Dockerfile!, 'nested/app/www/index.html': '<p>nested</p>\n' });
    await push(server.url, dir, 'alice', 'site', server.alice);
    await push(server.url, dir, 'alice', 'site', server.alice, 'main');
    await commit(path.join(work, 'bobs'), sampleApp('<p>bob</p>\n'));
    await push(server.url, path.join(work, 'bobs'), 'bob', 'site', server.bob);
  });
  afterAll(async () => {
    if (server) {
      await server.platform.services.webApps.idle();
      await server.close();
      await removeWebApps(server.home);
    }
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('creates an app (201) from a folder of the repository', async () => {
    const response = await alice().post('/web-apps', { appName: 'site', ...base, rootDirPath: './nested/app/', port: 8080, healthCheckPath: '/index.html' });
    expect(response.status, response.text).toBe(201);
    const app = response.json() as Record<string, any>;
    expect(app).toMatchObject({ appName: 'site', rootDirPath: 'nested/app', port: 8080, healthCheckPath: '/index.html', autoDeploy: false, environmentVariablesKeys: [], replicas: 1 });
    appId = app.appId;
    firstDeployment = app.lastDeployment.id;
  });

  it.each([
    ['Site', 'is not a DNS label'],
    ['my_site', 'is not a DNS label'],
    ['-site', 'is not a DNS label'],
    ['site-', 'is not a DNS label'],
    ['a'.repeat(64), 'appName must be at most 63 characters'],
  ])('refuses the name %j (400)', async (appName, text) => {
    const response = await alice().post('/web-apps', { ...base, appName });
    expect(response.status).toBe(400);
    expect(response.contentType).toMatch(/^text\/plain/);
    expect(response.text).toContain(text);
  });

  it.each([0, 65536, 80.5, '8080', -1])('refuses the port %j (400)', async (port) => {
    const response = await alice().post('/web-apps', { ...base, appName: 'ports', port });
    expect(response.status).toBe(400);
    expect(response.text).toMatch(/port must be/);
  });

  it('refuses a name already used in the account, other fields that are wrong, and says what to do', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ appName: 'site' }, /A Web App named "site" already exists in this account/],
      [{ appName: 'x', repositoryName: 'nope' }, /The repository alice\/nope does not exist on the built-in git host\. Push it first/],
      [{ appName: 'x', repositoryOwnerLogin: 'bob', repositoryName: 'site' }, /The repository bob\/site does not exist on the built-in git host/],
      [{ appName: 'x', branchName: 'develop' }, /The branch "develop" does not exist in alice\/site/],
      [{ appName: 'x', branchName: 'bad..name' }, /is not a valid git branch name/],
      [{ appName: 'x', rootDirPath: 'www' }, /There is no Dockerfile at www\/Dockerfile on the branch "main" of alice\/site/],
      [{ appName: 'x', rootDirPath: 'nested/../..' }, /rootDirPath "nested\/\.\.\/\.\." leaves the repository/],
      [{ appName: 'x', healthCheckPath: 'health' }, /healthCheckPath "health" is not a path/],
      [{ appName: 'x', environmentVariables: [{ key: 'A', value: '1' }, { key: 'A', value: '2' }] }, /environmentVariables names the key "A" twice/],
      [{ appName: 'x', environmentVariables: [{ key: 'NOT-OK', value: '1' }] }, /environmentVariables\[0\]\.key must be letters/],
      [{ appName: 'x', extra: true }, /Unknown field "extra"/],
    ];
    for (const [fields, text] of cases) {
      const response = await alice().post('/web-apps', { ...base, ...fields });
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(response.text).toMatch(text);
    }
    expect((await alice().get('/web-apps')).json()).toEqual([{ appId, appName: 'site' }]);
  });

  it('needs a token (401)', async () => {
    expect((await api(server, 'GET', '/web-apps')).status).toBe(401);
    expect((await api(server, 'POST', '/web-apps', { body: { appName: 'x', ...base } })).status).toBe(401);
  });

  it('answers 404 for unknown ids and for another account\'s app, whatever the operation', async () => {
    // Unknown to alice, and alice's app for bob: the same 404.
    for (const [client, id] of [[alice(), 'no-such-app'], [bob(), appId]] as const) {
      expect((await client.get(`/web-apps/${id}`)).status).toBe(404);
      expect((await client.put(`/web-apps/${id}`, { autoDeploy: true })).status).toBe(404);
      expect((await client.post(`/web-apps/${id}/deployments`)).status).toBe(404);
      expect((await client.get(`/web-apps/${id}/deployments/${firstDeployment}`)).status).toBe(404);
    }
    const unknown = await alice().get('/web-apps/no-such-app');
    expect(unknown.contentType).toMatch(/^text\/plain/);
    expect(unknown.text).toContain('This account has no Web App with the id "no-such-app"');
    expect((await alice().get(`/web-apps/${appId}`)).json()).toMatchObject({ autoDeploy: false });
    const unknownDeployment = await alice().get(`/web-apps/${appId}/deployments/nope`);
    expect(unknownDeployment.status).toBe(404);
    expect(unknownDeployment.text).toContain('has no deployment with the id "nope"');
    expect((await bob().get('/web-apps')).json()).toEqual([]);
    expect((await bob().get('/web-apps?app-name=site')).json()).toEqual([]);
    expect((await alice().get('/web-apps?app-name=site')).json()).toEqual([{ appId, appName: 'site' }]);
  });

  it('names are per account but subdomains are global: bob\'s "site" answers at site-2', async () => {
    const response = await bob().post('/web-apps', { appName: 'site', repositoryOwnerLogin: 'bob', repositoryName: 'site' });
    expect(response.status, response.text).toBe(201);
    expect((response.json() as { appURL: string }).appURL).toBe(`http://site-2.localhost:${new URL(server.url).port}/`);
    // A deployment of alice's app is not reachable through bob's app id either.
    const bobsApp = (response.json() as { appId: string }).appId;
    expect((await bob().get(`/web-apps/${bobsApp}/deployments/${firstDeployment}`)).status).toBe(404);
  });

  it('shares one subdomain namespace with hosted Backend Apps, in both orders', async () => {
    const port = new URL(server.url).port;
    const shop = (await alice().post('/backend-apps', { appName: 'shop' })).json() as { appId: string };
    expect((await alice().post(`/backend-apps/${shop.appId}/activate-web-hosting`)).json()).toEqual({ publicWebHostingURL: `http://shop.localhost:${port}/` });
    const web = await alice().post('/web-apps', { appName: 'shop', ...base });
    expect((web.json() as { appURL: string }).appURL).toBe(`http://shop-2.localhost:${port}/`);

    const blogWeb = await alice().post('/web-apps', { appName: 'blog', ...base });
    expect((blogWeb.json() as { appURL: string }).appURL).toBe(`http://blog.localhost:${port}/`);
    const blog = (await alice().post('/backend-apps', { appName: 'blog' })).json() as { appId: string };
    expect((await alice().post(`/backend-apps/${blog.appId}/activate-web-hosting`)).json()).toEqual({ publicWebHostingURL: `http://blog-2.localhost:${port}/` });
    // The database refuses a clash even if code forgot to check.
    await expect(server.platform.db.run("UPDATE backend_apps SET hosting_subdomain = 'blog' WHERE app_id = ?", blog.appId)).rejects.toThrow(/already serves a Web App/);
  });

  it('updateWebApp changes only what is sent; autoDeploy alone and no-op changes start no deployment', async () => {
    const before = (await alice().get(`/web-apps/${appId}`)).json() as Record<string, any>;
    const auto = await alice().put(`/web-apps/${appId}`, { autoDeploy: true });
    expect(auto.status).toBe(200);
    expect(auto.json()).toMatchObject({ autoDeploy: true, lastDeployment: { id: before.lastDeployment.id }, port: 8080, rootDirPath: 'nested/app' });
    const same = await alice().put(`/web-apps/${appId}`, { port: 8080, rootDirPath: 'nested/app/', healthCheckPath: '/index.html', removeEnvironmentVariablesKeys: ['NOT_SET'] });
    expect((same.json() as Record<string, any>).lastDeployment.id).toBe(before.lastDeployment.id);

    const withVars = (await alice().put(`/web-apps/${appId}`, { setEnvironmentVariables: [{ key: 'A', value: '1' }, { key: 'B', value: '2' }] })).json() as Record<string, any>;
    expect(withVars.environmentVariablesKeys).toEqual(['A', 'B']);
    expect(withVars.lastDeployment.id).not.toBe(before.lastDeployment.id);
    const removed = (await alice().put(`/web-apps/${appId}`, { removeEnvironmentVariablesKeys: ['A'] })).json() as Record<string, any>;
    expect(removed.environmentVariablesKeys).toEqual(['B']);
    const sameValue = (await alice().put(`/web-apps/${appId}`, { setEnvironmentVariables: [{ key: 'B', value: '2' }] })).json() as Record<string, any>;
    expect(sameValue.lastDeployment.id).toBe(removed.lastDeployment.id);
  });

  it('updateWebApp refuses bad values and changes nothing then', async () => {
    const before = (await alice().get(`/web-apps/${appId}`)).json() as Record<string, any>;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ branchName: 'gone' }, /The branch "gone" does not exist in alice\/site/],
      [{ rootDirPath: 'www' }, /There is no Dockerfile at www\/Dockerfile/],
      [{ port: 0 }, /port must be at least 1/],
      [{ replicas: 0 }, /replicas must be at least 1/],
      [{ replicas: 11 }, /replicas must be at most 10/],
      [{ replicas: 1.5 }, /replicas must be an integer/],
      [{ healthCheckPath: 'x' }, /is not a path/],
      [{ setEnvironmentVariables: [{ key: 'C', value: '1' }], removeEnvironmentVariablesKeys: ['C'] }, /The key "C" is in both/],
    ];
    for (const [fields, text] of cases) {
      const response = await alice().put(`/web-apps/${appId}`, fields);
      expect(response.status, JSON.stringify(fields)).toBe(400);
      expect(response.text).toMatch(text);
    }
    // Settings only: the app's first deployment may still be moving on in the background meanwhile.
    const settings = (app: Record<string, any>) => {
      const { branchName, rootDirPath, port, healthCheckPath, environmentVariablesKeys, autoDeploy, replicas } = app;
      return { branchName, rootDirPath, port, healthCheckPath, environmentVariablesKeys, autoDeploy, replicas };
    };
    expect(settings((await alice().get(`/web-apps/${appId}`)).json() as Record<string, any>)).toEqual(settings(before));
  });

  it('never answers environment variable values', async () => {
    await alice().put(`/web-apps/${appId}`, { setEnvironmentVariables: [{ key: 'TOKEN', value: 'sekret-value-123' }] });
    for (const p of [`/web-apps/${appId}`, '/web-apps']) expect((await alice().get(p)).text).not.toContain('sekret-value-123');
  });
});

describe('Web Apps when Docker is not reachable', () => {
  let server: TestServer;
  let work: string;
  beforeAll(async () => {
    server = await startTestServer({ ...WEBAPP_ENV, DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-webapps-nodocker-'));
    await commit(path.join(work, 'site'), sampleApp('<p>site</p>\n'));
    await push(server.url, path.join(work, 'site'), 'alice', 'site', server.alice);
  });
  afterAll(async () => {
    await server?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('accepts the app, and its deployment fails at the build saying that Docker is not reachable and what to do', async () => {
    const created = await api(server, 'POST', '/web-apps', { token: server.alice, body: { appName: 'site', repositoryOwnerLogin: 'alice', repositoryName: 'site' } });
    expect(created.status).toBe(201);
    const app = created.json() as Record<string, any>;
    await server.platform.services.webApps.idle();
    const deployment = (await api(server, 'GET', `/web-apps/${app.appId}/deployments/${app.lastDeployment.id}?includeBuildLogs=true&includeContainersLogs=true`, { token: server.alice })).json() as Record<string, any>;
    expect(deployment).toMatchObject({ status: 'failed', commitSHA: expect.stringMatching(/^[0-9a-f]{40}$/), buildLogs: [], containersLogs: [] });
    expect(deployment.error).toBe(
      'Building the image failed: Docker is not reachable at unix:///nonexistent/docker.sock (ENOENT). Start the Docker engine, then deploy again with startDeployment.',
    );
    const after = (await api(server, 'GET', `/web-apps/${app.appId}`, { token: server.alice })).json() as Record<string, any>;
    expect(after).toMatchObject({ status: 'failed', error: deployment.error });
  });
});
