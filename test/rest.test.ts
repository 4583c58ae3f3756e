import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allOperations, operations } from '../tools/index.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

type FullApp = Record<string, string>;

const createApp = async (appName: string, token = server.alice) => {
  const res = await api(server, 'POST', '/backend-apps', { token, body: { appName } });
  expect(res.status, res.text).toBe(201);
  return res.json() as FullApp;
};

/** Every error answer must be text/plain and use a status the operation lists (docs/design.md, decision 3). */
const expectError = (res: { status: number; contentType: string; text: string }, status: number, pattern: RegExp) => {
  expect(res.status).toBe(status);
  expect(res.contentType).toMatch(/^text\/plain/);
  expect(res.text).toMatch(pattern);
  expect(res.text).not.toMatch(/\n\s+at /); // no stack trace
};

describe('authentication', () => {
  it('answers 401 without a token, with a malformed header and with a wrong token, for every routed operation', async () => {
    for (const op of operations) {
      const url = op.path.replace(/\{(\w+)\}/g, 'x');
      const missing = await api(server, op.method, url);
      expectError(missing, 401, /Authorization: Bearer/);
      const malformed = await api(server, op.method, url, { headers: { authorization: 'Basic abc' } });
      expectError(malformed, 401, /Bearer <account token>/);
      const wrong = await api(server, op.method, url, { token: 'by_not-a-real-token' });
      expectError(wrong, 401, /not valid/);
    }
  });

  it('a revoked token stops working', async () => {
    const accounts = server.platform.services.accounts;
    const carol = await accounts.create('carol');
    expect((await api(server, 'GET', '/backend-apps', { token: carol.token })).status).toBe(200);
    await accounts.revokeToken(carol.token);
    expect((await api(server, 'GET', '/backend-apps', { token: carol.token })).status).toBe(401);
  });
});

describe('createBackendApp', () => {
  it('creates an app with its keys, URLs and data folder', async () => {
    const app = await createApp('todo-list');
    expect(Object.keys(app).sort()).toEqual(
      ['apiURL', 'appId', 'appName', 'clientKey', 'dashboardURL', 'dotnetKey', 'javascriptKey', 'publicWebHostingURL', 'restKey'].sort(),
    );
    expect(app.appName).toBe('todo-list');
    expect(app.apiURL).toBe(`${server.url}/data`);
    expect(app.dashboardURL).toBe(`${server.url}/dashboard/apps/${app.appId}`);
    expect(app.publicWebHostingURL).toBe('');
    // Keys: URL-safe, at least 128 bits, all different.
    const keys = [app.appId, app.restKey, app.javascriptKey, app.clientKey, app.dotnetKey] as string[];
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(new Set(keys).size).toBe(keys.length);
    expect(fs.statSync(path.join(server.home, 'apps', app.appId)).isDirectory()).toBe(true);
    // The master key is never part of the answer.
    const master = (await server.platform.services.backendApps.keys(app.appId))!.masterKey;
    expect(JSON.stringify(app)).not.toContain(master);
  });

  it('the dashboardURL is a page that exists', async () => {
    const app = await createApp('with-dashboard');
    const page = await fetch(app.dashboardURL!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain(app.appId);
  });

  it('accepts names of 1 and of 63 characters, and non-ASCII names', async () => {
    await createApp('a');
    await createApp('x'.repeat(63));
    await createApp('Données élèves');
  });

  it.each([
    ['a missing field', {}, /appName is required/],
    ['a wrong type', { appName: 42 }, /appName must be a string, not the number 42/],
    ['null', { appName: null }, /appName must be a string, not null/],
    ['an unknown field', { appName: 'ok-name', colour: 'red' }, /Unknown field "colour".*Accepted fields: appName/],
    ['an empty name', { appName: '' }, /appName must not be empty/],
    ['a blank name', { appName: '   ' }, /appName must not be blank/],
    ['a name too long', { appName: 'x'.repeat(64) }, /appName must be at most 63 characters long \(it has 64\)/],
  ])('answers 400 for %s', async (_kind, body, pattern) => {
    const before = (await server.platform.services.backendApps.list((await server.platform.services.accounts.findByLogin('alice'))!.id)).length;
    expectError(await api(server, 'POST', '/backend-apps', { token: server.alice, body }), 400, pattern);
    const after = (await server.platform.services.backendApps.list((await server.platform.services.accounts.findByLogin('alice'))!.id)).length;
    expect(after).toBe(before); // nothing half-written
  });

  it('answers 400 for a duplicate name in the same account, and allows it in another account', async () => {
    await createApp('shared-name');
    expectError(
      await api(server, 'POST', '/backend-apps', { token: server.alice, body: { appName: 'shared-name' } }),
      400,
      /already exists.*getBackendApps/,
    );
    await createApp('shared-name', server.bob);
  });

  it('answers 400 for a body that is not JSON, not an object, or not sent as JSON', async () => {
    expectError(
      await api(server, 'POST', '/backend-apps', { token: server.alice, rawBody: '{"appName":', headers: { 'content-type': 'application/json' } }),
      400,
      /not valid JSON/,
    );
    expectError(await api(server, 'POST', '/backend-apps', { token: server.alice, body: ['x'] }), 400, /must be a JSON object, not an array/);
    expectError(
      await api(server, 'POST', '/backend-apps', { token: server.alice, rawBody: 'appName=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      400,
      /Content-Type: application\/json/,
    );
    expectError(await api(server, 'POST', '/backend-apps', { token: server.alice }), 400, /appName is required/);
  });
});

describe('getBackendApps and getBackendApp', () => {
  it('lists the account\'s apps, filters by app-name, and fetches one in full', async () => {
    const a = await createApp('listed-one');
    const b = await createApp('listed-two');
    const all = (await api(server, 'GET', '/backend-apps', { token: server.alice })).json() as FullApp[];
    expect(all).toEqual(expect.arrayContaining([{ appId: a.appId, appName: 'listed-one' }, { appId: b.appId, appName: 'listed-two' }]));
    for (const item of all) expect(Object.keys(item).sort()).toEqual(['appId', 'appName']);

    const filtered = await api(server, 'GET', '/backend-apps?app-name=listed-two', { token: server.alice });
    expect(filtered.status).toBe(200);
    expect(filtered.json()).toEqual([{ appId: b.appId, appName: 'listed-two' }]);
    expect((await api(server, 'GET', '/backend-apps?app-name=nothing-like-it', { token: server.alice })).json()).toEqual([]);

    const one = await api(server, 'GET', `/backend-apps/${a.appId}`, { token: server.alice });
    expect(one.status).toBe(200);
    expect(one.json()).toEqual([a]);
  });

  it('an unknown appId answers an empty list (the row lists no 404: docs/design.md, decision 3)', async () => {
    const res = await api(server, 'GET', '/backend-apps/doesNotExist', { token: server.alice });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('one account cannot see another\'s apps', async () => {
    const secret = await createApp('alice-private');
    const bobList = (await api(server, 'GET', '/backend-apps', { token: server.bob })).json() as FullApp[];
    expect(bobList.map((a) => a.appId)).not.toContain(secret.appId);
    expect((await api(server, 'GET', '/backend-apps?app-name=alice-private', { token: server.bob })).json()).toEqual([]);
    expect((await api(server, 'GET', `/backend-apps/${secret.appId}`, { token: server.bob })).json()).toEqual([]);
  });

  it('refuses unknown query parameters by name', async () => {
    expectError(await api(server, 'GET', '/backend-apps?colour=red', { token: server.alice }), 400, /Unknown field "colour"/);
  });
});

describe('getGuide', () => {
  it('serves a guide as markdown', async () => {
    const titles = server.platform.services.guides.titles();
    expect(titles.length).toBeGreaterThanOrEqual(6);
    const res = await api(server, 'GET', `/guides/${titles[0]}`, { token: server.alice });
    expect(res.status).toBe(200);
    const guide = res.json() as { content: string };
    expect(guide.content).toMatch(/^# /);
    expect(guide.content).toContain('Call `');
  });

  it('answers 404 for an unknown title, listing the titles that exist', async () => {
    const res = await api(server, 'GET', '/guides/how-to-fly', { token: server.alice });
    expectError(res, 404, /no guide titled "how-to-fly"/);
    for (const title of server.platform.services.guides.titles()) expect(res.text).toContain(title);
  });
});

describe('unknown routes', () => {
  it('answer 404 as text and point to the OpenAPI document', async () => {
    expectError(await api(server, 'GET', '/nothing-here', { token: server.alice }), 404, /openapi\.json/);
  });

  it('operations whose service is not built yet are not routed', async () => {
    const unbuilt = allOperations.find((op) => op.handler === null);
    if (!unbuilt) return; // every operation is built: nothing left to check here
    const url = unbuilt.path.replace(/\{(\w+)\}/g, 'x');
    expectError(await api(server, unbuilt.method, url, { token: server.alice, body: unbuilt.method === 'GET' ? undefined : {} }), 404, /No operation/);
  });
});
