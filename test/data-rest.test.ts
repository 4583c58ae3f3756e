import { MAX_BOUND_VALUES } from '../src/data/query/compile.js';
import { onPostgres, pgQuery } from './helpers/storage.js';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';

let server: TestServer;
let app: TestApp;
beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'rest-tests');
});
afterAll(async () => server.close());

const count = async (className: string, where: unknown = {}) =>
  (await app.call('GET', `/classes/${className}${whereQuery(where, { count: '1', limit: '0' })}`, { master: true })).body.count as number;

describe('objects', () => {
  it('creates with Location, 10-character objectId and ISO dates; reads, updates and deletes', async () => {
    const created = await app.call('POST', '/classes/Project', { body: { name: 'Relaunch', duration: 6, fees: 1200.5, level: 'high' } });
    expect(created.status).toBe(201);
    expect(created.body.objectId).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(created.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(created.headers.get('location')).toBe(`${app.apiURL}/classes/Project/${created.body.objectId}`);

    const read = await app.call('GET', `/classes/Project/${created.body.objectId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ objectId: created.body.objectId, createdAt: created.body.createdAt, updatedAt: created.body.createdAt, name: 'Relaunch', duration: 6, fees: 1200.5, level: 'high' });

    const updated = await app.call('PUT', `/classes/Project/${created.body.objectId}`, { body: { duration: { __op: 'Increment', amount: 2 }, level: { __op: 'Delete' }, tags: { __op: 'AddUnique', objects: ['a', 'b', 'a'] } } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ updatedAt: expect.stringMatching(/Z$/), duration: 8, tags: ['a', 'b'] });
    const after = (await app.call('GET', `/classes/Project/${created.body.objectId}`)).body;
    expect(after.duration).toBe(8);
    expect(after).not.toHaveProperty('level');

    const deleted = await app.call('DELETE', `/classes/Project/${created.body.objectId}`);
    expect(deleted).toMatchObject({ status: 200, body: {} });
    expect(await app.call('GET', `/classes/Project/${created.body.objectId}`)).toMatchObject({ status: 404, body: { code: 101 } });
  });

  it('applies Add, Remove and the Batch operator, and Relation operators', async () => {
    const { body } = await app.call('POST', '/classes/Post', { body: { tags: ['x'] } });
    const u1 = (await app.call('POST', '/classes/Reader', { body: { n: 1 } })).body.objectId;
    const u2 = (await app.call('POST', '/classes/Reader', { body: { n: 2 } })).body.objectId;
    const put = await app.call('PUT', `/classes/Post/${body.objectId}`, {
      body: {
        tags: { __op: 'Batch', ops: [{ __op: 'Add', objects: ['y', 'z'] }, { __op: 'Remove', objects: ['x'] }] },
        readers: { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: [{ __type: 'Pointer', className: 'Reader', objectId: u1 }, { __type: 'Pointer', className: 'Reader', objectId: u2 }] }, { __op: 'RemoveRelation', objects: [{ __type: 'Pointer', className: 'Reader', objectId: u2 }] }] },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.tags).toEqual(['y', 'z']);
    const related = await app.call('GET', `/classes/Reader${whereQuery({ $relatedTo: { object: { __type: 'Pointer', className: 'Post', objectId: body.objectId }, key: 'readers' } })}`);
    expect(related.body.results.map((r: { objectId: string }) => r.objectId)).toEqual([u1]);
    const post = (await app.call('GET', `/classes/Post/${body.objectId}`)).body;
    expect(post.readers).toEqual({ __type: 'Relation', className: 'Reader' });
  });

  it('learns the schema from the first write and refuses another type with 111', async () => {
    await app.call('POST', '/classes/Typed', { body: { score: 1 } });
    const schema = await app.call('GET', '/schemas/Typed', { master: true });
    expect(schema.body.fields.score).toEqual({ type: 'Number' });
    const wrong = await app.call('POST', '/classes/Typed', { body: { score: 'high' } });
    expect(wrong).toMatchObject({ status: 400, body: { code: 111, error: expect.stringContaining('expected Number but got String') } });
    expect(await count('Typed')).toBe(1);
  });

  it.each([
    ['a bad class name', '/classes/9lives', {}, 103],
    ['a bad field name', '/classes/Good', { 'bad-name': 1 }, 105],
    ['an objectId on create', '/classes/Good', { objectId: 'abc' }, 105],
    ['a Pointer without objectId', '/classes/Good', { owner: { __type: 'Pointer', className: 'User' } }, 111],
    ['an invalid Date', '/classes/Good', { when: { __type: 'Date', iso: 'yesterday' } }, 111],
    ['an ACL that is not read/write booleans', '/classes/Good', { ACL: { '*': { read: 'yes' } } }, 111],
    ['an ACL entry with another permission', '/classes/Good', { ACL: { '*': { delete: true } } }, 111],
    ['an unknown __type', '/classes/Good', { x: { __type: 'Money', amount: 3 } }, 111],
    ['a GeoPoint out of range', '/classes/Good', { at: { __type: 'GeoPoint', latitude: 91, longitude: 0 } }, 111],
    ['an unknown __op', '/classes/Good', { x: { __op: 'Multiply', amount: 2 } }, 107],
    ['Increment with a string', '/classes/Good', { x: { __op: 'Increment', amount: 'two' } }, 111],
  ])('refuses %s with a 4xx Parse error and writes nothing', async (_what, url, body, code) => {
    const before = await count('Good');
    const res = await app.call('POST', url, { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code, error: expect.any(String) });
    expect(await count('Good')).toBe(before);
  });

  it('answers invalid JSON with 107 and an unknown path with 404', async () => {
    expect(await app.call('POST', '/classes/Good', { rawBody: '{"a":', headers: { 'content-type': 'application/json' } })).toMatchObject({ status: 400, body: { code: 107 } });
    expect((await app.call('GET', '/nowhere')).status).toBe(404);
  });

  it('stores and finds a string holding U+0000 on SQLite; on PostgreSQL, which cannot, answers 142, writes nothing, and refuses such a query', async () => {
    const before = await count('Nul');
    const value = 'before\u0000after';
    const created = await app.call('POST', '/classes/Nul', { body: { s: value } });
    const existing = await app.call('POST', '/classes/Nul', { body: { s: 'plain' } });
    expect(existing.status).toBe(201);
    const updated = await app.call('PUT', `/classes/Nul/${existing.body.objectId}`, { body: { s: value } });
    if (onPostgres) {
      for (const res of [created, updated]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ code: 142, error: expect.stringContaining('U+0000') });
      }
      expect(await count('Nul')).toBe(before + 1);
      // Nor can it compare one: a query holding it is refused the same way, by value, pattern or sub-key.
      for (const where of [{ s: value }, { s: { $regex: 'before\u0000' } }, { 'o.k': value }]) {
        const found = await app.call('GET', `/classes/Nul${whereQuery(where)}`);
        expect(found.status).toBe(400);
        expect(found.body).toEqual({ code: 142, error: expect.stringContaining('U+0000') });
      }
      expect((await app.call('GET', `/classes/Nul/${existing.body.objectId}`)).body.s).toBe('plain');
    } else {
      expect(created.status).toBe(201);
      expect(updated.status).toBe(200);
      expect((await app.call('GET', `/classes/Nul/${created.body.objectId}`)).body.s).toBe(value);
      expect((await app.call('GET', `/classes/Nul/${existing.body.objectId}`)).body.s).toBe(value);
      expect((await app.call('GET', `/classes/Nul${whereQuery({ s: value })}`)).body.results).toHaveLength(2);
    }
  });
});

describe('queries', () => {
  beforeAll(async () => {
    for (let i = 0; i < 30; i++) {
      await app.call('POST', '/classes/Item', { body: { n: i, even: i % 2 === 0, tags: i % 3 === 0 ? ['b', 'c'] : ['a'], label: `item ${i}` } });
    }
  });

  it('filters, orders, pages and counts exactly in SQL', async () => {
    const res = await app.call('GET', `/classes/Item${whereQuery({ n: { $gte: 10, $lt: 20 }, even: true }, { order: '-n', limit: '3', skip: '1', count: '1' })}`);
    expect(res.status).toBe(200);
    expect(res.body.results.map((o: { n: number }) => o.n)).toEqual([16, 14, 12]);
    expect(res.body.count).toBe(5);
  });

  it('takes a limit or skip past what the database can hold as every row or none, never a 500', async () => {
    const huge = '99999999999999999999';
    const all = await app.call('GET', `/classes/Item${whereQuery({ n: { $lt: 5 } }, { limit: huge, order: 'n' })}`);
    expect(all.status).toBe(200);
    expect(all.body.results.map((o: { n: number }) => o.n)).toEqual([0, 1, 2, 3, 4]);
    for (const params of [{ skip: huge }, { skip: huge, limit: huge, count: '1' }]) {
      const none = await app.call('GET', `/classes/Item${whereQuery({ n: { $lt: 5 } }, params)}`);
      expect(none.status).toBe(200);
      expect(none.body.results).toEqual([]);
    }
    // The JS SDK's body form carries numbers.
    const sdk = await app.call('POST', '/classes/Item', { body: { _method: 'GET', where: { n: { $lt: 5 } }, skip: 1e300, limit: 1e300 } });
    expect(sdk.status).toBe(200);
    expect(sdk.body.results).toEqual([]);
  });

  it('count is exact on a new class, and equality on an array field means "contains"', async () => {
    expect(await count('Item')).toBe(30);
    expect(await count('Item', { tags: 'b' })).toBe(10);
  });

  it('a $in of as many values as fit answers; one of more answers 102 saying how to split it, never a 500', async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => i);
    const fits = await app.call('POST', '/classes/Item', { body: { _method: 'GET', where: { n: { $in: values(MAX_BOUND_VALUES) } }, count: 1, limit: 0 } });
    expect(fits.status, JSON.stringify(fits.body).slice(0, 200)).toBe(200);
    expect(fits.body.count).toBe(30);
    const tooMany = await app.call('POST', '/classes/Item', { body: { _method: 'GET', where: { n: { $nin: values(40_000) } } } });
    expect(tooMany).toMatchObject({ status: 400, body: { code: 102, error: expect.stringContaining('split a long $in or $nin') } });
    expect((await app.call('GET', '/classes/Item?limit=1')).status).toBe(200);
  });

  it('keeps two relations whose long names share their first 60 characters apart (PostgreSQL keeps 63 bytes of a name)', async () => {
    const stem = `r${'x'.repeat(59)}`;
    const [first, second] = [`${stem}First`, `${stem}Second`];
    const item = async () => (await app.call('POST', '/classes/Item', { body: { n: 100 } })).body.objectId as string;
    const [target, other] = [await item(), await item()];
    const pointer = (objectId: string) => ({ __type: 'Pointer', className: 'Item', objectId });
    const owner = await app.call('POST', '/classes/LongNames', {
      body: { [first]: { __op: 'AddRelation', objects: [pointer(target)] }, [second]: { __op: 'AddRelation', objects: [pointer(other)] } },
    });
    expect(owner.status, JSON.stringify(owner.body)).toBe(201);
    const related = (key: string) =>
      app.call('GET', `/classes/Item${whereQuery({ $relatedTo: { object: { __type: 'Pointer', className: 'LongNames', objectId: owner.body.objectId }, key } })}`);
    expect((await related(first)).body.results.map((o: { objectId: string }) => o.objectId)).toEqual([target]);
    expect((await related(second)).body.results.map((o: { objectId: string }) => o.objectId)).toEqual([other]);
  });

  it('keys and excludeKeys select fields', async () => {
    const res = await app.call('GET', `/classes/Item${whereQuery({ n: 3 }, { keys: 'n,label' })}`);
    expect(Object.keys(res.body.results[0]).sort()).toEqual(['createdAt', 'label', 'n', 'objectId', 'updatedAt']);
    const ex = await app.call('GET', `/classes/Item${whereQuery({ n: 3 }, { excludeKeys: 'tags' })}`);
    expect(ex.body.results[0]).not.toHaveProperty('tags');
  });

  it.each([
    ['an unknown parameter', { where: '{}', colour: 'red' }, 102],
    ['an unknown operator', { where: JSON.stringify({ n: { $near: 3 } }) }, 102],
    ['a negative limit', { limit: '-1' }, 102],
    ['a negative skip', { skip: '-5' }, 102],
    ['where that is not JSON', { where: '{n:' }, 102],
  ])('refuses %s with 102', async (_what, params, code) => {
    const res = await app.call('GET', `/classes/Item?${new URLSearchParams(params as Record<string, string>)}`);
    expect(res).toMatchObject({ status: 400, body: { code } });
  });

  it('include replaces pointers with their objects, nested', async () => {
    const owner = (await app.call('POST', '/classes/Owner', { body: { name: 'Ada' } })).body.objectId;
    const project = (await app.call('POST', '/classes/Proj', { body: { name: 'P', owner: { __type: 'Pointer', className: 'Owner', objectId: owner } } })).body.objectId;
    await app.call('POST', '/classes/Task', { body: { title: 'T', project: { __type: 'Pointer', className: 'Proj', objectId: project } } });
    const res = await app.call('GET', `/classes/Task?${new URLSearchParams({ include: 'project.owner' })}`);
    const task = res.body.results[0];
    expect(task.project).toMatchObject({ __type: 'Object', className: 'Proj', objectId: project, name: 'P' });
    expect(task.project.owner).toMatchObject({ __type: 'Object', className: 'Owner', name: 'Ada' });
  });
});

describe('batch', () => {
  it('runs requests in order, with or without the mount path, each with its own result', async () => {
    const res = await app.call('POST', '/batch', {
      body: {
        requests: [
          { method: 'POST', path: '/data/classes/Batched', body: { n: 1 } },
          { method: 'POST', path: '/classes/Batched', body: { n: 'wrong type' } },
          { method: 'POST', path: '/classes/Batched', body: { n: 3 } },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body[0].success.objectId).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(res.body[1].error).toMatchObject({ code: 111 });
    expect(res.body[2].success.objectId).toBeDefined();
    expect(await count('Batched')).toBe(2);
  });

  it('a failed transactional batch writes nothing and answers a Parse error body', async () => {
    const before = await count('Batched');
    const res = await app.call('POST', '/batch', {
      body: {
        transaction: true,
        requests: [
          { method: 'POST', path: '/classes/Batched', body: { n: 10 } },
          { method: 'POST', path: '/classes/Batched', body: { n: 'oops' } },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 111, error: expect.any(String) });
    expect(await count('Batched')).toBe(before);
  });
});

describe('schemas', () => {
  it('needs the master key', async () => {
    expect(await app.call('GET', '/schemas')).toMatchObject({ status: 403, body: { code: 119 } });
  });

  it('creates a class with fields, CLP and a real index; adds and deletes fields; drops only an empty class', async () => {
    const created = await app.call('POST', '/schemas/Indexed', {
      master: true,
      body: { className: 'Indexed', fields: { score: { type: 'Number' }, owner: { type: 'Pointer', targetClass: '_User' } }, indexes: { by_score: { score: 1 } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.indexes).toEqual({ _id_: { _id: 1 }, by_score: { score: 1 } });
    if (onPostgres) {
      const [index] = await pgQuery(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'idx_Indexed_by_score'`, [`app_${app.appId}`], server.platform.config.databaseUrl);
      // Over the field's typed column, generated from `data` (src/data/storage/postgres/layout.ts).
      expect(index?.indexdef).toContain('"_n:score"');
    } else {
      expect(fs.existsSync(path.join(server.home, 'apps', app.appId, 'data.db'))).toBe(true);
    }

    const changed = await app.call('PUT', '/schemas/Indexed', { master: true, body: { fields: { note: { type: 'String' }, owner: { __op: 'Delete' } } } });
    expect(changed.body.fields).toMatchObject({ score: { type: 'Number' }, note: { type: 'String' } });
    expect(changed.body.fields).not.toHaveProperty('owner');

    await app.call('POST', '/classes/Indexed', { body: { score: 1 } });
    expect(await app.call('DELETE', '/schemas/Indexed', { master: true })).toMatchObject({ status: 400, body: { code: 255 } });
    expect(await app.call('POST', '/schemas/Indexed', { master: true, body: {} })).toMatchObject({ status: 400, body: { code: 103 } });
  });

  it('enforces class-level permissions for clients, not for the master key', async () => {
    await app.call('POST', '/schemas/Locked', { master: true, body: { classLevelPermissions: { find: {}, get: {}, create: {}, update: {}, delete: {}, count: {}, addField: {} } } });
    expect(await app.call('POST', '/classes/Locked', { body: { a: 1 } })).toMatchObject({ status: 400, body: { code: 119 } });
    expect((await app.call('GET', '/classes/Locked')).body).toMatchObject({ code: 119 });
    expect((await app.call('POST', '/classes/Locked', { master: true, body: { a: 1 } })).status).toBe(201);
  });

  it('reports new classes and fields as data arrives', async () => {
    await app.call('POST', '/classes/Fresh', { body: { first: 'x' } });
    await app.call('POST', '/classes/Fresh', { body: { second: true } });
    const all = await app.call('GET', '/schemas', { master: true });
    const fresh = all.body.results.find((c: { className: string }) => c.className === 'Fresh');
    expect(fresh.fields).toMatchObject({ objectId: { type: 'String' }, first: { type: 'String' }, second: { type: 'Boolean' } });
  });
});

describe('credentials', () => {
  it('refuses an unknown application id, a wrong key or no key with 403 unauthorized', async () => {
    const noApp = await fetch(`${app.apiURL}/classes/X`, { headers: { 'X-Parse-Application-Id': 'nope', 'X-Parse-REST-API-Key': app.keys.restKey } });
    expect(noApp.status).toBe(403);
    expect(await noApp.json()).toEqual({ error: 'unauthorized' });
    const wrongKey = await fetch(`${app.apiURL}/classes/X`, { headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': 'wrong' } });
    expect(wrongKey.status).toBe(403);
    const noKey = await fetch(`${app.apiURL}/classes/X`, { headers: { 'X-Parse-Application-Id': app.appId } });
    expect(noKey.status).toBe(403);
  });

  it('accepts X-Backend-* headers and the JS SDK\'s text/plain body with _method', async () => {
    const viaBackend = await fetch(`${app.apiURL}/classes/Item?limit=1`, { headers: { 'X-Backend-Application-Id': app.appId, 'X-Backend-JavaScript-Key': app.keys.javascriptKey } });
    expect(viaBackend.status).toBe(200);
    const viaBody = await fetch(`${app.apiURL}/classes/Item`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ _method: 'GET', _ApplicationId: app.appId, _JavaScriptKey: app.keys.javascriptKey, where: { n: 2 }, limit: 5 }),
    });
    expect(viaBody.status).toBe(200);
    expect((await viaBody.json()).results.map((o: { n: number }) => o.n)).toEqual([2]);
  });

  it('answers CORS preflights as Parse Server does', async () => {
    const res = await fetch(`${app.apiURL}/classes/Item`, { method: 'OPTIONS', headers: { origin: 'http://example.test', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('X-Parse-Application-Id');
    expect(res.headers.get('access-control-allow-methods')).toContain('PUT');
    // A simple answer needs only the origin and exposed headers; the preflight list stays off it.
    const simple = await fetch(`${app.apiURL}/health`, { headers: { origin: 'http://example.test' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    expect(simple.headers.get('access-control-allow-headers')).toBeNull();
  });
});

describe('callBackendAPI', () => {
  it('runs calls in order with the master key and answers each code and body', async () => {
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, {
      token: server.alice,
      body: {
        requests: [
          { method: 'GET', url: '/schemas', body: {} },
          { method: 'POST', url: '/classes/ToDo', body: { title: 'Write tests', isCompleted: false } },
          { method: 'GET', url: `/classes/ToDo?${new URLSearchParams({ where: JSON.stringify({ isCompleted: false }) })}`, body: {} },
          { method: 'GET', url: '/classes/ToDo', body: { where: { title: 'nothing' }, count: 1 } },
          { method: 'POST', url: '/classes/ToDo', body: { title: 42 } },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    const { responses } = res.json() as { responses: Array<{ code: number; body: any }> };
    expect(responses.map((r) => r.code)).toEqual([200, 201, 200, 200, 400]);
    expect(responses[0]!.body.results).toBeInstanceOf(Array);
    expect(responses[2]!.body.results[0].title).toBe('Write tests');
    expect(responses[3]!.body).toEqual({ results: [], count: 0 });
    expect(responses[4]!.body.code).toBe(111);
  });

  it('sends a GraphQL document to POST /graphql with the master key: queries, a mutation seen through REST, introspection', async () => {
    const graphql = (query: string, variables?: Record<string, unknown>) => ({ method: 'POST', url: '/graphql', body: { query, ...(variables ? { variables } : {}) } });
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, {
      token: server.alice,
      body: {
        requests: [
          { method: 'POST', url: '/classes/Plant', body: { name: 'fern', height: 30 } },
          graphql('{ health }'),
          graphql('mutation Make($fields: CreatePlantFieldsInput) { createPlant(input: { fields: $fields }) { plant { objectId name height } } }', { fields: { name: 'moss', height: 2 } }),
          graphql('{ plants(where: { height: { lessThan: 10 } }) { count edges { node { name } } } }'),
          graphql('{ __schema { queryType { name } } }'),
          { method: 'GET', url: '/classes/Plant', body: { where: { name: 'moss' } } },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    const { responses } = res.json() as { responses: Array<{ code: number; body: any }> };
    expect(responses.map((r) => r.code)).toEqual([201, 200, 200, 200, 200, 200]);
    expect(responses[1]!.body).toEqual({ data: { health: true } });
    const made = responses[2]!.body.data.createPlant.plant;
    expect(made).toMatchObject({ name: 'moss', height: 2 });
    expect(responses[3]!.body.data.plants).toEqual({ count: 1, edges: [{ node: { name: 'moss' } }] });
    expect(responses[4]!.body.data.__schema.queryType.name).toBe('Query');
    expect(responses[5]!.body.results.map((r: { objectId: string }) => r.objectId)).toEqual([made.objectId]);
  });

  it.each([
    ['/parse/classes/ToDo', /drop the prefix and send \/classes\/ToDo/],
    ['/1/classes/ToDo', /drop the prefix/],
    ['https://example.com/classes/ToDo', /relative to the data API root/],
  ])('refuses the url %s with a 400 that says what to send', async (url, pattern) => {
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, { token: server.alice, body: { requests: [{ method: 'GET', url, body: {} }] } });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(pattern);
  });

  it('takes the method in any letter case and a missing body as {}, and names fields one way', async () => {
    const call = (requests: unknown[]) => api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, { token: server.alice, body: { requests } });
    const ok = await call([{ method: 'get', url: '/schemas' }, { method: 'Post', url: '/classes/CaseTest', body: { n: 1 } }]);
    expect(ok.status).toBe(200);
    expect((ok.json() as { responses: Array<{ code: number }> }).responses.map((r) => r.code)).toEqual([200, 201]);
    const bad = await call([{ method: 'GET', url: '/schemas' }, { method: 'FETCH', url: '/schemas' }]);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^requests\[1\]\.method must be one of/);
    const badUrl = await call([{ method: 'GET', url: 'https://example.com/classes/ToDo' }]);
    expect(badUrl.text).toMatch(/^requests\[0\]\.url must be/);
  });

  it('gives application ids of letters and digits only, never starting with - or _', async () => {
    const { backendApps, accounts } = server.platform.services;
    const owner = (await accounts.findByLogin('alice'))!.id;
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await backendApps.create(owner, `ids-${i}`)).appId);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{32}$/);
  });

  it('refuses more than 50 calls, and another account\'s app', async () => {
    const many = Array.from({ length: 51 }, () => ({ method: 'GET', url: '/schemas', body: {} }));
    expect((await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, { token: server.alice, body: { requests: many } })).text).toMatch(/at most 50/);
    const foreign = await api(server, 'POST', `/backend-apps/${app.appId}/call-backend-api`, { token: server.bob, body: { requests: [{ method: 'GET', url: '/schemas', body: {} }] } });
    expect(foreign.status).toBe(400);
    expect(foreign.text).toMatch(/No Backend App/);
  });
});

describe.skipIf(onPostgres)('an app database held by another process', () => {
  it('answers 503 with a Parse error that says why, and serves again once the file is free', async () => {
    const { default: Database } = await import('better-sqlite3');
    const held = await createTestApp(server, 'held-elsewhere');
    const file = path.join(server.home, 'apps', held.appId, 'data.db');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Another process's connection, holding the file as the server holds its own.
    const other = new Database(file);
    other.pragma('locking_mode = EXCLUSIVE');
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE elsewhere (a)');
    try {
      const refused = await held.call('POST', '/classes/Note', { body: { text: 'x' } });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ code: 1, error: expect.stringContaining('held by another process') });
    } finally {
      other.close();
    }
    const created = await held.call('POST', '/classes/Note', { body: { text: 'x' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await held.call('GET', `/classes/Note/${created.body.objectId}`)).body).toMatchObject({ text: 'x' });
  });
});
