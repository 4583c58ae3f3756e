import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const exec = promisify(execFile);

/**
 * `backyard serve --role`: a platform node and a data node, each with a home of its own, on one
 * PostgreSQL. The platform node answers the management API, MCP and the dashboard and no data API;
 * the data node answers the data API (REST, GraphQL, LiveQuery) and nothing of the platform's.
 */
describe.skipIf(!onPostgres)('a platform node and a data node with separate homes on one PostgreSQL', () => {
  const homes: string[] = [];
  let token: string;
  let platformNode: ServeProcess;
  let dataNode: ServeProcess;
  let app: { appId: string; restKey: string };
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
    const [platformHome, dataHome] = [makeHome(), makeHome()];
    homes.push(platformHome, dataHome);
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: envOf(platformHome, 'all')() })).stdout.trim();
    platformNode = new ServeProcess(await freePort(), token, envOf(platformHome, 'platform'));
    dataNode = new ServeProcess(await freePort(), token, envOf(dataHome, 'data'));
    await platformNode.start();
    await dataNode.serve();
    const made = await fetch(`${platformNode.url}/v1/backend-apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'split' }),
    });
    expect(made.status).toBe(201);
    app = (await made.json()) as { appId: string; restKey: string };
  }, 180_000);
  afterAll(async () => {
    for (const node of [platformNode, dataNode]) if (node?.running) await node.stop('SIGTERM');
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

  it('serves the management API, MCP, the dashboard and the git host on the platform node only', async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect((await get(`${platformNode.url}/v1/backend-apps`, auth)).status).toBe(200);
    expect((await get(`${dataNode.url}/v1/backend-apps`, auth)).status).toBe(404);
    expect((await get(`${dataNode.url}/mcp`, auth)).status).toBe(404);
    expect((await get(`${dataNode.url}/dashboard`)).status).toBe(404);
    expect((await get(`${dataNode.url}/git/alice/x.git/info/refs?service=git-upload-pack`)).status).toBe(404);
    expect((await get(`${platformNode.url}/dashboard`)).status).not.toBe(404);
    // The data node keeps no platform state of its own: no platform.db, no git repositories.
    expect(fs.existsSync(path.join(homes[1]!, 'platform.db'))).toBe(false);
    expect(fs.existsSync(path.join(homes[1]!, 'git'))).toBe(false);
  });
});
