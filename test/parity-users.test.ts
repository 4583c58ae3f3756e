/**
 * Requests and users as Parse Server 9.10 answers them (differential group `requests-users`):
 * form-encoded bodies, 206 for writes to another user, and anonymous users through the real
 * Parse JS SDK (`Parse.AnonymousUtils`).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Parse from 'parse/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC } from '../src/data/auth/context.js';
import { DataStore } from '../src/data/store.js';
import { compileWhere } from '../src/data/query/compile.js';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';
import { logInWithAuthData, signUp } from '../src/data/users/service.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
let store: DataStore;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'parity-users');
  store = (await server.platform.services.dataApi.apps.store(app.appId))!;
  (Parse as unknown as { initialize(appId: string, jsKey: string, masterKey: string): void }).initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
  Parse.User.enableUnsafeCurrentUser();
  // A 5xx is always a Backyard bug: fail at once instead of waiting out the SDK's five retries.
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
});
afterEach(async () => {
  await Parse.User.logOut().catch(() => undefined);
});
afterAll(async () => {
  await server?.close();
});

let counter = 0;
const fresh = (prefix: string) => `${prefix}${++counter}${Date.now().toString(36)}`;

const FORM = 'application/x-www-form-urlencoded';

/** A data API call whose body is sent as it is, with the given content type. */
async function send(method: string, path: string, body: string, contentType: string | undefined, headers: Record<string, string> = {}) {
  const all: Record<string, string> = { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.keys.restKey, ...headers };
  if (contentType) all['content-type'] = contentType;
  const response = await fetch(`${app.apiURL}${path}`, { method, headers: all, body });
  return { status: response.status, body: (await response.json()) as any };
}

const refused = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as Parse.Error;
  }
  throw new Error('expected the call to be refused');
};

describe('form-encoded bodies (item 1)', () => {
  it('key=value pairs are read as string fields on create, update and delete', async () => {
    const created = await send('POST', '/classes/Form', 'name=a+b%20c&n=1&n=2&empty=', FORM);
    expect(created.status).toBe(201);
    const id = created.body.objectId as string;
    expect((await app.call('GET', `/classes/Form/${id}`)).body).toMatchObject({ name: 'a b c', n: ['1', '2'], empty: '' });
    expect(await send('PUT', `/classes/Form/${id}`, 'name=zz', `${FORM}; charset=utf-8`)).toMatchObject({ status: 200, body: { updatedAt: expect.any(String) } });
    expect((await app.call('GET', `/classes/Form/${id}`)).body.name).toBe('zz');
    expect(await send('DELETE', `/classes/Form/${id}`, 'ignored=1', FORM)).toEqual({ status: 200, body: {} });
    expect((await app.call('GET', `/classes/Form/${id}`)).status).toBe(404);
  });

  it('an empty form body is an empty object', async () => {
    expect(await send('POST', '/classes/Form', '', FORM)).toMatchObject({ status: 201, body: { objectId: expect.any(String) } });
  });

  it('signup and login read form fields', async () => {
    const username = fresh('form');
    const signup = await send('POST', '/users', `username=${username}&password=p%26w`, FORM);
    expect(signup).toMatchObject({ status: 201, body: { sessionToken: expect.stringMatching(/^r:/) } });
    const login = await send('POST', '/login', `username=${username}&password=p%26w`, FORM);
    expect(login).toMatchObject({ status: 200, body: { objectId: signup.body.objectId, username } });
    expect((await send('POST', '/login', `username=${username}&password=wrong`, FORM)).body.code).toBe(101);
  });

  it("the JS SDK's credential fields and _method work in a form body", async () => {
    const { body } = await app.call('POST', '/classes/FormQuery', { body: { name: 'found' } });
    const where = encodeURIComponent(JSON.stringify({ name: 'found' }));
    const form = `_ApplicationId=${app.appId}&_JavaScriptKey=${app.keys.javascriptKey}&_method=GET&where=${where}&keys=name`;
    const found = await fetch(`${app.apiURL}/classes/FormQuery`, { method: 'POST', headers: { 'content-type': FORM }, body: form });
    expect(await found.json()).toEqual({ results: [{ objectId: body.objectId, name: 'found', createdAt: expect.any(String), updatedAt: expect.any(String) }] });
  });

  it('a JSON document sent as a form is read as JSON; invalid field names answer 105', async () => {
    const created = await send('POST', '/classes/Form', '{"score":1}', FORM);
    expect(created.status).toBe(201);
    expect((await app.call('GET', `/classes/Form/${created.body.objectId}`)).body.score).toBe(1);
    expect(await send('POST', '/classes/Form', 'a%5Bb%5D=1', FORM)).toMatchObject({ status: 400, body: { code: 105 } });
  });

  it('a body without a content type is JSON', async () => {
    const created = await send('POST', '/classes/Form', '{"score":2}', undefined);
    expect(created.status).toBe(201);
    expect((await app.call('GET', `/classes/Form/${created.body.objectId}`)).body.score).toBe(2);
  });
});

describe('writes to another user (item 2)', () => {
  it('saving or deleting another user with your own session answers 206, through the SDK and REST', async () => {
    const carolName = fresh('carol');
    const carol = { id: (await app.call('POST', '/users', { body: { username: carolName, password: 'carol-pw' } })).body.objectId as string };
    const token = (await app.call('POST', '/users', { body: { username: fresh('dave'), password: 'dave-pw' } })).body.sessionToken as string;
    const carolForDave = Parse.User.createWithoutData(carol.id) as Parse.User;
    carolForDave.set('nickname', 'hacked');
    expect(await refused(carolForDave.save(null, { sessionToken: token }))).toMatchObject({ code: 206, message: `Cannot modify user ${carol.id}.` });
    expect(await refused(carolForDave.destroy({ sessionToken: token }))).toMatchObject({ code: 206, message: 'Insufficient auth to delete user' });
    for (const base of ['/users', '/classes/_User']) {
      expect(await app.call('PUT', `${base}/${carol.id}`, { sessionToken: token, body: { x: 1 } })).toMatchObject({ status: 400, body: { code: 206 } });
      expect(await app.call('DELETE', `${base}/${carol.id}`, { sessionToken: token })).toMatchObject({ status: 400, body: { code: 206 } });
      // A user that does not exist answers the same, so that nobody learns which ids exist.
      expect(await app.call('PUT', `${base}/abcdefghij`, { sessionToken: token, body: { x: 1 } })).toMatchObject({ status: 400, body: { code: 206 } });
      expect(await app.call('DELETE', `${base}/abcdefghij`, { sessionToken: token })).toMatchObject({ status: 400, body: { code: 206 } });
    }
    // Refused before uniqueness is looked at: another user's write learns nothing of taken names.
    expect((await app.call('PUT', `/users/${carol.id}`, { sessionToken: token, body: { username: carolName } })).body.code).toBe(206);
    const stored = await new Parse.Query(Parse.User).get(carol.id, { useMasterKey: true });
    expect(stored.get('nickname')).toBeUndefined();
    // The master key still answers 101 for a user that does not exist.
    expect((await app.call('PUT', '/users/abcdefghij', { master: true, body: { x: 1 } })).body.code).toBe(101);
  });
});

describe('anonymous users (item 3)', () => {
  it('Parse.AnonymousUtils.logIn creates a user without username and password, with a random username', async () => {
    const user = await Parse.AnonymousUtils.logIn();
    expect(user.id).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(user.getUsername()).toMatch(/^[A-Za-z0-9]{25}$/);
    expect(user.getSessionToken()).toMatch(/^r:[0-9a-f]{32}$/);
    expect(Parse.AnonymousUtils.isLinked(user)).toBe(true);
    const id = (user.get('authData') as { anonymous: { id: string } }).anonymous.id;
    const me = await app.call('GET', '/users/me', { sessionToken: user.getSessionToken()! });
    expect(me.body).toMatchObject({ objectId: user.id, username: user.getUsername(), authData: { anonymous: { id } } });
    const session = (await store.rows('_Session', { where: { sessionToken: user.getSessionToken() } }))[0]!;
    // A signup through a provider counts as its login (parse-server src/RestWrite.js, createSessionToken).
    expect(session.data.createdWith).toEqual({ action: 'login', authProvider: 'anonymous' });
  });

  it('a second login with the same id logs into the same user with a new session', async () => {
    const id = crypto.randomUUID();
    const first = await Parse.User.logInWith('anonymous', { authData: { id } });
    await Parse.User.logOut();
    const second = await Parse.User.logInWith('anonymous', { authData: { id } });
    expect(second.id).toBe(first.id);
    expect(second.getUsername()).toBe(first.getUsername());
    expect(second.getSessionToken()).not.toBe(first.getSessionToken());
    const raw = await app.call('POST', '/users', { body: { authData: { anonymous: { id } }, ignored: 1 } });
    expect(raw).toMatchObject({ status: 200, body: { objectId: first.id, authData: { anonymous: { id } }, authDataResponse: {}, sessionToken: expect.stringMatching(/^r:/) } });
    expect(raw.body).not.toHaveProperty('ignored');
    const session = (await store.rows('_Session', { where: { sessionToken: second.getSessionToken() } }))[0]!;
    expect(session.data.createdWith).toEqual({ action: 'login', authProvider: 'anonymous' });
  });

  it('signUp with username and password upgrades the anonymous user; setUsername removes the anonymous authData', async () => {
    const user = await Parse.AnonymousUtils.logIn();
    const username = fresh('upgraded');
    user.setUsername(username);
    user.setPassword('upgraded-pw');
    await user.signUp();
    expect(Parse.AnonymousUtils.isLinked(user)).toBe(false);
    const stored = await new Parse.Query(Parse.User).get(user.id!, { useMasterKey: true });
    expect(stored.get('authData')).toBeUndefined();
    expect(stored.getUsername()).toBe(username);
    await Parse.User.logOut();
    const again = await Parse.User.logIn(username, 'upgraded-pw');
    expect(again.id).toBe(user.id);
  });

  it("set('username') and signUp also upgrade; Parse keeps the anonymous link then, and so does Backyard", async () => {
    const user = await Parse.AnonymousUtils.logIn();
    const id = (user.get('authData') as { anonymous: { id: string } }).anonymous.id;
    const username = fresh('upset');
    user.set('username', username);
    user.setPassword('upgraded-pw');
    await user.signUp();
    await Parse.User.logOut();
    const byPassword = await Parse.User.logIn(username, 'upgraded-pw');
    expect(byPassword.id).toBe(user.id);
    expect(byPassword.get('authData')).toEqual({ anonymous: { id } });
  });

  it('authData is hidden from other users and cannot be queried by them', async () => {
    const anon = await Parse.AnonymousUtils.logIn();
    const id = (anon.get('authData') as { anonymous: { id: string } }).anonymous.id;
    await Parse.User.logOut();
    const other = (await app.call('POST', '/users', { body: { username: fresh('other'), password: 'pw' } })).body;
    const seen = await app.call('GET', `/users/${anon.id}`, { sessionToken: other.sessionToken });
    if (seen.status === 200) expect(seen.body).not.toHaveProperty('authData');
    const probe = await app.call('GET', `/users${whereQuery({ 'authData.anonymous.id': id })}`, { sessionToken: other.sessionToken });
    expect(probe.body.results ?? []).toEqual([]);
    expect((await app.call('GET', `/users/${anon.id}`, { master: true })).body.authData).toEqual({ anonymous: { id } });
  });

  it('bad authData answers clear errors: unconfigured built-in providers 101, unknown ones 252, a non-string id 162', async () => {
    expect(await refused(Parse.User.logInWith('facebook', { authData: { id: '1', access_token: 'x' } }))).toMatchObject({ code: 101, message: 'Facebook auth is not configured.' });
    const bad = async (authData: unknown, extra: Record<string, unknown> = {}) => (await app.call('POST', '/users', { body: { authData, ...extra } })).body;
    expect(await bad({ foo: { id: 'x' } })).toEqual({ code: 252, error: 'This authentication method is unsupported.' });
    expect(await bad({ anonymous: { id: crypto.randomUUID() }, myspace: { id: 'x' } })).toMatchObject({ code: 252 });
    expect(await bad({ anonymous: { id: 5 } })).toEqual({ code: 162, error: "Invalid authData id for provider 'anonymous'." });
    expect(await bad({ anonymous: { foo: 1 } })).toMatchObject({ code: 162, error: expect.stringContaining('authData.anonymous') });
    expect(await bad(null)).toMatchObject({ code: 200 });
    expect(await bad({ anonymous: {} })).toMatchObject({ code: 200 });
    expect(await bad({ anonymous: null }, { username: fresh('n'), password: 'pw' })).toMatchObject({ sessionToken: expect.any(String) });
  });

  it('linking an id another user holds answers 208', async () => {
    const taken = crypto.randomUUID();
    await app.call('POST', '/users', { body: { authData: { anonymous: { id: taken } } } });
    const other = (await app.call('POST', '/users', { body: { authData: { anonymous: { id: crypto.randomUUID() } } } })).body;
    expect((await app.call('PUT', `/users/${other.objectId}`, { sessionToken: other.sessionToken, body: { authData: { anonymous: { id: taken } } } })).body).toEqual({
      code: 208,
      error: 'this auth is already used',
    });
    expect((await app.call('POST', '/users', { sessionToken: other.sessionToken, body: { authData: { anonymous: { id: taken } } } })).body.code).toBe(208);
  });

  it('the lookup by anonymous id uses an index', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-anon-'));
    try {
      const file = path.join(dir, 'data.db');
      const storage = new SqliteAdapter(file);
      const local = new DataStore('anon', storage, () => '');
      const id = crypto.randomUUID();
      const { user } = await signUp(local, { authData: { anonymous: { id } } }, PUBLIC);
      expect((await logInWithAuthData(local, { authData: { anonymous: { id } } }, PUBLIC))?.objectId).toBe(user.objectId);
      await storage.close();
      const { sql, params } = compileWhere('_User', 't', { 'authData.anonymous.id': id }, { dialect: storage.dialect, schema: { fields: () => ({ authData: { type: 'Object' } }) } });
      const db = new Database(file, { readonly: true });
      try {
        const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT objectId FROM "cls__User" AS t WHERE ${sql}`).all(...params) as Array<{ detail: string }>;
        expect(plan.map((r) => r.detail).join('\n')).toMatch(/SEARCH t USING (COVERING )?INDEX/);
      } finally {
        db.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
