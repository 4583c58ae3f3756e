/**
 * Web Apps and deployments, the whole run through an MCP client as an
 * assistant does it: real `git` pushes to the built-in git host, real image builds and containers
 * on the Docker engine, and the page fetched through Backyard's reverse proxy at `appURL`.
 */
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LABEL_DEPLOYMENT } from '../src/platform/webapps/labels.js';
import { OFFLINE_IMAGE } from '../src/platform/devenvs/offlineImage.js';
import { SKIP_DOCKER, docker } from './helpers/devenvs.js';
import type { AnyMcpClient } from './helpers/mcpClients.js';
import type { TestServer } from './helpers/server.js';
import { WEBAPP_ENV, call, commit, fetchApp, push, sampleApp, settle, webAppSuite } from './helpers/webapps.js';

const SECRET_VALUE = 'value-that-must-never-come-back';

describe.skipIf(SKIP_DOCKER)('a Web App deployed from the built-in git host, through MCP', () => {
  let server: TestServer;
  let client: AnyMcpClient;
  let work: string;
  let repo: string;
  let appId: string;
  let appURL: string;
  /** Deployment ids in the order they became active. */
  const actives: string[] = [];

  const containersOf = (deploymentId: string) => docker.listContainers({ all: true, filters: { label: [`${LABEL_DEPLOYMENT}=${deploymentId}`] } });

  const suite = webAppSuite(WEBAPP_ENV, 'backyard-webapps-');
  beforeAll(() => {
    ({ server, client, work } = suite);
    repo = path.join(work, 'hello');
  });

  it('createWebApp answers 201 with the app deploying; the first deployment becomes active and appURL serves the page', async () => {
    const first = await commit(repo, sampleApp('<h1>Hello, first</h1>\n'), 'first');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await push(server.url, repo, 'alice', 'hello', token);

    const created = await call(client, 'createWebApp', {
      appName: 'hello',
      repositoryOwnerLogin: 'alice',
      repositoryName: 'hello',
      environmentVariables: [
        { key: 'GREETING', value: 'first greeting' },
        { key: 'API_SECRET', value: SECRET_VALUE },
      ],
      autoDeploy: true,
    });
    expect(JSON.stringify(created)).not.toContain(SECRET_VALUE);
    expect(created).toMatchObject({
      appName: 'hello',
      appURL: `http://hello.localhost:${new URL(server.url).port}/`,
      dashboardURL: expect.stringContaining(`/dashboard/web-apps/${created.appId}`),
      repositoryOwnerLogin: 'alice',
      repositoryName: 'hello',
      branchName: 'main',
      rootDirPath: '.',
      environmentVariablesKeys: ['GREETING', 'API_SECRET'],
      healthCheckPath: '/',
      autoDeploy: true,
      status: 'deploying',
      error: '',
      lastDeployment: { id: expect.any(String), commitSHA: '', status: 'queued', error: '', createdAt: expect.any(String) },
    });
    expect(created.activeDeployment).toBeUndefined();
    appId = created.appId;
    appURL = created.appURL;

    const done = await settle(client, appId, created.lastDeployment.id);
    expect(done).toMatchObject({ status: 'active', commitSHA: first, error: '' });
    expect(done.buildLogs.map((r: { message: string }) => r.message).join('\n')).toMatch(/Step 1\/\d+ : FROM backyard\/devenv:offline/);
    expect(done.buildLogs.every((r: { source: string; time: string }) => r.source === 'build' && /Z$/.test(r.time))).toBe(true);
    expect(done.containersLogs.map((r: { message: string }) => r.message)).toContain('serving on 8080');
    actives.push(done.id);

    const page = await fetchApp(appURL);
    expect(page.status).toBe(200);
    expect(page.text).toBe('<h1>Hello, first</h1>\n');
    expect((await fetchApp(appURL, '/greeting.txt')).text).toBe('first greeting');

    const app = await call(client, 'getWebApp', { appId });
    expect(app).toMatchObject({ status: 'running', port: 8080, error: '', lastDeployment: { id: done.id, status: 'active' }, activeDeployment: { id: done.id, status: 'active', commitSHA: first } });
    expect(JSON.stringify(app)).not.toContain(SECRET_VALUE);
    // Published on loopback only.
    const [container] = await containersOf(done.id);
    expect(container?.Ports.filter((p) => p.PublicPort).map((p) => p.IP)).toEqual(['127.0.0.1']);
  });

  it('the proxy reaches the active container on its network address, which is dropped the moment the container dies', async () => {
    const addresses = server.platform.services.webApps.addresses;
    const active = actives.at(-1)!;
    const [container] = await containersOf(active);
    const ipOf = async () => Object.values((await docker.getContainer(container!.Id).inspect()).NetworkSettings.Networks).map((n) => n.IPAddress).find(Boolean);
    await addresses.settle();
    const ip = await ipOf();
    expect(addresses.get(active)).toEqual({ ip, port: 8080 });
    // The address is the app's own: the page answers there directly.
    expect(await (await fetch(`http://${ip}:8080/`)).text()).toBe('<h1>Hello, first</h1>\n');

    // Killed, its entry goes with the die event; started again, it comes back with the container's address.
    await docker.getContainer(container!.Id).kill();
    await expect.poll(() => addresses.get(active), { timeout: 30_000, interval: 10 }).toBeUndefined();
    await docker.getContainer(container!.Id).start();
    await expect.poll(() => addresses.get(active), { timeout: 30_000, interval: 10 }).toBeDefined();
    expect(addresses.get(active)).toEqual({ ip: await ipOf(), port: 8080 });
    // httpd may take a moment to listen again after the restart.
    let page = await fetchApp(appURL);
    await expect.poll(async () => (page = await fetchApp(appURL)).status, { timeout: 30_000, interval: 100 }).toBe(200);
    expect(page.text).toBe('<h1>Hello, first</h1>\n');
  });

  it('getWebApps lists the app, and finds it by name', async () => {
    expect(await call(client, 'getWebApps', {})).toEqual({ webApps: [{ appId, appName: 'hello' }] });
    expect(await call(client, 'getWebApps', { appName: 'hello' })).toEqual({ webApps: [{ appId, appName: 'hello' }] });
    expect(await call(client, 'getWebApps', { appName: 'nope' })).toEqual({ webApps: [] });
  });

  it('updateWebApp with a new variable starts a deployment that serves it, with no gap; the old one is superseded and removed', async () => {
    let stop = false;
    const statuses: number[] = [];
    const traffic = (async () => {
      while (!stop) statuses.push((await fetchApp(appURL, '/greeting.txt')).status);
    })();
    const updated = await call(client, 'updateWebApp', { appId, setEnvironmentVariables: [{ key: 'GREETING', value: 'second greeting' }] });
    expect(updated.status).toBe('deploying');
    expect(updated.lastDeployment.id).not.toBe(actives[0]);
    expect(updated.activeDeployment.id).toBe(actives[0]);
    expect(updated.environmentVariablesKeys).toEqual(['GREETING', 'API_SECRET']);
    const done = await settle(client, appId, updated.lastDeployment.id);
    expect(done.status).toBe('active');
    await server.platform.services.webApps.idle();
    stop = true;
    await traffic;
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect((await fetchApp(appURL, '/greeting.txt')).text).toBe('second greeting');
    const before = await call(client, 'getDeployment', { appId, deploymentId: actives[0] });
    expect(before).toMatchObject({ status: 'superseded', buildLogs: [], containersLogs: [] });
    expect(await containersOf(actives[0]!)).toEqual([]);
    // Its container output was kept when it went.
    const kept = await call(client, 'getDeployment', { appId, deploymentId: actives[0], includeContainersLogs: true, containersLogsLimit: 1 });
    expect(kept.containersLogs).toHaveLength(1);
    actives.push(done.id);
  });

  it('autoDeploy: a push to the branch starts a deployment at once, which serves the new commit', async () => {
    const second = await commit(repo, { 'www/index.html': '<h1>Hello, second</h1>\n' }, 'second');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await push(server.url, repo, 'alice', 'hello', token);
    const app = await call(client, 'getWebApp', { appId });
    expect(app.status).toBe('deploying');
    expect(app.lastDeployment.id).not.toBe(actives.at(-1));
    const done = await settle(client, appId, app.lastDeployment.id);
    expect(done).toMatchObject({ status: 'active', commitSHA: second });
    expect((await fetchApp(appURL)).text).toBe('<h1>Hello, second</h1>\n');
    actives.push(done.id);
  });

  it('a broken Dockerfile fails while building; buildLogs say why and the previous deployment keeps serving', async () => {
    const broken = await commit(repo, { Dockerfile: `${sampleApp('').Dockerfile}RUN echo about to fail && exit 3\n` }, 'broken');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await push(server.url, repo, 'alice', 'hello', token);
    const app = await call(client, 'getWebApp', { appId });
    const done = await settle(client, appId, app.lastDeployment.id);
    expect(done.status).toBe('failed');
    expect(done.commitSHA).toBe(broken);
    expect(done.error).toMatch(/^Building the image failed: The command '\/bin\/sh -c echo about to fail && exit 3' returned a non-zero code: 3/);
    const messages = done.buildLogs.map((r: { message: string }) => r.message);
    expect(messages).toContain('about to fail');
    expect(messages.at(-1)).toMatch(/returned a non-zero code: 3/);
    // The default limit is the last 15 rows, in time order.
    const limited = await call(client, 'getDeployment', { appId, deploymentId: done.id, includeBuildLogs: true });
    expect(limited.buildLogs.length).toBeLessThanOrEqual(15);
    expect(limited.buildLogs.at(-1).message).toBe(messages.at(-1));
    expect(limited.buildLogs.map((r: { time: string }) => r.time)).toEqual([...limited.buildLogs.map((r: { time: string }) => r.time)].sort());

    const after = await call(client, 'getWebApp', { appId });
    expect(after).toMatchObject({ status: 'failed', error: done.error, lastDeployment: { id: done.id, status: 'failed' }, activeDeployment: { id: actives.at(-1) } });
    expect((await fetchApp(appURL)).text).toBe('<h1>Hello, second</h1>\n');
  });

  it('a health check that never passes fails while starting, with the container logs, and the previous deployment keeps serving', async () => {
    const fixed = await commit(repo, { Dockerfile: sampleApp('').Dockerfile! }, 'fixed');
    const { token } = await call(client, 'createRepohostInstallationAccessToken', {});
    await push(server.url, repo, 'alice', 'hello', token);
    const fixedDeployment = await settle(client, appId, (await call(client, 'getWebApp', { appId })).lastDeployment.id);
    expect(fixedDeployment).toMatchObject({ status: 'active', commitSHA: fixed });
    actives.push(fixedDeployment.id);

    const updated = await call(client, 'updateWebApp', { appId, healthCheckPath: '/healthz' });
    expect(updated.healthCheckPath).toBe('/healthz');
    const done = await settle(client, appId, updated.lastDeployment.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^Starting the container failed: The health check did not pass: GET \/healthz on port 8080 got no 2xx or 3xx answer within 4 s \(last try: it answered status 404\)/);
    expect(done.containersLogs.map((r: { message: string }) => r.message)).toContain('serving on 8080');
    expect(done.containersLogs.some((r: { message: string }) => /response:404/.test(r.message))).toBe(true);
    await server.platform.services.webApps.idle();
    expect(await containersOf(done.id)).toEqual([]);

    const after = await call(client, 'getWebApp', { appId });
    expect(after).toMatchObject({ status: 'failed', activeDeployment: { id: fixedDeployment.id, status: 'active' } });
    expect((await fetchApp(appURL)).status).toBe(200);

    // Setting it back deploys again and the app runs.
    const back = await call(client, 'updateWebApp', { appId, healthCheckPath: '/' });
    expect(await settle(client, appId, back.lastDeployment.id)).toMatchObject({ status: 'active' });
    expect((await call(client, 'getWebApp', { appId })).status).toBe('running');
  });

  it('startDeployment deploys the branch head again', async () => {
    const started = await call(client, 'startDeployment', { appId });
    expect(started).toEqual({ id: expect.any(String), commitSHA: '', createdAt: expect.any(String), status: 'queued', error: '' });
    expect(await settle(client, appId, started.id)).toMatchObject({ status: 'active' });
    await server.platform.services.webApps.idle();
    // Exactly one container serves the app.
    const running = await docker.listContainers({ filters: { label: [`dev.backyard.webapp.id=${appId}`] } });
    expect(running).toHaveLength(1);
  });

  it('the proxy forwards methods, bodies, query strings and headers, and answers 503 while no container is up', async () => {
    const post = await fetchApp(appURL, '/cgi-bin/echo.cgi?x=1&y=two', { method: 'POST', body: 'name=value&more=1', headers: { 'x-custom': 'kept' } });
    expect(post.status).toBe(200);
    const host = new URL(appURL).host;
    expect(post.text).toBe(
      ['method=POST', 'query=x=1&y=two', `host=${host}`, 'forwarded-for=127.0.0.1', `forwarded-host=${host}`, 'forwarded-proto=http', 'custom=kept', 'body=name=value&more=1', ''].join('\n'),
    );
    // busybox httpd answers POST to a static file with 501 (not a CGI): the proxy passes the app's answers on.
    expect((await fetchApp(appURL, '/index.html', { method: 'POST', body: 'a=1' })).status).toBe(501);
    expect((await fetchApp(appURL, '/missing.html')).status).toBe(404);
    const head = await fetchApp(appURL, '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');

    const other = await call(client, 'createWebApp', { appName: 'slow', repositoryOwnerLogin: 'alice', repositoryName: 'hello', healthCheckPath: '/missing' });
    const waiting = await fetchApp(other.appURL);
    expect(waiting.status).toBe(503);
    expect(waiting.headers['content-type']).toMatch(/^text\/html/);
    expect(waiting.text).toMatch(/slow is not running yet/);
    await settle(client, other.appId, other.lastDeployment.id);
    const failed = await fetchApp(other.appURL);
    expect(failed.status).toBe(503);
    expect(failed.text).toMatch(/last deployment failed/);
  });

  it('WebSocket upgrades are proxied to the container, both ways', async () => {
    // A tiny server with busybox nc: plain requests get 200 (the health check); an upgrade gets 101, then an echo.
    const script = [
      '#!/bin/sh',
      'read -r line',
      'upgrade=no',
      'while read -r h; do h=$(printf %s "$h" | tr -d "\r"); [ -z "$h" ] && break; case "$h" in [Uu]pgrade:*) upgrade=yes;; esac; done',
      'if [ $upgrade = yes ]; then printf "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"; exec cat; fi',
      'printf "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"',
      '',
    ].join('\n');
    const sockets = path.join(work, 'sockets');
    await commit(sockets, { Dockerfile: `FROM ${OFFLINE_IMAGE}\nCOPY ws.cgi /ws.sh\nEXPOSE 8080\nCMD ["nc", "-ll", "-p", "8080", "-e", "/ws.sh"]\n`, 'ws.cgi': script });
    await push(server.url, sockets, 'alice', 'sockets', server.alice);
    const created = await call(client, 'createWebApp', { appName: 'sockets', repositoryOwnerLogin: 'alice', repositoryName: 'sockets' });
    expect(await settle(client, created.appId, created.lastDeployment.id)).toMatchObject({ status: 'active' });

    const url = new URL(created.appURL);
    const socket = net.connect(Number(url.port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.write(`GET /chat HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    await expect.poll(() => received, { timeout: 5000 }).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    received = '';
    socket.write('ping through the tunnel\n');
    await expect.poll(() => received, { timeout: 5000 }).toBe('ping through the tunnel\n');
    socket.destroy();

    // Another host's upgrade is refused.
    const refused = net.connect(Number(url.port), '127.0.0.1');
    const closed = new Promise((resolve) => refused.on('close', resolve));
    refused.write(`GET / HTTP/1.1\r\nHost: localhost:${url.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
    await closed;
  });
});
