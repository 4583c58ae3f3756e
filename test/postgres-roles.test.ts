import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const exec = promisify(execFile);

/** GET `rawPath` from a node on `port` with an explicit Host header (a hosted site's), as a browser would send it. */
function hostedPage(port: number, host: string, rawPath: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: rawPath, headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `backyard serve --role`: a platform node and two data nodes, each with a home of its own, on one
 * PostgreSQL. The platform node answers the management API, MCP and the dashboard and no data API;
 * the data nodes answer the data API (REST, GraphQL, LiveQuery) and nothing of the platform's, and
 * what is kept for an app through one (webhooks, job schedules) the other reads.
 */
describe.skipIf(!onPostgres)('a platform node and two data nodes with separate homes on one PostgreSQL', () => {
  const homes: string[] = [];
  let token: string;
  let platformNode: ServeProcess;
  let dataNode: ServeProcess;
  let otherDataNode: ServeProcess;
  let app: { appId: string; restKey: string; masterKey: string };
  const database = `roles_${Math.random().toString(36).slice(2, 10)}`;
  const databaseUrl = () => {
    const url = new URL(process.env.BACKYARD_TEST_DATABASE_URL!);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const envOf = (home: string, role: string) => () => stdioEnv(home, { BACKYARD_DATABASE_URL: databaseUrl(), BACKYARD_LOG_LEVEL: 'warn', BACKYARD_ROLE: role });
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers, redirect: 'manual' });
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    await pgQuery(`CREATE DATABASE ${database}`);
    const [platformHome, dataHome, otherDataHome] = [makeHome(), makeHome(), makeHome()];
    homes.push(platformHome, dataHome, otherDataHome);
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: envOf(platformHome, 'all')() })).stdout.trim();
    platformNode = new ServeProcess(await freePort(), token, envOf(platformHome, 'platform'));
    dataNode = new ServeProcess(await freePort(), token, envOf(dataHome, 'data'));
    otherDataNode = new ServeProcess(await freePort(), token, envOf(otherDataHome, 'data'));
    await platformNode.start();
    await Promise.all([dataNode.serve(), otherDataNode.serve()]);
    const made = await fetch(`${platformNode.url}/v1/backend-apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'split' }),
    });
    expect(made.status).toBe(201);
    const { appId, restKey } = (await made.json()) as { appId: string; restKey: string };
    const keys = (await exec(process.execPath, [CLI, 'app', 'keys', appId], { env: envOf(platformHome, 'platform')() })).stdout;
    app = { appId, restKey, masterKey: /^masterKey\t(.+)$/m.exec(keys)![1]! };
  }, 180_000);
  afterAll(async () => {
    for (const node of [platformNode, dataNode, otherDataNode]) if (node?.running) await node.stop('SIGTERM');
    for (const home of homes) removeHome(home);
    await pgQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('says its role at /healthz', async () => {
    expect(JSON.parse((await get(`${platformNode.url}/healthz`)).text)).toMatchObject({ service: 'backyard', role: 'platform' });
    expect(JSON.parse((await get(`${dataNode.url}/healthz`)).text)).toMatchObject({ service: 'backyard', role: 'data' });
  });

  it('serves the data API on the data node only, for an app made through the platform node', async () => {
    const headers = { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.restKey, 'content-type': 'application/json' };
    const created = await fetch(`${dataNode.url}/data/classes/Note`, { method: 'POST', headers, body: JSON.stringify({ text: 'on the data node' }) });
    expect(created.status).toBe(201);
    const graphql = await fetch(`${dataNode.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: '{ notes { count } }' }) });
    expect(await graphql.json()).toEqual({ data: { notes: { count: 1 } } });
    // The platform node has no data API over HTTP...
    expect((await get(`${platformNode.url}/data/classes/Note`, headers)).status).toBe(404);
    expect((await fetch(`${platformNode.url}/graphql`, { method: 'POST', headers, body: '{"query":"{ health }"}' })).status).toBe(404);
    // ...but callBackendAPI reaches the same data in process.
    const called = await fetch(`${platformNode.url}/v1/backend-apps/${app.appId}/call-backend-api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [{ method: 'GET', url: '/classes/Note' }] }),
    });
    expect(called.status).toBe(200);
    expect(JSON.stringify(await called.json())).toContain('on the data node');
  });

  it('keeps webhooks where every data node reads them', async () => {
    const master = { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey, 'content-type': 'application/json' };
    const hook = { functionName: 'greet', url: 'https://hooks.example.com/greet' };
    const registered = await fetch(`${dataNode.url}/data/hooks/functions`, { method: 'POST', headers: master, body: JSON.stringify(hook) });
    expect(registered.status).toBe(200);
    // Each node reads an app's webhooks again after a second at most (WEBHOOKS_RECHECK_MS); the other never held them.
    expect(await (await fetch(`${otherDataNode.url}/data/hooks/functions`, { headers: master })).json()).toEqual([hook]);
    expect(fs.existsSync(path.join(homes[1]!, 'apps', app.appId, 'hooks.json'))).toBe(false);

  });

  /** A management API call on the platform node. */
  const manage = async (method: string, apiPath: string, body?: unknown) => {
    const response = await fetch(`${platformNode.url}/v1${apiPath}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** Calls cloud function `name` through a data node until it answers `wanted` (deadline 20 s); the answers seen are returned. */
  const answersUntil = async (node: ServeProcess, name: string, wanted: unknown) => {
    const headers = { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.restKey, 'content-type': 'application/json' };
    let last: unknown;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      last = await (await fetch(`${node.url}/data/functions/${name}`, { method: 'POST', headers, body: '{}' })).json();
      if (JSON.stringify(last) === JSON.stringify(wanted)) return last;
    }
    return last;
  };

  it('runs cloud code deployed through the platform on both data nodes, serves its public files, and a rollback there too', async () => {
    const deployOf = (text: string) => ({
      changes: [
        { path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: `Parse.Cloud.define('which', () => '${text}');\nParse.Cloud.job('tick', () => 'ticked');\n` },
        { path: 'public/index.html', operation: 'write', writeMode: 'overwrite', data: `<p>${text}</p>` },
      ],
    });
    const first = await manage('POST', `/backend-apps/${app.appId}/cloud-code`, deployOf('first'));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    for (const node of [dataNode, otherDataNode]) expect(await answersUntil(node, 'which', { result: 'first' })).toEqual({ result: 'first' });
    const second = await manage('POST', `/backend-apps/${app.appId}/cloud-code`, deployOf('second'));
    expect(second.status).toBe(200);
    for (const node of [dataNode, otherDataNode]) expect(await answersUntil(node, 'which', { result: 'second' })).toEqual({ result: 'second' });
    // The data nodes' homes hold the tree they were given, not the platform's.
    expect(fs.readFileSync(path.join(homes[2]!, 'apps', app.appId, 'cloud', 'cloud', 'main.js'), 'utf8')).toContain("'second'");

    const versions = (await manage('GET', `/backend-apps/${app.appId}/cloud-code/versions`)).body.versions as Array<{ version: number; changes: string }>;
    const firstVersion = versions.find((v) => v.changes.includes('main.js') && v.version < versions[0]!.version)!.version;
    expect((await manage('POST', `/backend-apps/${app.appId}/cloud-code/rollback`, { version: firstVersion })).status).toBe(200);
    for (const node of [dataNode, otherDataNode]) expect(await answersUntil(node, 'which', { result: 'first' })).toEqual({ result: 'first' });

    // The site of the app (activated through the platform) is served by a data node from the version it was given.
    const activated = await manage('POST', `/backend-apps/${app.appId}/activate-web-hosting`);
    expect(activated.status, JSON.stringify(activated.body)).toBe(200);
    const siteHost = new URL(activated.body.publicWebHostingURL as string).hostname;
    expect(await hostedPage(otherDataNode.port, siteHost, '/index.html')).toEqual({ status: 200, text: '<p>first</p>' });

    // A job schedule made through one data node is known to the store every data node reads.
    const master = { 'X-Parse-Application-Id': app.appId, 'X-Parse-Master-Key': app.masterKey, 'content-type': 'application/json' };
    const scheduled = await fetch(`${dataNode.url}/data/cloud_code/jobs`, {
      method: 'POST',
      headers: master,
      body: JSON.stringify({ job_schedule: { jobName: 'tick', repeatMinutes: 60, params: '{}', description: 'hourly' } }),
    });
    expect(scheduled.status, await scheduled.clone().text()).toBe(201);
    expect(await pgQuery('SELECT app_id FROM backyard.app_job_schedules', [], databaseUrl())).toEqual([{ app_id: app.appId }]);
  });

  it('serves a file uploaded through one data node from the other, and loses no acknowledged write when a data node is killed', async () => {
    const headers = { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.restKey };
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    // With the master key: Parse's default `fileUpload` refuses uploads without a user.
    const uploaded = await fetch(`${dataNode.url}/data/files/blob.bin`, { method: 'POST', headers: { ...headers, 'X-Parse-Master-Key': app.masterKey, 'content-type': 'application/octet-stream' }, body: bytes });
    expect(uploaded.status).toBe(201);
    const { url } = (await uploaded.json()) as { url: string };
    const downloaded = await fetch(url.replace(dataNode.url, otherDataNode.url));
    expect(downloaded.status).toBe(200);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(bytes)).toBe(true);

    // Writes through one node until it is killed: every write it acknowledged is read through the other.
    const acknowledged: string[] = [];
    const writing = (async () => {
      for (let i = 0; ; i++) {
        try {
          const res = await fetch(`${dataNode.url}/data/classes/Ledger`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ i }) });
          if (res.status !== 201) return;
          acknowledged.push(((await res.json()) as { objectId: string }).objectId);
        } catch {
          return; // the node is gone
        }
      }
    })();
    while (acknowledged.length < 20) await new Promise((r) => setTimeout(r, 20));
    await dataNode.stop('SIGKILL');
    await writing;
    const read = await fetch(`${otherDataNode.url}/data/classes/Ledger?limit=1000`, { headers });
    const ids = new Set(((await read.json()) as { results: Array<{ objectId: string }> }).results.map((r) => r.objectId));
    expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
    expect((await fetch(url.replace(dataNode.url, otherDataNode.url))).status).toBe(200);
  });

  it('serves the management API, MCP, the dashboard and the git host on the platform node only', async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect((await get(`${platformNode.url}/v1/backend-apps`, auth)).status).toBe(200);
    expect((await get(`${otherDataNode.url}/v1/backend-apps`, auth)).status).toBe(404);
    expect((await get(`${otherDataNode.url}/mcp`, auth)).status).toBe(404);
    expect((await get(`${otherDataNode.url}/dashboard`)).status).toBe(404);
    expect((await get(`${otherDataNode.url}/git/alice/x.git/info/refs?service=git-upload-pack`)).status).toBe(404);
    expect((await get(`${platformNode.url}/dashboard`)).status).not.toBe(404);
    // The data nodes keep no platform state of their own: no platform.db, no git repositories.
    for (const home of homes.slice(1)) {
      expect(fs.existsSync(path.join(home, 'platform.db'))).toBe(false);
      expect(fs.existsSync(path.join(home, 'git'))).toBe(false);
    }
  });
});
