/**
 * Cloud code versions: each deploy keeps the tree as a new version in the platform store,
 * getCloudCodeVersions lists them and rollbackCloudCode puts an earlier one back as a new version
 * (the function answers the old code again through the data API). Through the REST API, an MCP
 * client and the dashboard's cloud code page, on SQLite and (vitest.postgres.config.ts) PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackTree } from '../src/platform/backendapps/cloudCode/archive.js';
import { MAX_VERSIONS } from '../src/platform/backendapps/cloudCode/versions.js';
import { modernHttpClient } from './helpers/mcpClients.js';
import { api, dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

type App = { appId: string; apiURL: string; restKey: string };
type Version = { version: number; createdAt: string; changes: string; active: boolean };
type Change = { path: string; operation: 'write' | 'delete'; writeMode?: 'overwrite' | 'append'; data?: string };

let appCount = 0;
const createApp = async (token = server.alice): Promise<App> => {
  const res = await api(server, 'POST', '/backend-apps', { token, body: { appName: `versions-${++appCount}` } });
  expect(res.status, res.text).toBe(201);
  return res.json() as App;
};
const write = (p: string, data: string, writeMode: 'overwrite' | 'append' = 'overwrite'): Change => ({ path: p, operation: 'write', writeMode, data });

const deploy = async (appId: string, changes: Change[]) => {
  const res = await api(server, 'POST', `/backend-apps/${appId}/cloud-code`, { token: server.alice, body: { changes } });
  expect(res.status, res.text).toBe(200);
  return res.json() as { message: string; warnings: string[] };
};
const versionsOf = async (appId: string, token = server.alice) => api(server, 'GET', `/backend-apps/${appId}/cloud-code/versions`, { token });
const listed = async (appId: string): Promise<Version[]> => {
  const res = await versionsOf(appId);
  expect(res.status, res.text).toBe(200);
  return (res.json() as { versions: Version[] }).versions;
};
const rollback = (appId: string, version: unknown, token = server.alice) =>
  api(server, 'POST', `/backend-apps/${appId}/cloud-code/rollback`, { token, body: { version } });

const onDisk = (appId: string, treePath: string) => path.join(server.home, 'apps', appId, 'cloud', ...treePath.split('/'));

/** Calls a cloud function through the app's data API over HTTP, with its REST key. */
async function callFunction(app: App, name: string): Promise<unknown> {
  const response = await fetch(`${app.apiURL}/functions/${name}`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.restKey, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { result?: unknown };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.result;
}

const answerJs = (text: string) => `Parse.Cloud.define('answer', () => ${JSON.stringify(text)});\n`;

describe('getCloudCodeVersions and rollbackCloudCode over REST', () => {
  let app: App;
  beforeAll(async () => {
    app = await createApp();
  });

  it('a new app has its starting files as version 1, active', async () => {
    const versions = await listed(app.appId);
    expect(versions).toEqual([{ version: 1, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), changes: 'the starting files: cloud/main.js, public/index.html', active: true }]);
  });

  it('each deploy is a new version, newest first and active; rollback puts the old files back as a new version and the function answers the old code', async () => {
    const first = await deploy(app.appId, [write('cloud/ver/functions/answer.js', answerJs('one')), write('cloud/main.js', "\nrequire('./ver/functions/answer.js');\n", 'append')]);
    expect(first.message).toContain('Kept as version 2.');
    expect(await callFunction(app, 'answer')).toBe('one');
    const second = await deploy(app.appId, [write('cloud/ver/functions/answer.js', answerJs('two')), write('public/extra/new.html', '<p>new</p>')]);
    expect(second.message).toContain('Kept as version 3.');
    expect(await callFunction(app, 'answer')).toBe('two');

    const versions = await listed(app.appId);
    expect(versions.map((v) => [v.version, v.active])).toEqual([[3, true], [2, false], [1, false]]);
    expect(versions[0]!.changes).toBe('wrote cloud/ver/functions/answer.js (overwrite, 43 bytes); wrote public/extra/new.html (overwrite, 10 bytes, new file)');
    expect(versions[1]!.changes).toMatch(/^wrote cloud\/ver\/functions\/answer\.js \(overwrite, 43 bytes, new file\); wrote cloud\/main\.js \(append, 39 bytes added, now \d+ bytes\)$/);

    const res = await rollback(app.appId, 2);
    expect(res.status, res.text).toBe(200);
    const result = res.json() as { message: string; warnings: string[]; version: number };
    expect(result.version).toBe(4);
    expect(result.warnings).toEqual([]);
    expect(result.message.split('\n')).toEqual([
      'deleted folder public/extra/ (1 file, 10 bytes)',
      'wrote cloud/ver/functions/answer.js (overwrite, 43 bytes)',
      'Kept as version 4 (rollback to version 2).',
      'The cloud code was reloaded.',
    ]);
    expect(await callFunction(app, 'answer')).toBe('one');
    expect(fs.existsSync(onDisk(app.appId, 'public/extra'))).toBe(false);
    const after = await listed(app.appId);
    expect(after.map((v) => [v.version, v.changes, v.active])).toEqual([
      [4, 'rollback to version 2', true],
      [3, versions[0]!.changes, false],
      [2, versions[1]!.changes, false],
      [1, 'the starting files: cloud/main.js, public/index.html', false],
    ]);
    // The kept archive of the rollback is the tree of version 2, file for file.
    const archive = async (v: number) => unpackTree((await server.platform.db.get<{ archive: Buffer }>('SELECT archive FROM cloud_code_versions WHERE app_id = ? AND version = ?', app.appId, v))!.archive);
    expect(await archive(4)).toEqual(await archive(2));
  });

  it('refuses an unknown version with 404 naming version, and a version that is not a positive integer with 400', async () => {
    const unknown = await rollback(app.appId, 99);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toMatch(/^version 99 is not a kept version of the Backend App "[^"]+"; it keeps versions 4, 3, 2, 1\. List them with getCloudCodeVersions\.$/);
    for (const bad of [0, 1.5, 'two']) {
      const res = await rollback(app.appId, bad);
      expect(res.status, String(bad)).toBe(400);
      expect(res.text).toContain('version');
      expect(res.text).not.toMatch(/\n\s+at /);
    }
    expect((await listed(app.appId))[0]!.version).toBe(4);
  });

  it("another account's app is unknown: 404 for its versions and its rollback, and nothing changes", async () => {
    const versions = await versionsOf(app.appId, server.bob);
    expect(versions.status).toBe(404);
    expect(versions.text).toContain(app.appId);
    const refused = await rollback(app.appId, 1, server.bob);
    expect(refused.status).toBe(404);
    expect(refused.text).toBe(versions.text);
    expect((await listed(app.appId)).length).toBe(4);
    expect((await versionsOf('no-such-app')).status).toBe(404);
  });

  it('a rollback is not held to the per-call change count, and an app made before versions were kept starts from its tree as it is', async () => {
    const other = await createApp();
    // 450 files in three deploys of 150 (the limit per call is 200), then back to the start: 450 deletions at once.
    for (let batch = 0; batch < 3; batch++) {
      await deploy(other.appId, Array.from({ length: 150 }, (_, i) => write(`public/f${batch}-${i}.txt`, `${batch}-${i}`)));
    }
    expect((await listed(other.appId)).length).toBe(4);
    const res = await rollback(other.appId, 1);
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ version: 5, warnings: [] });
    expect(fs.readdirSync(onDisk(other.appId, 'public'))).toEqual(['index.html']);

    // As an app made before this change: no version kept. Its first read keeps the tree as version 1.
    await deploy(other.appId, [write('public/old.txt', 'old')]);
    await server.platform.db.run('DELETE FROM cloud_code_versions WHERE app_id = ?', other.appId);
    const first = await listed(other.appId);
    expect(first.map((v) => [v.version, v.changes, v.active])).toEqual([[1, 'the files as they were when versions began to be kept', true]]);
    await deploy(other.appId, [{ path: 'public/old.txt', operation: 'delete' }]);
    expect(fs.existsSync(onDisk(other.appId, 'public/old.txt'))).toBe(false);
    const back = await rollback(other.appId, 1);
    expect(back.status, back.text).toBe(200);
    expect(fs.readFileSync(onDisk(other.appId, 'public/old.txt'), 'utf8')).toBe('old');
    // Same for a deploy as the first call: the tree before it is version 1, the deploy version 2.
    await server.platform.db.run('DELETE FROM cloud_code_versions WHERE app_id = ?', other.appId);
    expect((await deploy(other.appId, [write('public/new.txt', 'new')])).message).toContain('Kept as version 2.');
  });

  it(`keeps the newest ${MAX_VERSIONS} versions; the app's versions go with the app`, async () => {
    const other = await createApp();
    for (let n = 0; n < MAX_VERSIONS + 1; n++) await deploy(other.appId, [write('public/n.txt', String(n))]);
    const versions = await listed(other.appId);
    expect(versions.length).toBe(MAX_VERSIONS);
    expect(versions[0]).toMatchObject({ version: MAX_VERSIONS + 2, active: true });
    expect(versions.at(-1)!.version).toBe(3);
    const pruned = await rollback(other.appId, 2);
    expect(pruned.status).toBe(404);

    expect((await api(server, 'DELETE', `/backend-apps/${other.appId}`, { token: server.alice })).status).toBe(200);
    const left = await server.platform.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM cloud_code_versions WHERE app_id = ?', other.appId);
    expect(Number(left!.n)).toBe(0);
  });
});

describe('getCloudCodeVersions and rollbackCloudCode through an MCP client', () => {
  it('lists the versions as structured content, rolls back, and answers an unknown version as an error result', async () => {
    const app = await createApp();
    await deploy(app.appId, [write('cloud/mcp/functions/answer.js', answerJs('first')), write('cloud/main.js', "\nrequire('./mcp/functions/answer.js');\n", 'append')]);
    await deploy(app.appId, [write('cloud/mcp/functions/answer.js', answerJs('second'))]);
    expect(await callFunction(app, 'answer')).toBe('second');
    const client = await modernHttpClient(server.url, server.alice);
    try {
      const listedByTool = await client.callTool({ name: 'getCloudCodeVersions', arguments: { appId: app.appId } });
      expect(listedByTool.isError ?? false).toBe(false);
      const versions = (listedByTool.structuredContent as { versions: Version[] }).versions;
      expect(versions.map((v) => [v.version, v.active])).toEqual([[3, true], [2, false], [1, false]]);

      const rolled = await client.callTool({ name: 'rollbackCloudCode', arguments: { appId: app.appId, version: 2 } });
      expect(rolled.isError ?? false).toBe(false);
      expect(rolled.structuredContent).toMatchObject({ version: 4, warnings: [] });
      expect((rolled.structuredContent as { message: string }).message).toContain('Kept as version 4 (rollback to version 2).');
      expect(await callFunction(app, 'answer')).toBe('first');

      const unknown = await client.callTool({ name: 'rollbackCloudCode', arguments: { appId: app.appId, version: 42 } });
      expect(unknown.isError).toBe(true);
      expect((unknown.content as Array<{ text: string }>)[0]!.text).toContain('version 42 is not a kept version');
    } finally {
      await client.close();
    }
  });
});

describe("the dashboard's cloud code page", () => {
  let app: App;
  let alice: { cookie: string; csrf: string };
  let bobAppId: string;

  async function call(method: string, urlPath: string, options: { cookie?: string; body?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {};
    if (options.cookie) headers.cookie = options.cookie;
    if (method !== 'GET') headers.origin = server.url;
    if (options.body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(`${server.url}${urlPath}`, { method, headers, body: options.body ? new URLSearchParams(options.body).toString() : undefined, redirect: 'manual' });
    return { status: response.status, location: response.headers.get('location'), text: await response.text() };
  }

  beforeAll(async () => {
    app = await createApp();
    bobAppId = (await createApp(server.bob)).appId;
    const cookie = await dashboardCookie(server);
    const overview = await call('GET', '/dashboard', { cookie });
    alice = { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(overview.text)![1]! };
    await deploy(app.appId, [write('cloud/dash/functions/answer.js', answerJs('before')), write('cloud/main.js', "\nrequire('./dash/functions/answer.js');\n", 'append')]);
    await deploy(app.appId, [write('cloud/dash/functions/answer.js', answerJs('after <b>'))]);
  });

  const page = () => `/dashboard/apps/${app.appId}/cloud`;

  it('lists the versions newest first, the active one marked and the others with a rollback button', async () => {
    const res = await call('GET', page(), { cookie: alice.cookie });
    expect(res.status).toBe(200);
    const table = /<table class="versions"[\s\S]*?<\/table>/.exec(res.text)![0];
    const rows = [...table.matchAll(/<tr role="row"( aria-current="true")?><th scope="row" role="rowheader" class="num">(\d+)<\/th>/g)].map((m) => [Number(m[2]), Boolean(m[1])]);
    expect(rows).toEqual([[3, true], [2, false], [1, false]]);
    expect(table.match(/<span class="badge ok">active<\/span>/g)).toHaveLength(1);
    expect(table.match(/aria-label="Roll back to version \d+"/g)).toEqual(['aria-label="Roll back to version 2"', 'aria-label="Roll back to version 1"']);
    expect(table).toContain(`action="${page()}/rollback"`);
    expect(table).toContain('wrote cloud/dash/functions/answer.js (overwrite, ');
  });

  it('rolls back with the session\'s CSRF token, shows what changed, and the function answers the old code; without the token nothing happens', async () => {
    const forged = await call('POST', `${page()}/rollback`, { cookie: alice.cookie, body: { version: '2' } });
    expect(forged.status).toBe(403);
    expect((await listed(app.appId)).length).toBe(3);

    const res = await call('POST', `${page()}/rollback`, { cookie: alice.cookie, body: { _csrf: alice.csrf, version: '2' } });
    expect(res.status, res.text).toBe(303);
    const shown = await call('GET', res.location!, { cookie: alice.cookie });
    expect(shown.text).toContain('Rolled back to version 2 as version 4.');
    expect(shown.text).toContain('Kept as version 4 (rollback to version 2).');
    expect(await callFunction(app, 'answer')).toBe('before');
    expect((await listed(app.appId))[0]).toMatchObject({ version: 4, changes: 'rollback to version 2', active: true });

    const unknown = await call('POST', `${page()}/rollback`, { cookie: alice.cookie, body: { _csrf: alice.csrf, version: '77' } });
    expect(unknown.status).toBe(303);
    expect((await call('GET', unknown.location!, { cookie: alice.cookie })).text).toContain('version 77 is not a kept version');
    expect((await call('POST', `/dashboard/apps/${bobAppId}/cloud/rollback`, { cookie: alice.cookie, body: { _csrf: alice.csrf, version: '1' } })).status).toBe(404);
    expect((await call('GET', `/dashboard/apps/${bobAppId}/cloud`, { cookie: alice.cookie })).status).toBe(404);
  });
});
