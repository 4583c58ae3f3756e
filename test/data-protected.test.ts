/**
 * Class-level `protectedFields` (Parse docs, "Class Level Permissions", "Protected Fields") over
 * raw HTTP against a running server: every scope the caller belongs to counts (`*`, `authenticated`,
 * the user's id, `role:`, `userField:`), the hidden fields are their intersection, default fields stay,
 * included objects and `_User` are covered, and the master key sees everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
let articleId: string;

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const fieldsOf = (object: Record<string, unknown>) => Object.keys(object).filter((k) => !['createdAt', 'updatedAt'].includes(k)).sort();

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'protected-fields');
  for (const name of ['alice', 'bob', 'carol', 'dave']) {
    // Publicly readable, as enforcePrivateUsers (on by default) would not make them: these tests read each other's objects.
    const res = await app.call('POST', '/users', { body: { username: name, password: `${name}-password`, email: `${name}@example.test`, ACL: { '*': { read: true } } } });
    expect(res.status).toBe(201);
    tokens[name] = res.body.sessionToken;
    ids[name] = res.body.objectId;
  }
  const role = await app.call('POST', '/roles', {
    master: true,
    body: { name: 'Editors', ACL: { '*': { read: true } }, users: { __op: 'AddRelation', objects: [pointer('_User', ids.carol!)] } },
  });
  expect(role.status).toBe(201);
  const schema = await app.call('POST', '/schemas/Article', {
    master: true,
    body: {
      fields: { preview: { type: 'String' }, article: { type: 'String' }, secret: { type: 'String' }, owner: { type: 'Pointer', targetClass: '_User' } },
      classLevelPermissions: {
        find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true },
        protectedFields: {
          '*': ['article', 'secret', 'owner'],
          authenticated: ['secret', 'owner'],
          [ids.dave!]: ['owner'],
          'role:Editors': [],
          'userField:owner': [],
        },
      },
    },
  });
  expect(schema.status).toBe(200);
  const article = await app.call('POST', '/classes/Article', { master: true, body: { preview: 'Lorem', article: 'Lorem ipsum', secret: 's3cret', owner: pointer('_User', ids.alice!) } });
  articleId = article.body.objectId;
  await app.call('POST', '/classes/Comment', { master: true, body: { text: 'nice', article: pointer('Article', articleId) } });
});
afterAll(async () => server?.close());

describe('protectedFields', () => {
  it('hides, for each caller, the fields every scope it belongs to lists', async () => {
    const get = async (who?: string) => (await app.call('GET', `/classes/Article/${articleId}`, { sessionToken: who ? tokens[who] : undefined })).body;
    // Anyone: only `*` applies (objectId, a default field, cannot be protected: 107).
    expect(fieldsOf(await get())).toEqual(['objectId', 'preview']);
    // A signed-in user: `*` and `authenticated` intersect to secret and owner.
    expect(fieldsOf(await get('bob'))).toEqual(['article', 'objectId', 'preview']);
    // A user named by id: `*`, `authenticated` and the id intersect to owner alone.
    expect(fieldsOf(await get('dave'))).toEqual(['article', 'objectId', 'preview', 'secret']);
    // A role member: `role:Editors` lists nothing, so nothing is hidden.
    expect(fieldsOf(await get('carol'))).toEqual(['article', 'objectId', 'owner', 'preview', 'secret']);
    // The user the object's owner field points to: `userField:owner` lists nothing.
    expect(fieldsOf(await get('alice'))).toEqual(['article', 'objectId', 'owner', 'preview', 'secret']);
    // The master key sees everything.
    const master = (await app.call('GET', `/classes/Article/${articleId}`, { master: true })).body;
    expect(master).toMatchObject({ secret: 's3cret', article: 'Lorem ipsum', owner: pointer('_User', ids.alice!) });
  });

  it('applies to queries and to included objects alike', async () => {
    const found = await app.call('GET', '/classes/Article', { sessionToken: tokens.bob });
    expect(found.body.results.map(fieldsOf)).toEqual([['article', 'objectId', 'preview']]);
    const comments = await app.call('GET', `/classes/Comment?include=article`);
    expect(comments.status).toBe(200);
    const included = comments.body.results[0].article;
    expect(included).toMatchObject({ __type: 'Object', className: 'Article', preview: 'Lorem' });
    expect(included.secret).toBeUndefined();
    expect(included.article).toBeUndefined();
  });

  it('keeps _User emails to their owner and the master key, as Parse Server does by default', async () => {
    const byOther = await app.call('GET', `/users/${ids.alice}`, { sessionToken: tokens.bob });
    expect(byOther.body.username).toBe('alice');
    expect(byOther.body.email).toBeUndefined();
    const bySelf = await app.call('GET', `/users/${ids.alice}`, { sessionToken: tokens.alice });
    expect(bySelf.body.email).toBe('alice@example.test');
    const byMaster = await app.call('GET', `/users?where=${encodeURIComponent(JSON.stringify({ username: 'bob' }))}`, { master: true });
    expect(byMaster.body.results[0].email).toBe('bob@example.test');
  });
});
