import bcrypt from 'bcryptjs';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataStore } from '../src/data/store.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * Users, sessions and roles of the data API, through the real Parse JS SDK and through raw HTTP
 * for every error code (Parse Server's codes, messages and statuses).
 */

let server: TestServer;
let keys: { applicationId: string; restKey: string; javascriptKey: string; masterKey: string };
let dataUrl: string;
let store: DataStore;

beforeAll(async () => {
  server = await startTestServer();
  const services = server.platform.services;
  const accountId = (await services.accounts.findByLogin('alice'))!.id;
  const app = await services.backendApps.create(accountId, 'users-test');
  keys = (await services.backendApps.keys(app.appId))!;
  dataUrl = `${server.url}/data`;
  store = (await services.dataApi.apps.store(app.appId))!;
  // The Node build's initialize takes the master key; its type declarations miss that overload.
  (Parse as unknown as { initialize(appId: string, jsKey: string, masterKey: string): void }).initialize(keys.applicationId, keys.javascriptKey, keys.masterKey);
  Parse.serverURL = dataUrl;
  Parse.User.enableUnsafeCurrentUser();
});
afterAll(async () => {
  await Parse.User.logOut().catch(() => undefined);
  await server.close();
});

interface Answer {
  status: number;
  body: Record<string, any>;
  headers: Headers;
}

/** A raw data API call with the REST key (or the master key), JSON in and out. */
async function call(method: string, path: string, options: { body?: unknown; session?: string; master?: boolean; installation?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Parse-Application-Id': keys.applicationId, 'content-type': 'application/json' };
  if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
  else headers['X-Parse-REST-API-Key'] = keys.restKey;
  if (options.session) headers['X-Parse-Session-Token'] = options.session;
  if (options.installation) headers['X-Parse-Installation-Id'] = options.installation;
  const res = await fetch(`${dataUrl}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

const expectError = (res: Answer, status: number, code: number, error?: string | RegExp) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  if (typeof error === 'string') expect(res.body.error).toBe(error);
  else if (error) expect(res.body.error).toMatch(error);
};

let counter = 0;
/** A fresh username for each test, so that tests do not depend on each other. */
const fresh = (prefix: string) => `${prefix}${++counter}_${Date.now().toString(36)}`;

const signUpRaw = async (username: string, password = 'secret-pw', extra: Record<string, unknown> = {}) => {
  const res = await call('POST', '/users', { body: { username, password, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { objectId: string; createdAt: string; sessionToken: string };
};

const TOKEN = /^r:[0-9a-f]{32}$/;

describe('signup, login, logout through the Parse JS SDK', () => {
  it('signs up, sets the current user and stores only a bcrypt hash', async () => {
    const username = fresh('ann');
    const user = new Parse.User();
    user.set({ username, password: 'ann-password', email: `${username}@example.com`, age: 30 });
    await user.signUp();
    expect(user.id).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(user.getSessionToken()).toMatch(TOKEN);
    expect(Parse.User.current()?.id).toBe(user.id);
    expect((await Parse.User.currentAsync())?.getUsername()).toBe(username);

    const row = (await store.row('_User', user.id!))!;
    expect(row.data.password).toBeUndefined();
    expect(row.data._hashed_password).toMatch(/^\$2[ab]\$10\$/);
    expect(JSON.stringify(row.data)).not.toContain('ann-password');
    // enforcePrivateUsers (Parse Server 9's default): no public read.
    expect(row.acl).toEqual({ [user.id!]: { read: true, write: true } });

    const fetched = await call('GET', `/users/${user.id}`, { master: true });
    expect(fetched.body.password).toBeUndefined();
    expect(fetched.body._hashed_password).toBeUndefined();
    expect(fetched.body.age).toBe(30);

    const session = (await store.rows('_Session', { where: { sessionToken: user.getSessionToken() } }))[0]!;
    expect(session.data.createdWith).toEqual({ action: 'signup', authProvider: 'password' });
    expect(session.data.user).toEqual({ __type: 'Pointer', className: '_User', objectId: user.id });
    expect(session.acl).toEqual({ [user.id!]: { read: true, write: true } });
    const expires = Date.parse((session.data.expiresAt as { iso: string }).iso);
    expect(Math.abs(expires - Date.now() - 365 * 24 * 3600 * 1000)).toBeLessThan(60_000);
    expect(typeof session.data.installationId).toBe('string'); // the SDK sends its installation id
  });

  it('logs in, becomes a user from its token, reads the current session and logs out', async () => {
    const username = fresh('ben');
    await Parse.User.signUp(username, 'ben-password', { email: `${username}@example.com` }, {});
    await Parse.User.logOut();
    expect(Parse.User.current()).toBeNull();

    await expect(Parse.User.logIn(username, 'wrong')).rejects.toMatchObject({ code: Parse.Error.OBJECT_NOT_FOUND, message: 'Invalid username/password.' });
    const user = await Parse.User.logIn(username, 'ben-password');
    const token = user.getSessionToken()!;
    expect(token).toMatch(TOKEN);
    expect(user.get('email')).toBe(`${username}@example.com`);
    expect(user.get('password')).toBeUndefined();
    expect(Parse.User.current()?.id).toBe(user.id);

    const session = await Parse.Session.current();
    expect(session.getSessionToken()).toBe(token);
    expect(session.get('createdWith')).toEqual({ action: 'login', authProvider: 'password' });
    expect(session.get('user').id).toBe(user.id);

    await Parse.User.logOut();
    expect(Parse.User.current()).toBeNull();
    await expect(Parse.User.become(token)).rejects.toMatchObject({ code: Parse.Error.INVALID_SESSION_TOKEN });

    // Logging out deleted the SDK's session; a token from another login still works.
    const again = await call('POST', '/login', { body: { username, password: 'ben-password' } });
    const became = await Parse.User.become(again.body.sessionToken);
    expect(became.id).toBe(user.id);
    expect(Parse.User.current()?.getUsername()).toBe(username);
    await Parse.User.logOut();
  });

  it('a user saves its own fields; another user is refused with 206', async () => {
    const carolName = fresh('carol');
    const carol = await Parse.User.signUp(carolName, 'carol-pw', {});
    carol.set('nickname', 'caz');
    await carol.save();
    await carol.fetch();
    expect(carol.get('nickname')).toBe('caz');
    expect(carol.getSessionToken()).toMatch(TOKEN);

    const dave = await Parse.User.signUp(fresh('dave'), 'dave-pw', {});
    // Read with the master key: enforcePrivateUsers (on by default) keeps carol from dave's reads.
    const carolAsSeenByDave = await new Parse.Query(Parse.User).get(carol.id!, { useMasterKey: true });
    carolAsSeenByDave.set('nickname', 'hacked');
    await expect(carolAsSeenByDave.save(null, { sessionToken: dave.getSessionToken()! })).rejects.toMatchObject({ code: Parse.Error.SESSION_MISSING });
    await expect(carolAsSeenByDave.destroy({ sessionToken: dave.getSessionToken()! })).rejects.toMatchObject({ code: Parse.Error.SESSION_MISSING });
    expect((await new Parse.Query(Parse.User).get(carol.id!, { useMasterKey: true })).get('nickname')).toBe('caz');

    // The master key may change anyone.
    carolAsSeenByDave.set('nickname', 'by-master');
    await carolAsSeenByDave.save(null, { useMasterKey: true });
    await Parse.User.logOut();
  });

  it('changing the password rehashes it, revokes the old sessions and hands the SDK a new token', async () => {
    const name = fresh('erin');
    const erin = await Parse.User.signUp(name, 'old-password', {});
    const oldToken = erin.getSessionToken()!;
    const before = (await store.row('_User', erin.id!))!.data._hashed_password;
    erin.setPassword('new-password');
    await erin.save();
    expect((await store.row('_User', erin.id!))!.data._hashed_password).not.toBe(before);
    expect(erin.getSessionToken()).toMatch(TOKEN);
    expect(erin.getSessionToken()).not.toBe(oldToken);
    expectError(await call('GET', '/users/me', { session: oldToken }), 400, 209, 'Invalid session token');
    expect((await call('GET', '/users/me', { session: erin.getSessionToken()! })).body.objectId).toBe(erin.id);
    await Parse.User.logOut();
    await expect(Parse.User.logIn(name, 'old-password')).rejects.toMatchObject({ code: 101 });
    await Parse.User.logIn(name, 'new-password');
    await Parse.User.logOut();
  });

  it('logs in users whose bcrypt hash was imported from Parse Server ($2a$)', async () => {
    const name = fresh('imported');
    const { objectId } = await signUpRaw(name);
    const row = (await store.row('_User', objectId))!;
    row.data._hashed_password = bcrypt.hashSync('from-parse', 10).replace(/^\$2b\$/, '$2a$');
    await store.replaceRow('_User', row);
    const user = await Parse.User.logIn(name, 'from-parse');
    expect(user.id).toBe(objectId);
    await Parse.User.logOut();
  });
});

describe('ACLs and roles through the Parse JS SDK', () => {
  it('an object readable by one user only: other users do not find it and get answers 101', async () => {
    // Sessions made over raw HTTP carry no installation id, so the SDK's logins do not replace them.
    const ownerSignup = await signUpRaw(fresh('owner'));
    const owner = await Parse.User.become(ownerSignup.sessionToken);
    const note = new Parse.Object('Note');
    note.set('text', 'private');
    note.setACL(new Parse.ACL(owner));
    await note.save();
    expect((await new Parse.Query('Note').find()).map((n) => n.id)).toContain(note.id);

    const other = await Parse.User.become((await signUpRaw(fresh('other'))).sessionToken);
    expect(Parse.User.current()?.id).toBe(other.id);
    expect((await new Parse.Query('Note').find()).map((n) => n.id)).not.toContain(note.id);
    await expect(new Parse.Query('Note').get(note.id!)).rejects.toMatchObject({ code: Parse.Error.OBJECT_NOT_FOUND });
    note.set('text', 'changed');
    await expect(note.save()).rejects.toMatchObject({ code: Parse.Error.OBJECT_NOT_FOUND });
    expect((await new Parse.Query('Note').find({ sessionToken: ownerSignup.sessionToken })).map((n) => n.id)).toContain(note.id);
    await Parse.User.logOut();
    expect((await new Parse.Query('Note').find()).map((n) => n.id)).not.toContain(note.id);
  });

  it('a role holding a user grants its ACL entries, also through nested roles', async () => {
    const editorSignup = await signUpRaw(fresh('editor'));
    const editor = Parse.User.createWithoutData(editorSignup.objectId) as Parse.User;
    const outsider = await signUpRaw(fresh('outsider'));

    const roleAcl = new Parse.ACL();
    roleAcl.setPublicReadAccess(true);
    const editorsName = fresh('Editors');
    const editors = new Parse.Role(editorsName, roleAcl);
    editors.getUsers().add(editor);
    await editors.save(null, { useMasterKey: true });
    const staffName = fresh('Staff');
    const staff = new Parse.Role(staffName, roleAcl);
    staff.getRoles().add(editors);
    await staff.save(null, { useMasterKey: true });

    const forEditors = new Parse.Object('Doc');
    const acl1 = new Parse.ACL();
    acl1.setRoleReadAccess(editorsName, true);
    forEditors.setACL(acl1);
    const forStaff = new Parse.Object('Doc');
    const acl2 = new Parse.ACL();
    acl2.setRoleReadAccess(staff, true);
    forStaff.setACL(acl2);
    await Parse.Object.saveAll([forEditors, forStaff], { useMasterKey: true });

    const seen = async (token: string) => (await new Parse.Query('Doc').find({ sessionToken: token })).map((d) => d.id).sort();
    expect(await seen(editorSignup.sessionToken)).toEqual([forEditors.id, forStaff.id].sort());
    expect(await seen(outsider.sessionToken)).toEqual([]);
    await expect(new Parse.Query('Doc').get(forStaff.id!, { sessionToken: outsider.sessionToken })).rejects.toMatchObject({ code: 101 });

    const members = await editors.getUsers().query().find({ useMasterKey: true });
    expect(members.map((u) => u.id)).toEqual([editor.id]);
    const found = await new Parse.Query(Parse.Role).equalTo('name', staffName).first();
    expect(found?.getName()).toBe(staffName);

    // Removing the user from the role takes the access away.
    editors.getUsers().remove(editor);
    await editors.save(null, { useMasterKey: true });
    expect(await seen(editorSignup.sessionToken)).toEqual([]);
  });
});

describe('users over raw HTTP: Parse error codes and statuses', () => {
  it('signup answers 201 with Location, a session token and the default ACL, also at /classes/_User', async () => {
    const res = await call('POST', '/classes/_User', { body: { username: fresh('raw'), password: 'pw' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'objectId', 'sessionToken']);
    expect(res.body.sessionToken).toMatch(TOKEN);
    expect(res.headers.get('location')).toBe(`${dataUrl}/users/${res.body.objectId}`);
    const own = await call('GET', `/users/${res.body.objectId}`, { session: res.body.sessionToken });
    expect(own.body.ACL).toEqual({ [res.body.objectId]: { read: true, write: true } });
    expect(own.body.sessionToken).toBe(res.body.sessionToken);

    const private_ = await signUpRaw(fresh('priv'), 'pw', { ACL: {} });
    expect((await store.row('_User', private_.objectId))!.acl).toEqual({ [private_.objectId]: { read: true, write: true } });
  });

  it('usernames stay unique under concurrent signups, and role names under concurrent creates (storage is asynchronous)', async () => {
    const name = fresh('Race');
    const signups = await Promise.all(Array.from({ length: 12 }, (_, i) => call('POST', '/users', { body: { username: i % 2 ? name : name.toUpperCase(), password: 'pw' } })));
    expect(signups.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of signups.filter((r) => r.status !== 201)) expectError(refused, 400, 202, 'Account already exists for this username.');
    expect(await store.countRows('_User', { username: { $regex: `^${name}$`, $options: 'i' } })).toBe(1);

    const role = fresh('RaceRole');
    const creates = await Promise.all(Array.from({ length: 8 }, () => call('POST', '/roles', { master: true, body: { name: role, ACL: {} } })));
    expect(creates.filter((r) => r.status === 201)).toHaveLength(1);
    for (const refused of creates.filter((r) => r.status !== 201)) expectError(refused, 400, 137, `Cannot add duplicate role name of ${role}`);
  });

  it('signup errors: 200, 201, 202, 203, 125, 119, 252', async () => {
    const name = fresh('Taken');
    await signUpRaw(name, 'pw', { email: `${name}@Example.com` });
    const cases: Array<[Record<string, unknown>, number, string?]> = [
      [{ password: 'pw' }, 200, 'bad or missing username'],
      [{ username: '', password: 'pw' }, 200],
      [{ username: fresh('x') }, 201, 'password is required'],
      [{ username: fresh('x'), password: '' }, 201],
      [{ username: name, password: 'pw' }, 202, 'Account already exists for this username.'],
      [{ username: name.toLowerCase(), password: 'pw' }, 202],
      [{ username: fresh('y'), password: 'pw', email: `${name.toUpperCase()}@example.com` }, 203, 'Account already exists for this email address.'],
      [{ username: fresh('y'), password: 'pw', email: 'not-an-email' }, 125, 'Email address format is invalid.'],
      [{ username: fresh('y'), password: 'pw', emailVerified: true }, 119],
      [{ username: fresh('y'), password: 'pw', authData: { myspace: { id: '1' } } }, 252],
    ];
    for (const [body, code, error] of cases) expectError(await call('POST', '/users', { body }), 400, code, error);
    // Regular expression characters in a username are matched literally by the uniqueness check.
    const suffix = fresh('');
    await signUpRaw(`aXb${suffix}`);
    await signUpRaw(`a.b${suffix}`);
  });

  it('login: GET with a query string, POST with a body, by email; 101 (404), 200, 201', async () => {
    const name = fresh('lena');
    const { objectId } = await signUpRaw(name, 'lena-pw', { email: `${name}@example.com` });
    const byQuery = await call('GET', `/login?username=${encodeURIComponent(name)}&password=lena-pw`);
    expect(byQuery.status).toBe(200);
    expect(byQuery.body.objectId).toBe(objectId);
    expect(byQuery.body.sessionToken).toMatch(TOKEN);
    expect(byQuery.body.password).toBeUndefined();
    const byBody = await call('POST', '/login', { body: { username: name, password: 'lena-pw' } });
    expect(byBody.body.objectId).toBe(objectId);
    const byEmail = await call('POST', '/login', { body: { username: `${name}@example.com`, password: 'lena-pw' } });
    expect(byEmail.body.objectId).toBe(objectId);

    expectError(await call('POST', '/login', { body: { username: name, password: 'nope' } }), 404, 101, 'Invalid username/password.');
    expectError(await call('POST', '/login', { body: { username: fresh('ghost'), password: 'nope' } }), 404, 101, 'Invalid username/password.');
    expectError(await call('POST', '/login', { body: { username: name, password: 5 } }), 404, 101);
    expectError(await call('POST', '/login', { body: { password: 'x' } }), 400, 200);
    expectError(await call('POST', '/login', { body: { username: name } }), 400, 201);

    const verified = await call('GET', `/verifyPassword?username=${encodeURIComponent(name)}&password=lena-pw`);
    expect(verified.body.objectId).toBe(objectId);
    expect(verified.body.sessionToken).toBeUndefined();
  });

  it('a user whose ACL is {} cannot log in; loginAs needs the master key', async () => {
    const name = fresh('locked');
    const { objectId } = await signUpRaw(name, 'pw');
    expect((await call('PUT', `/users/${objectId}`, { master: true, body: { ACL: {} } })).status).toBe(200);
    expectError(await call('POST', '/login', { body: { username: name, password: 'pw' } }), 404, 101);
    expectError(await call('POST', '/loginAs', { body: { userId: objectId } }), 400, 119);
    expectError(await call('POST', '/loginAs', { master: true, body: {} }), 400, 162);
    expectError(await call('POST', '/loginAs', { master: true, body: { userId: 'nobody' } }), 404, 101);
    const as = await call('POST', '/loginAs', { master: true, body: { userId: objectId } });
    expect(as.body.sessionToken).toMatch(TOKEN);
  });

  it('/users/me and /logout: 209 without a valid session; logout deletes the session', async () => {
    expectError(await call('GET', '/users/me'), 400, 209, 'Invalid session token');
    expectError(await call('GET', '/users/me', { session: 'r:00000000000000000000000000000000' }), 400, 209, 'Invalid session token');
    const { objectId, sessionToken } = await signUpRaw(fresh('mia'));
    const meAnswer = await call('GET', '/users/me', { session: sessionToken });
    expect(meAnswer.body).toMatchObject({ objectId, sessionToken });
    expect(await call('POST', '/logout', { session: sessionToken })).toMatchObject({ status: 200, body: {} });
    expectError(await call('GET', '/users/me', { session: sessionToken }), 400, 209);
    expectError(await call('POST', '/logout', { session: sessionToken }), 400, 209);
    expect((await call('POST', '/logout')).body).toEqual({}); // as Parse Server: nothing to do
  });

  it('updates: 206 without a session or for another user, 202/203 for taken names, 119 for emailVerified', async () => {
    const a = await signUpRaw(fresh('ua'), 'pw', { email: `${fresh('ua')}@example.com` });
    const bName = fresh('ub');
    const b = await signUpRaw(bName, 'pw', { email: `${bName}@example.com` });
    expectError(await call('PUT', `/users/${a.objectId}`, { body: { x: 1 } }), 400, 206, `Cannot modify user ${a.objectId}.`);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: b.sessionToken, body: { x: 1 } }), 400, 206, `Cannot modify user ${a.objectId}.`);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { username: bName.toUpperCase() } }), 400, 202);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { email: `${bName}@example.com` } }), 400, 203);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { email: 'nope' } }), 400, 125);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { username: '' } }), 400, 200);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { password: '' } }), 400, 201);
    expectError(await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { emailVerified: true } }), 400, 119);
    const ok = await call('PUT', `/users/${a.objectId}`, { session: a.sessionToken, body: { username: fresh('renamed'), ACL: { '*': { read: true } } } });
    expect(Object.keys(ok.body)).toEqual(['updatedAt']);
    // A user cannot lock itself out of its own record.
    expect((await store.row('_User', a.objectId))!.acl).toEqual({ '*': { read: true }, [a.objectId]: { read: true, write: true } });
    // Emails are hidden from other users, not from the user or the master key (b makes its record public
    // first: a new user's ACL is private under Parse Server 9's enforcePrivateUsers).
    expect((await call('PUT', `/users/${b.objectId}`, { session: b.sessionToken, body: { ACL: { '*': { read: true }, [b.objectId]: { read: true, write: true } } } })).status).toBe(200);
    expect((await call('GET', `/users/${b.objectId}`, { session: a.sessionToken })).body.username).toBe(bName);
    expect((await call('GET', `/users/${b.objectId}`, { session: a.sessionToken })).body.email).toBeUndefined();
    expect((await call('GET', `/users?where=${encodeURIComponent(JSON.stringify({ objectId: b.objectId }))}`)).body.results[0].email).toBeUndefined();
    expect((await call('GET', `/users/${b.objectId}`, { session: b.sessionToken })).body.email).toBe(`${bName}@example.com`);
    expect((await call('GET', `/users/${b.objectId}`, { master: true })).body.email).toBe(`${bName}@example.com`);
  });

  it('deletes: 206 without a session or for another user; the user and its sessions go', async () => {
    const a = await signUpRaw(fresh('da'));
    const b = await signUpRaw(fresh('db'));
    expectError(await call('DELETE', `/users/${a.objectId}`), 400, 206, 'Insufficient auth to delete user');
    expectError(await call('DELETE', `/classes/_User/${a.objectId}`, { session: b.sessionToken }), 400, 206, 'Insufficient auth to delete user');
    expect((await call('DELETE', `/users/${a.objectId}`, { session: a.sessionToken })).body).toEqual({});
    expectError(await call('GET', `/users/${a.objectId}`, { master: true }), 404, 101);
    expect((await store.rows('_Session', { where: { user: { __type: 'Pointer', className: '_User', objectId: a.objectId } } }))).toEqual([]);
  });

  it('a signup inside a transactional batch answers 108; outside a transaction it works', async () => {
    const txName = fresh('tx');
    const tx = await call('POST', '/batch', { body: { transaction: true, requests: [{ method: 'POST', path: '/data/users', body: { username: txName, password: 'pw' } }] } });
    expectError(tx, 400, 108);
    // Nothing is written later either (the route refuses before it hashes anything).
    await new Promise((r) => setTimeout(r, 400));
    expect((await store.rows('_User', { where: { username: txName }, limit: 1 }))).toEqual([]);
    const plain = await call('POST', '/batch', { body: { requests: [{ method: 'POST', path: '/data/users', body: { username: fresh('bt'), password: 'pw' } }] } });
    expect(plain.body[0].success.sessionToken).toMatch(TOKEN);
  });

  it('files and cloud functions, which live outside the database, answer 108 inside a transactional batch', async () => {
    for (const request of [
      { method: 'POST', path: '/data/files/note.txt', body: { base64: 'aGk=' } },
      { method: 'DELETE', path: '/data/files/note.txt' },
      { method: 'POST', path: '/data/functions/anything', body: {} },
    ]) {
      const tx = await call('POST', '/batch', { master: true, body: { transaction: true, requests: [request] } });
      expectError(tx, 400, 108, `${request.method} ${request.path.slice('/data'.length)} cannot run inside a transaction.`);
    }
  });
});

describe('sessions over raw HTTP', () => {
  it('lists and reads only the caller’s sessions; 209 without one; 101 for others', async () => {
    const a = await signUpRaw(fresh('sa'));
    const b = await signUpRaw(fresh('sb'));
    expectError(await call('GET', '/sessions'), 400, 209, 'Invalid session token');
    expectError(await call('GET', '/sessions/me'), 400, 209, 'Session token required.');
    const mine = await call('GET', '/sessions', { session: a.sessionToken });
    expect(mine.body.results.map((s: { sessionToken: string }) => s.sessionToken)).toEqual([a.sessionToken]);
    const me = await call('GET', '/sessions/me', { session: a.sessionToken });
    expect(me.body).toMatchObject({ sessionToken: a.sessionToken, user: { __type: 'Pointer', className: '_User', objectId: a.objectId } });
    const bSession = (await call('GET', '/sessions/me', { session: b.sessionToken })).body.objectId;
    expectError(await call('GET', `/sessions/${bSession}`, { session: a.sessionToken }), 404, 101);
    expectError(await call('DELETE', `/classes/_Session/${bSession}`, { session: a.sessionToken }), 404, 101);
    expectError(await call('PUT', `/sessions/${me.body.objectId}`, { session: a.sessionToken, body: { ACL: {} } }), 400, 105, 'Cannot set ACL on a Session.');
    expectError(await call('PUT', `/sessions/${me.body.objectId}`, { session: a.sessionToken, body: { sessionToken: 'r:x' } }), 400, 105);
    expect((await call('PUT', `/sessions/${me.body.objectId}`, { session: a.sessionToken, body: { device: 'phone' } })).status).toBe(200);
    expect((await call('GET', '/sessions', { master: true })).body.results.length).toBeGreaterThanOrEqual(2);
    // Sessions imported from Parse Server have no ACL: still only their user's.
    const bRow = (await store.row('_Session', bSession))!;
    await store.replaceRow('_Session', { ...bRow, acl: null });
    const where = encodeURIComponent(JSON.stringify({ objectId: bSession }));
    expect((await call('GET', `/sessions?where=${where}`, { session: a.sessionToken })).body.results).toEqual([]);
    expectError(await call('GET', `/classes/_Session/${bSession}`, { session: a.sessionToken }), 404, 101);
    expectError(await call('PUT', `/sessions/${bSession}`, { session: a.sessionToken, body: { device: 'x' } }), 404, 101);
    expect((await call('GET', `/sessions?where=${where}`, { session: b.sessionToken })).body.results).toHaveLength(1);

    const created = await call('POST', '/sessions', { session: a.sessionToken, body: { device: 'laptop' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ createdWith: { action: 'create' }, device: 'laptop', user: { objectId: a.objectId } });
    expect(created.body.sessionToken).toMatch(TOKEN);
    expectError(await call('POST', '/sessions', { body: {} }), 400, 209, 'Session token required.');
    expect((await call('DELETE', `/sessions/${created.body.objectId}`, { session: a.sessionToken })).body).toEqual({});
    expectError(await call('GET', '/users/me', { session: created.body.sessionToken }), 400, 209);
  });

  it('a new login from an installation replaces that installation’s earlier session of the user', async () => {
    const name = fresh('inst');
    await signUpRaw(name);
    const login = (installation: string) => call('POST', '/login', { installation, body: { username: name, password: 'secret-pw' } });
    const first = (await login('device-1')).body.sessionToken;
    const other = (await login('device-2')).body.sessionToken;
    const second = (await login('device-1')).body.sessionToken;
    expectError(await call('GET', '/users/me', { session: first }), 400, 209);
    expect((await call('GET', '/users/me', { session: other })).status).toBe(200);
    const session = (await call('GET', '/sessions/me', { session: second })).body;
    expect(session.installationId).toBe('device-1');
  });
});

describe('roles over raw HTTP', () => {
  const acl = { '*': { read: true } };

  it('create, query, get, update, delete at /roles and /classes/_Role', async () => {
    const name = fresh('Moderators');
    const created = await call('POST', '/roles', { master: true, body: { name, ACL: acl } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${dataUrl}/classes/_Role/${created.body.objectId}`);
    const id = created.body.objectId as string;
    expect((await call('GET', `/classes/_Role/${id}`)).body.name).toBe(name);
    expect((await call('GET', `/roles?where=${encodeURIComponent(JSON.stringify({ name }))}`)).body.results).toHaveLength(1);
    const user = await signUpRaw(fresh('member'));
    const added = await call('PUT', `/roles/${id}`, {
      master: true,
      body: { name, users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: user.objectId }] } },
    });
    expect(added.status).toBe(200);
    const secret = await call('POST', '/classes/Secret', { master: true, body: { ACL: { [`role:${name}`]: { read: true } } } });
    expect((await call('GET', `/classes/Secret/${secret.body.objectId}`, { session: user.sessionToken })).status).toBe(200);
    // Without write access in the role's ACL, clients cannot change it.
    expectError(await call('PUT', `/roles/${id}`, { session: user.sessionToken, body: { x: 1 } }), 404, 101);
    expect((await call('DELETE', `/roles/${id}`, { master: true })).body).toEqual({});
    expectError(await call('GET', `/classes/Secret/${secret.body.objectId}`, { session: user.sessionToken }), 404, 101);
  });

  it('errors: 111 without name or ACL, 139 for a bad name, 137 for a duplicate, 136 for a rename', async () => {
    expectError(await call('POST', '/roles', { body: { ACL: acl } }), 400, 111, 'name is required.');
    expectError(await call('POST', '/roles', { body: { name: fresh('NoAcl') } }), 400, 111, 'ACL is required.');
    expectError(await call('POST', '/roles', { body: { name: 'bad/name', ACL: acl } }), 400, 139);
    expectError(await call('POST', '/classes/_Role', { body: { name: 42, ACL: acl } }), 400, 139);
    const name = fresh('Admins');
    const role = await call('POST', '/roles', { body: { name, ACL: { '*': { read: true, write: true } } } });
    expect(role.status).toBe(201);
    expectError(await call('POST', '/classes/_Role', { body: { name, ACL: acl } }), 400, 137, `Cannot add duplicate role name of ${name}`);
    expectError(await call('PUT', `/roles/${role.body.objectId}`, { body: { name: fresh('Other') } }), 400, 136);
    expectError(await call('PUT', `/roles/${role.body.objectId}`, { body: { ACL: null } }), 400, 111, 'ACL is required.');
    expect((await call('PUT', `/roles/${role.body.objectId}`, { body: { name, note: 'same name is fine' } })).status).toBe(200);
  });

  it('role writes run inside transactional batches', async () => {
    const name = fresh('Batch');
    const res = await call('POST', '/batch', {
      master: true,
      body: {
        transaction: true,
        requests: [
          { method: 'POST', path: '/data/roles', body: { name, ACL: acl } },
          { method: 'POST', path: '/data/classes/_Role', body: { name, ACL: acl } },
        ],
      },
    });
    expectError(res, 400, 137);
    expect((await store.rows('_Role', { where: { name } }))).toEqual([]);
  });
});
