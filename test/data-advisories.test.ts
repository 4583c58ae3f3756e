/**
 * Parse Server's published security advisories as a checklist: one test per
 * class of bypass that applies to Backyard's data API, over real HTTP on loopback, each naming the
 * advisories it covers, asserting Parse Server 9's code and status, and with a positive control (the
 * same request where it is allowed). LiveQuery, GraphQL, auth adapters, MFA, email and password
 * reset pages, `readOnlyMasterKey`, rate limits and `routeAllowList` do not exist here, so their
 * advisories do not apply.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
const sessionIds: Record<string, string> = {};

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const error = (status: number, code: number, message: string) => ({ status, body: { code, error: message } });
const json = { 'content-type': 'application/json' };

/** Calls with the REST key as `who` (a user's session, nobody, or the master key). */
const as = (who: 'alice' | 'bob' | 'master' | undefined, method: string, path: string, body?: unknown) =>
  app.call(method, path, who === 'master' ? { master: true, body } : { sessionToken: who ? tokens[who] : undefined, body });
/** The same with a body sent as written (JSON.stringify cannot write an own `__proto__` key). */
const raw = (who: 'alice' | 'master' | undefined, method: string, path: string, text: string) =>
  app.call(method, path, { master: who === 'master', sessionToken: who === 'alice' ? tokens.alice : undefined, rawBody: text, headers: json });

async function signUp(target: TestApp, username: string, headers: Record<string, string> = {}): Promise<{ objectId: string; sessionToken: string }> {
  // Publicly readable, as enforcePrivateUsers (on by default) would not make them: these tests read each other's users.
  const res = await target.call('POST', '/users', { body: { username, password: `${username}-pw`, email: `${username}@example.test`, ACL: { '*': { read: true } } }, headers });
  expect(res.status).toBe(201);
  return res.body;
}

/** Writes an app's cloud code on disk and reloads its worker (as test/cloud-runtime.test.ts does). */
async function deploy(target: TestApp, main: string): Promise<void> {
  const file = path.join(server.home, 'apps', target.appId, 'cloud', 'cloud', 'main.js');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, main);
  await server.platform.services.cloud.reload(target.appId);
}

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'advisories');
  for (const name of ['alice', 'bob']) {
    const { objectId, sessionToken } = await signUp(app, name);
    ids[name] = objectId;
    tokens[name] = sessionToken;
    sessionIds[name] = (await as(name as 'alice' | 'bob', 'GET', '/sessions/me')).body.objectId;
  }
});
afterAll(async () => server?.close());

describe('prototype-pollution keywords (requestKeywordDenylist)', () => {
  const prohibited = (keyword: string) => error(400, 105, `Prohibited keyword in request data: ${keyword}.`);
  const KEY = (key: string) => JSON.stringify({ key });

  it('GHSA-p6h4-93qp-jhcm, GHSA-q342-9w2p-57fp: refuses __proto__, constructor and {_bsontype: Code} at any depth of any write (105)', async () => {
    expect(await raw(undefined, 'POST', '/classes/Note', '{"title":"t","meta":{"__proto__":{"admin":true}}}')).toMatchObject(prohibited(KEY('__proto__')));
    expect(await raw(undefined, 'POST', '/classes/Note', '{"__proto__":{"admin":true}}')).toMatchObject(prohibited(KEY('__proto__')));
    expect(await as(undefined, 'POST', '/classes/Note', { constructor: 'x' })).toMatchObject(prohibited(KEY('constructor')));
    // GHSA-q342: a nested object before the keyword does not end the scan; keys are patterns, as in Parse Server.
    expect(await as(undefined, 'POST', '/classes/Note', { first: { nested: [{ x: 1 }] }, second: [{ constructorName: 1 }] })).toMatchObject(prohibited(KEY('constructor')));
    expect(await as(undefined, 'POST', '/classes/Note', { meta: { _bsontype: 'Code', code: 'x' } })).toMatchObject(prohibited(JSON.stringify({ key: '_bsontype', value: 'Code' })));
    // The master key is no exception, nor are updates, signups (the ACL too), batches and file metadata.
    expect(await as('master', 'POST', '/classes/Note', { meta: { constructor: 1 } })).toMatchObject(prohibited(KEY('constructor')));
    const note = await as(undefined, 'POST', '/classes/Note', { title: 't', meta: { list: [{ a: 1 }] } });
    expect(note.status).toBe(201);
    expect(await raw(undefined, 'PUT', `/classes/Note/${note.body.objectId}`, '{"meta":{"__proto__":{"admin":true}}}')).toMatchObject(prohibited(KEY('__proto__')));
    expect(await raw(undefined, 'POST', '/users', '{"username":"mallory","password":"pw","ACL":{"__proto__":{"read":true}}}')).toMatchObject(prohibited(KEY('__proto__')));
    const batch = await raw(undefined, 'POST', '/batch', '{"requests":[{"method":"POST","path":"/classes/Note","body":{"m":{"__proto__":{}}}},{"method":"POST","path":"/classes/Note","body":{"m":{}}}]}');
    expect(batch.body[0]).toEqual({ error: prohibited(KEY('__proto__')).body });
    expect(batch.body[1].success.objectId).toBeTypeOf('string');
    const upload = await as('alice', 'POST', '/files/a.txt', { base64: 'YQ==', fileData: { metadata: { constructor: 'x' } } });
    expect(upload).toMatchObject(prohibited(KEY('constructor')));

    // Positive controls: the same shapes under other names are stored; queries are not scanned (nor are they in Parse Server).
    const fine = await as(undefined, 'POST', '/classes/Note', { title: 't', meta: { builder: { proto: 1 }, list: [{ bsontype: 'Code' }] } });
    expect(fine.status).toBe(201);
    expect((await as(undefined, 'GET', `/classes/Note/${fine.body.objectId}`)).body.meta).toEqual({ builder: { proto: 1 }, list: [{ bsontype: 'Code' }] });
    expect((await as('alice', 'POST', '/files/a.txt', { base64: 'YQ==', fileData: { metadata: { author: 'alice' } } })).status).toBe(201);
    expect((await as(undefined, 'GET', `/classes/Note${whereQuery({ constructor: 'x' })}`)).body).toEqual({ results: [] });
  });

  it('GHSA-xprv-wvh7-qqqx: a keyword that a beforeSave trigger adds is refused too', async () => {
    const hooked = await createTestApp(server, 'advisories-hooks');
    // (The SDK drops an own `constructor` key when it encodes the object; a key holding the word is kept.)
    await deploy(hooked, "Parse.Cloud.beforeSave('Hooked', (request) => { request.object.set('meta', request.object.get('poison') ? { constructorName: 'x' } : { name: 'x' }); });\n");
    expect(await hooked.call('POST', '/classes/Hooked', { body: { poison: true } })).toMatchObject(prohibited(KEY('constructor')));
    // Positive control: the trigger runs and the object is saved when it adds nothing prohibited.
    const saved = await hooked.call('POST', '/classes/Hooked', { body: { poison: false } });
    expect(saved.status).toBe(201);
    expect((await hooked.call('GET', `/classes/Hooked/${saved.body.objectId}`)).body.meta).toEqual({ name: 'x' });
  });
});

it('GHSA-7xg7-rqf6-pw6c: the master-only classes and finding or deleting _Installation objects need the master key (119)', async () => {
  const clients = (method: string, className: string) => error(400, 119, `Clients aren't allowed to perform the ${method} operation on the ${className} collection.`);
  const jobStatus = await as('master', 'POST', '/classes/_JobStatus', { jobName: 'nightly', status: 'succeeded' });
  expect(jobStatus.status).toBe(201);
  expect(await as('alice', 'GET', '/classes/_JobStatus')).toMatchObject(clients('find', '_JobStatus'));
  expect(await as(undefined, 'GET', `/classes/_JobStatus/${jobStatus.body.objectId}`)).toMatchObject(clients('get', '_JobStatus'));
  expect(await as(undefined, 'POST', '/classes/_Audience', { name: 'all' })).toMatchObject(clients('create', '_Audience'));
  expect(await as(undefined, 'GET', `/classes/_Audience${whereQuery({ name: 'all' })}`)).toMatchObject(clients('find', '_Audience'));
  // Clients register and read their installation by id, but may not list or delete installations.
  const installation = await as(undefined, 'POST', '/classes/_Installation', { installationId: 'device-1', deviceType: 'ios', deviceToken: 'secret-token' });
  expect(installation.status).toBe(201);
  const installationId = installation.body.objectId as string;
  expect((await as(undefined, 'GET', `/classes/_Installation/${installationId}`)).body.deviceToken).toBe('secret-token');
  expect(await as('alice', 'GET', '/classes/_Installation')).toMatchObject(clients('find', 'installation'));
  expect(await as(undefined, 'DELETE', `/classes/_Installation/${installationId}`)).toMatchObject(clients('delete', 'installation'));
  // Nor through a sub-query or an include of another class.
  const device = await as('master', 'POST', '/classes/Device', { owner: 'alice', installation: pointer('_Installation', installationId), job: pointer('_JobStatus', jobStatus.body.objectId) });
  const viaInQuery = whereQuery({ job: { $inQuery: { className: '_JobStatus', where: { status: 'succeeded' } } } });
  expect(await as(undefined, 'GET', `/classes/Device${viaInQuery}`)).toMatchObject(clients('find', '_JobStatus'));
  const included = (await as('alice', 'GET', `/classes/Device/${device.body.objectId}?include=installation,job`)).body;
  expect(included).toMatchObject({ installation: pointer('_Installation', installationId), job: pointer('_JobStatus', jobStatus.body.objectId) });

  // Positive controls: the master key does all of it.
  expect((await as('master', 'GET', '/classes/_JobStatus')).body.results).toHaveLength(1);
  expect((await as('master', 'GET', `/classes/Device${viaInQuery}`)).body.results).toHaveLength(1);
  const full = (await as('master', 'GET', `/classes/Device/${device.body.objectId}?include=installation,job`)).body;
  expect(full).toMatchObject({ installation: { className: '_Installation', deviceToken: 'secret-token' }, job: { className: '_JobStatus', jobName: 'nightly' } });
  expect((await as('master', 'GET', '/classes/_Installation')).body.results).toHaveLength(1);
  expect((await as('master', 'DELETE', `/classes/_Installation/${installationId}`)).status).toBe(200);
});

it('GHSA-6r2j-cxgf-495f, GHSA-fcv6-fg5r-jm9q: sessions reached through redirectClassNameForKey, include or a sub-query stay their users’ own', async () => {
  // Sessions as imported from Parse Server, without the ACL that sessions made here carry.
  const store = (await server.platform.services.dataApi.apps.store(app.appId))!;
  const imported: Record<string, { objectId: string; sessionToken: string }> = {};
  for (const name of ['alice', 'bob']) {
    imported[name] = (await as('master', 'POST', '/sessions', { user: pointer('_User', ids[name]!) })).body;
    await store.replaceRow('_Session', { ...(await store.row('_Session', imported[name]!.objectId))!, acl: null });
  }
  const holder = await as('master', 'POST', '/classes/Holder', {
    sessions: { __op: 'AddRelation', objects: [pointer('_Session', imported.alice!.objectId), pointer('_Session', imported.bob!.objectId)] },
    session: pointer('_Session', imported.alice!.objectId),
    owner: pointer('_User', ids.alice!),
  });
  const holderId = holder.body.objectId as string;
  const redirect = `/classes/Holder${whereQuery({ $relatedTo: { object: pointer('Holder', holderId), key: 'sessions' } }, { redirectClassNameForKey: 'sessions' })}`;
  expect(await as(undefined, 'GET', redirect)).toMatchObject(error(400, 209, 'Invalid session token'));
  // A sub-query into _Session would be an oracle for other users' tokens.
  const oracle = `/classes/Holder${whereQuery({ session: { $inQuery: { className: '_Session', where: { sessionToken: { $regex: '^r:' } } } } })}`;
  expect(await as(undefined, 'GET', oracle)).toMatchObject(error(400, 209, 'Invalid session token'));
  expect((await as('bob', 'GET', oracle)).body.results).toEqual([]);
  const bobs = (await as('bob', 'GET', redirect)).body.results;
  expect(bobs.map((s: { objectId: string }) => s.objectId)).toEqual([imported.bob!.objectId]);
  for (const who of [undefined, 'bob'] as const) {
    const included = (await as(who, 'GET', `/classes/Holder/${holderId}?include=session,owner`)).body;
    // Without a user the pointer stays (docs/parse-differences.md); bob's include finds no such session of his.
    if (who === undefined) expect(included.session).toEqual(pointer('_Session', imported.alice!.objectId));
    else expect(included).not.toHaveProperty('session');
    expect(included.owner).toMatchObject({ __type: 'Object', className: '_User', username: 'alice' });
    for (const internal of ['email', 'password', '_hashed_password', 'sessionToken', 'authData']) expect(included.owner).not.toHaveProperty(internal);
  }

  // Positive controls: alice includes her own session; the master key reads every session.
  expect((await as('alice', 'GET', `/classes/Holder/${holderId}?include=session`)).body.session).toMatchObject({ className: '_Session', sessionToken: imported.alice!.sessionToken });
  expect((await as('master', 'GET', redirect)).body.results).toHaveLength(2);
  expect((await as('alice', 'GET', oracle)).body.results).toHaveLength(1);
});

it('GHSA-6w4q-23cf-j9jp, GHSA-5v7g-9h8f-8pgg, GHSA-jc39-686j-wp6q, GHSA-f6j3-w9v3-cq22: clients cannot write server fields or other users’ sessions', async () => {
  expect(await as('bob', 'PUT', `/sessions/${sessionIds.alice}`, { note: 'mine now' })).toMatchObject(error(404, 101, 'Object not found.'));
  expect(await as('bob', 'DELETE', `/classes/_Session/${sessionIds.alice}`)).toMatchObject(error(404, 101, 'Object not found.'));
  const create = (body: Record<string, unknown>) => as('bob', 'POST', '/sessions', body);
  // A client's create passes these fields over, as Parse Server's RestWrite.handleSession does: the new session is its own.
  const chosen = await create({ sessionToken: 'r:chosen', createdWith: { action: 'login' }, expiresAt: { __type: 'Date', iso: '2999-01-01T00:00:00.000Z' }, user: pointer('_User', ids.alice!) });
  expect(chosen.status).toBe(201);
  expect(chosen.body.sessionToken).toMatch(/^r:[0-9a-f]{32}$/);
  expect(chosen.body).toMatchObject({ createdWith: { action: 'create' }, user: pointer('_User', ids.bob!) });
  expect(Date.parse(chosen.body.expiresAt.iso)).toBeLessThan(Date.parse('2999-01-01T00:00:00.000Z'));
  expect(await as('master', 'GET', `/sessions${whereQuery({ sessionToken: 'r:chosen' })}`)).toMatchObject({ status: 200, body: { results: [] } });
  // Falsy values are refused like any other (GHSA-f6j3).
  const update = (body: Record<string, unknown>) => as('bob', 'PUT', `/sessions/${sessionIds.bob}`, body);
  expect(await update({ sessionToken: null })).toMatchObject(error(400, 105, 'Cannot set sessionToken on a Session.'));
  expect(await update({ installationId: '' })).toMatchObject(error(400, 105, 'Cannot set installationId on a Session.'));
  expect(await update({ expiresAt: null })).toMatchObject(error(400, 105, 'Cannot set expiresAt on a Session.'));
  expect(await update({ user: null })).toMatchObject(error(400, 105, 'Cannot set the user of a Session to another user.'));
  expect(await update({ ACL: null })).toMatchObject(error(400, 105, 'Cannot set ACL on a Session.'));

  // Positive controls: bob annotates his own session; the master key sets a lifetime.
  expect((await update({ device: 'phone' })).status).toBe(200);
  const expiresAt = { __type: 'Date', iso: '2030-01-01T00:00:00.000Z' };
  const made = await as('master', 'POST', '/sessions', { user: pointer('_User', ids.bob!), expiresAt });
  expect(made).toMatchObject({ status: 201, body: { expiresAt, user: pointer('_User', ids.bob!) } });
});

it('GHSA-g4v2-qx3q-4p64: GET /sessions/me hides the fields _Session protectedFields hide', async () => {
  const own = await createTestApp(server, 'advisories-sessions');
  const schema = await own.call('POST', '/schemas/_Session', { master: true, body: { classLevelPermissions: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true }, protectedFields: { '*': ['installationId'] } } } });
  expect(schema.status).toBe(200);
  const { sessionToken } = await signUp(own, 'carol', { 'X-Parse-Installation-Id': 'carol-phone' });
  const me = await own.call('GET', '/sessions/me', { sessionToken });
  expect(me.status).toBe(200);
  expect(me.body).toMatchObject({ sessionToken });
  expect(me.body).not.toHaveProperty('installationId');
  expect((await own.call('GET', `/sessions/${me.body.objectId}`, { sessionToken })).body).not.toHaveProperty('installationId');
  // Positive control: the master key sees the field, as for GET /sessions/<id>.
  expect((await own.call('GET', '/sessions/me', { master: true, sessionToken })).body).toMatchObject({ installationId: 'carol-phone' });
});

it('session tokens: another app’s, an expired one and a logged-out one answer 209 (Parse Server’s session rules; its #10194 fixed expiry on cache hits)', async () => {
  const invalid = error(400, 209, 'Invalid session token');
  const other = await createTestApp(server, 'advisories-other');
  expect(await other.call('GET', '/users/me', { sessionToken: tokens.alice })).toMatchObject(invalid);
  const expired = await as('master', 'POST', '/sessions', { user: pointer('_User', ids.alice!), expiresAt: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' } });
  expect(await app.call('GET', '/users/me', { sessionToken: expired.body.sessionToken })).toMatchObject(error(400, 209, 'Session token is expired.'));
  expect(await app.call('GET', '/classes/Note', { sessionToken: expired.body.sessionToken })).toMatchObject(error(400, 209, 'Session token is expired.'));
  const login = await app.call('POST', '/login', { body: { username: 'bob', password: 'bob-pw' } });
  expect((await app.call('GET', '/users/me', { sessionToken: login.body.sessionToken })).status).toBe(200);
  expect((await app.call('POST', '/logout', { sessionToken: login.body.sessionToken })).status).toBe(200);
  expect(await app.call('GET', '/users/me', { sessionToken: login.body.sessionToken })).toMatchObject(invalid);
  expect(await app.call('GET', '/classes/Note', { sessionToken: login.body.sessionToken })).toMatchObject(invalid);
  // Positive control: a live session of this app.
  expect(await as('alice', 'GET', '/users/me')).toMatchObject({ status: 200, body: { username: 'alice', sessionToken: tokens.alice } });
});

it('GHSA-2m6g-crv8-p3c6, GHSA-72hp-qff8-4pvv, GHSA-r2m8-pxm9-9c4g: internal and protected fields are no query constraint, sort key or selectable key', async () => {
  await as('master', 'POST', '/schemas/Card', { fields: { name: { type: 'String' }, card: { type: 'Object' } }, classLevelPermissions: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true }, protectedFields: { '*': ['card'] } } });
  await as('master', 'POST', '/classes/Card', { name: 'visa', card: { number: '4111' } });
  expect(await as(undefined, 'GET', `/users${whereQuery({ _hashed_password: { $exists: true } })}`)).toMatchObject(error(400, 105, 'Invalid key name: _hashed_password'));
  expect(await as(undefined, 'GET', `/users${whereQuery({ $or: [{ username: 'x' }, { _hashed_password: { $regex: '^\\$2' } }] })}`)).toMatchObject(error(400, 105, 'Invalid key name: _hashed_password'));
  const notAllowed = (verb: string, key: string, className: string) => error(400, 119, `This user is not allowed to ${verb} ${key} on class ${className}`);
  expect(await as('bob', 'GET', `/users${whereQuery({ $or: [{ username: 'x' }, { email: { $regex: '^alice' } }] })}`)).toMatchObject(notAllowed('query', 'email', '_User'));
  expect(await as('bob', 'GET', '/users?order=email')).toMatchObject(notAllowed('sort by', 'email', '_User'));
  expect(await as(undefined, 'GET', `/classes/Card${whereQuery({ 'card.number': { $regex: '^4' } })}`)).toMatchObject(notAllowed('query', 'card.number', 'Card'));
  const selected = (await as('bob', 'GET', `/users${whereQuery({ username: 'alice' }, { keys: 'email,_hashed_password,password,authData' })}`)).body.results;
  expect(selected).toHaveLength(1);
  expect(Object.keys(selected[0]).sort()).toEqual(['ACL', 'createdAt', 'objectId', 'updatedAt']);
  // Positive controls: the master key filters and sorts on them; a user reads its own email.
  expect((await as('master', 'GET', `/classes/Card${whereQuery({ 'card.number': { $regex: '^4' } })}`)).body.results).toHaveLength(1);
  expect((await as('master', 'GET', `/users${whereQuery({ email: { $regex: '^alice' } }, { order: 'email' })}`)).body.results).toHaveLength(1);
  expect((await as('alice', 'GET', `/users/${ids.alice}?keys=email`)).body.email).toBe('alice@example.test');
});

it('GHSA-wmwx-jr2p-4j4r: $relatedTo through an owner the caller may not read matches nothing, and count leaks no ACL’d rows', async () => {
  const member = await as('master', 'POST', '/classes/Member', { name: 'm' });
  const team = await as('master', 'POST', '/classes/Team', {
    members: { __op: 'AddRelation', objects: [pointer('Member', member.body.objectId)] },
    ACL: { [ids.alice!]: { read: true } },
  });
  const related = `/classes/Member${whereQuery({ $relatedTo: { object: pointer('Team', team.body.objectId), key: 'members' } }, { count: '1' })}`;
  expect((await as('bob', 'GET', related)).body).toEqual({ results: [], count: 0 });
  expect((await as('bob', 'GET', '/classes/Team?count=1&limit=0')).body).toEqual({ results: [], count: 0 });
  // Positive control: alice may read the team, so she sees its members and counts it.
  expect((await as('alice', 'GET', related)).body).toMatchObject({ results: [{ name: 'm' }], count: 1 });
  expect((await as('alice', 'GET', '/classes/Team?count=1&limit=0')).body).toEqual({ results: [], count: 1 });
});

it('GHSA-5f92-jrq3-28rc, GHSA-8xq9-g7ch-35hg: no _Join or other internal tables through /classes, and no custom objectId', async () => {
  for (const who of [undefined, 'master'] as const) {
    const res = await as(who, 'POST', '/classes/_Join:users:_Role', { owningId: 'x', relatedId: ids.bob });
    expect(res).toMatchObject({ status: 400, body: { code: 103 } });
    expect((await as(who, 'GET', '/classes/_SCHEMA')).body.code).toBe(103);
  }
  const custom = error(400, 105, 'objectId is an invalid field name.');
  expect(await as('master', 'POST', '/classes/Note', { objectId: 'role:admin' })).toMatchObject(custom);
  expect(await as('alice', 'POST', '/roles', { objectId: 'admin', name: 'admin', ACL: { '*': { read: true } } })).toMatchObject(custom);
  // Positive control: roles change membership through their relations, and get generated ids.
  const role = await as('alice', 'POST', '/roles', { name: 'admins', ACL: { [ids.alice!]: { read: true, write: true } }, users: { __op: 'AddRelation', objects: [pointer('_User', ids.bob!)] } });
  expect(role.status).toBe(201);
  expect(role.body.objectId).toMatch(/^[A-Za-z0-9]{10}$/);
});

it('GHSA-9prm-jqwx-45x9, GHSA-v5hf-f4c3-m5rv, GHSA-hcj7-6gxh-24ww, GHSA-42ph-pf9q-cr72: no uploads that browsers render as active content (130)', async () => {
  const upload = (name: string, type: string, body = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') =>
    app.call('POST', `/files/${name}`, { sessionToken: tokens.alice, rawBody: body, headers: { 'content-type': type } });
  const disabled = (ext: string) => error(400, 130, `File upload of extension ${ext} is disabled.`);
  expect(await upload('a.svg', 'image/svg+xml')).toMatchObject(disabled('svg'));
  expect(await upload('a.SVGZ', 'application/octet-stream')).toMatchObject(disabled('svgz'));
  expect(await upload('a.xml', 'text/plain')).toMatchObject(disabled('xml'));
  expect(await upload('a.xhtml', 'text/plain')).toMatchObject(disabled('xhtml'));
  expect(await upload('a.html', 'text/html')).toMatchObject(disabled('html'));
  // A name without an extension is served with its declared type, so that type's subtype counts too.
  expect(await upload('feed', 'text/xml')).toMatchObject(disabled('xml'));
  expect(await upload('feed', 'image/svg+xml; charset=utf-8')).toMatchObject(disabled('svg'));
  // A known extension decides the type served (as Parse Server's FilesController), whatever was declared.
  const text = await upload('a.txt', 'image/svg+xml; charset=utf-8');
  expect(text.status).toBe(201);
  expect((await fetch(text.body.url)).headers.get('content-type')).toBe('text/plain; charset=utf-8');
  // Positive controls: other files are stored and served with their type.
  const png = await upload('a.png', 'image/png', 'not really a png');
  expect(png.status).toBe(201);
  expect((await fetch(png.body.url)).headers.get('content-type')).toBe('image/png');
  expect((await upload('notes.txt', 'text/plain', 'hello')).status).toBe(201);
});

it('GHSA-6hh7-46r2-vf29, GHSA-5j86-7r7m-p8h6, GHSA-4263-jgmp-7pf4: function and job names from the prototype chain are unknown (141)', async () => {
  const fns = await createTestApp(server, 'advisories-functions');
  await deploy(fns, "Parse.Cloud.define('hello', () => 'hi');\nParse.Cloud.job('nightly', () => 'done');\n");
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    expect(await fns.call('POST', `/functions/${name}`, { body: {} })).toMatchObject(error(400, 141, `Invalid function: "${name}"`));
    expect(await fns.call('POST', `/jobs/${name}`, { master: true, body: {} })).toMatchObject(error(400, 141, `Invalid job: "${name}"`));
  }
  // Positive controls: the defined function and job run.
  expect(await fns.call('POST', '/functions/hello', { body: {} })).toMatchObject({ status: 200, body: { result: 'hi' } });
  expect((await fns.call('POST', '/jobs/nightly', { master: true, body: {} })).status).toBe(200);
});

it('GHSA-9cp7-3q5w-j92g, GHSA-c442-97qw-j6c6, GHSA-qpr4-jrj4-6f27, GHSA-gqpp-xgvh-9h7h, GHSA-p2w6-rmh7-w8q3: field names and patterns never reach SQL', async () => {
  await as(undefined, 'POST', '/classes/Doc', { title: 'a', meta: { score: 1 } });
  const regex = await as(undefined, 'GET', `/classes/Doc${whereQuery({ title: { $regex: '(' } })}`);
  expect(regex).toMatchObject(error(400, 102, 'Invalid $regex of title: missing closing ): `(`'));
  expect(await as(undefined, 'GET', `/classes/Doc${whereQuery({ "meta.score') OR 1=1 --": 1 })}`)).toMatchObject({ status: 400, body: { code: 105 } });
  expect(await as(undefined, 'GET', `/classes/Doc?order=${encodeURIComponent('title"; DROP TABLE x; --')}`)).toMatchObject({ status: 400, body: { code: 105 } });
  expect(await as(undefined, 'POST', '/classes/Doc', { "meta.score'": { __op: 'Increment', amount: 1 } })).toMatchObject({ status: 400, body: { code: 105 } });
  const pipeline = encodeURIComponent(JSON.stringify([{ $group: { _id: "$title') --" } }]));
  expect(await as('master', 'GET', `/aggregate/Doc?pipeline=${pipeline}`)).toMatchObject({ status: 400, body: { code: 102 } });
  // Positive controls: the same query, order, update and aggregation with real names.
  expect((await as(undefined, 'GET', `/classes/Doc${whereQuery({ 'meta.score': 1, title: { $regex: '^a' } }, { order: '-title' })}`)).body.results).toHaveLength(1);
  const grouped = await as('master', 'GET', `/aggregate/Doc?pipeline=${encodeURIComponent(JSON.stringify([{ $group: { _id: '$title' } }]))}`);
  expect(grouped.body.results).toEqual([{ objectId: 'a' }]);
});

it('GHSA-9xp9-j92r-p88v, GHSA-cgxm-vr2f-6fj8: deeply nested query operators answer 102, not a crash', async () => {
  const nest = (depth: number): Record<string, unknown> => (depth === 0 ? { title: 'a' } : { $or: [nest(depth - 1), { title: 'never' }] });
  expect(await as(undefined, 'GET', `/classes/Doc${whereQuery(nest(50))}`)).toMatchObject(error(400, 102, 'The query is nested too deeply'));
  const sub = (depth: number): Record<string, unknown> =>
    depth === 0 ? { title: 'a' } : { parent: { $inQuery: { className: 'Doc', where: sub(depth - 1) } } };
  expect(await as(undefined, 'GET', `/classes/Doc${whereQuery(sub(30))}`)).toMatchObject(error(400, 102, 'The query is nested too deeply'));
  // Positive control: a reasonable nesting answers.
  expect((await as(undefined, 'GET', `/classes/Doc${whereQuery(nest(5))}`)).body.results).toHaveLength(1);
});

it('GHSA-8w3j-g983-8jh5, GHSA-wjqw-r9x4-j59v: logins do not tell unknown users from wrong passwords; empty authData is no credential', async () => {
  const invalid = error(404, 101, 'Invalid username/password.');
  expect(await app.call('POST', '/login', { body: { username: 'nobody', password: 'x' } })).toMatchObject(invalid);
  expect(await app.call('POST', '/login', { body: { username: 'alice', password: 'wrong' } })).toMatchObject(invalid);
  expect(await app.call('POST', '/users', { body: { authData: {} } })).toMatchObject(error(400, 200, 'bad or missing username'));
  expect(await app.call('POST', '/users', { body: { username: 'eve', authData: { anonymous: {} } } })).toMatchObject(error(400, 201, 'password is required'));
  // Positive controls: the right password logs in, and the user carries no authData.
  const login = await app.call('POST', '/login', { body: { username: 'alice', password: 'alice-pw' } });
  expect(login).toMatchObject({ status: 200, body: { username: 'alice' } });
  expect(login.body).not.toHaveProperty('authData');
});
