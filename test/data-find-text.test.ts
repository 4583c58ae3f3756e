/**
 * Finds answered as text (engine.ts `findText`, StorageReads.findText): when nothing in the answer
 * needs rewriting, the database writes each object's JSON from what it stores (`OBJECT_JSON` of
 * sqlite/reads.ts and postgres/reads.ts), and the engine splices it into the answer. These tests
 * hold that text to the object path's (`objectJson`, `GET` of one object): a fast-check property over
 * rows on the suite's database, and real finds over HTTP of every field type, with ACLs, counts and
 * the cases that must leave the text path (File fields, protected fields, `keys`, batches).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MASTER, PUBLIC } from '../src/data/auth/context.js';
import { DataEngine } from '../src/data/engine.js';
import { objectJson } from '../src/data/objects/output.js';
import type { StorageAdapter, StoredRow } from '../src/data/storage/adapter.js';
import { PostgresAdapter } from '../src/data/storage/postgres/adapter.js';
import { PostgresDatabase } from '../src/data/storage/postgres/database.js';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';
import { DataStore } from '../src/data/store.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/** Data keys as stored for a class whose name does not start with `_`: field names (types.ts FIELD_NAME) but the columns. */
const fieldName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,8}$/).filter((k) => !['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(k));
const acl = fc.option(fc.dictionary(fc.oneof(fc.constant('*'), fc.string(), fc.constant('role:Admins')), fc.record({ read: fc.boolean(), write: fc.boolean() }, { requiredKeys: [] })), { nil: null });
/** Whether a JSON value holds U+0000 in a string or a key, which PostgreSQL's jsonb refuses (docs/parse-differences.md). */
const holdsNul = (value: unknown): boolean => JSON.stringify(value).includes('\\u0000');
/** What a client reads of objectJson's answer: JSON has no -0, for one. */
const asClientReads = (row: StoredRow) => JSON.parse(JSON.stringify(objectJson(row, undefined, (name) => `/files/${name}`)));

describe(`the database's text of objects (OBJECT_JSON, on ${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let dir: string;
  let schema: string;
  let adapter: StorageAdapter;
  /** The pool of the PostgreSQL adapter, which the adapter leaves open (postgres/adapter.ts `close`). */
  let database: PostgresDatabase | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-object-json-'));
    schema = `app_oj${process.pid}${Date.now()}`;
    if (onPostgres) database = new PostgresDatabase(process.env.BACKYARD_TEST_DATABASE_URL!, () => undefined);
    adapter = database ? new PostgresAdapter(database, schema) : new SqliteAdapter(path.join(dir, 'data.db'));
    await adapter.transaction((tx) => tx.saveClass({ className: 'Any', fields: {}, classLevelPermissions: {}, indexes: {} }));
  });
  afterAll(async () => {
    await adapter?.close();
    await database?.close();
    if (onPostgres) await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is the text of what objectJson answers for the stored row, for any data and ACL', async () => {
    let n = 0;
    const data = fc.dictionary(fieldName, fc.jsonValue()).filter((d) => !onPostgres || !holdsNul(d));
    await fc.assert(
      fc.asyncProperty(data, acl.filter((a) => !onPostgres || !holdsNul(a)), async (rowData, rowAcl) => {
        const now = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString();
        const row = { objectId: `obj${String(n++).padStart(7, '0')}`, createdAt: now, updatedAt: now, data: rowData, acl: rowAcl } as StoredRow;
        await adapter.transaction((tx) => tx.insert('Any', row));
        const text = await adapter.findText!('Any', { where: { objectId: row.objectId }, principals: undefined });
        expect(JSON.parse(`[${text}]`)).toEqual([asClientReads(row)]);
        // The same text for the object alone, with the ACL as stored (the caller's read check).
        const one = await adapter.getText!('Any', row.objectId);
        expect(one && JSON.parse(one.json)).toEqual(asClientReads(row));
        expect(one?.acl).toEqual(rowAcl);
      }),
      { numRuns: 300 },
    );
  });

  it("joins the objects in the find's order, and answers '' when none matches", async () => {
    const rows: StoredRow[] = Array.from({ length: 30 }, (_, i) => ({
      objectId: `ord${String(i).padStart(7, '0')}`,
      createdAt: '2026-02-01T00:00:00.000Z',
      updatedAt: '2026-02-01T00:00:00.000Z',
      data: { rank: (i * 7) % 30, label: `"${i}",\\{}` },
      acl: i % 3 === 0 ? { '*': { read: true } } : null,
    }));
    await adapter.transaction(async (tx) => {
      await tx.saveClass({ className: 'Ordered', fields: { rank: { type: 'Number' }, label: { type: 'String' } }, classLevelPermissions: {}, indexes: {} });
      for (const row of rows) await tx.insert('Ordered', row);
    });
    const descending = [...rows].sort((a, b) => (b.data.rank as number) - (a.data.rank as number));
    const text = await adapter.findText!('Ordered', { where: {}, order: '-rank', limit: 12, skip: 3, principals: ['*'] });
    expect(JSON.parse(`[${text}]`)).toEqual(descending.slice(3, 15).map(asClientReads));
    expect(await adapter.findText!('Ordered', { where: { rank: 1000 }, principals: ['*'] })).toBe('');
    expect(await adapter.findText!('NoSuchClass', { where: {}, principals: ['*'] })).toBe('');
    expect(await adapter.getText!('Ordered', 'nosuchobject')).toBeUndefined();
    expect(await adapter.getText!('NoSuchClass', rows[0]!.objectId)).toBeUndefined();
  });
});

describe.skipIf(onPostgres)('DataEngine.findText, in process on a real SQLite file', () => {
  let dir: string;
  let adapter: SqliteAdapter;
  let store: DataStore;
  let engine: DataEngine;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-find-text-'));
    adapter = new SqliteAdapter(path.join(dir, 'data.db'));
    store = new DataStore('find-text', adapter, (name) => `http://files.test/${name}`);
    engine = new DataEngine(store);
    for (let i = 0; i < 3; i++) await engine.create('Plain', { n: i, tags: ['x', i] }, MASTER);
    await engine.create('WithFile', { doc: { __type: 'File', name: 'a.txt' } }, MASTER);
  });
  afterAll(async () => {
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** findText's answer, with which of the adapter's reads it took. */
  async function traced(className: string, params: Record<string, unknown>, auth = PUBLIC) {
    const text = vi.spyOn(adapter, 'findText');
    const objects = vi.spyOn(adapter, 'find');
    try {
      const answer = await engine.findText(className, params, auth);
      return { answer, asText: text.mock.calls.length, asObjects: objects.mock.calls.length };
    } finally {
      text.mockRestore();
      objects.mockRestore();
    }
  }

  it('splices the stored rows when nothing is rewritten, and answers what find answers', async () => {
    const { answer, asText, asObjects } = await traced('Plain', { order: 'n', count: 1 });
    expect([asText, asObjects]).toEqual([1, 0]);
    expect(JSON.parse(answer)).toEqual(JSON.parse(JSON.stringify(await engine.find('Plain', { order: 'n', count: 1 }, PUBLIC))));
    expect(JSON.parse(answer).count).toBe(3);
  });

  it("answers find's objects from the same text where nothing is rewritten: the objects its rows make", async () => {
    const text = vi.spyOn(adapter, 'findText');
    const objects = vi.spyOn(adapter, 'find');
    try {
      const answer = await engine.find('Plain', { order: 'n' }, PUBLIC);
      expect([text.mock.calls.length, objects.mock.calls.length]).toEqual([1, 0]);
      const rows = await adapter.find('Plain', { where: {}, order: 'n', principals: ['*'] });
      expect(rows).toHaveLength(3);
      expect(answer.results).toEqual(rows.map((row) => objectJson(row, undefined, (name) => `http://files.test/${name}`)));
    } finally {
      text.mockRestore();
      objects.mockRestore();
    }
  });

  /** getText's answer, with which of the adapter's reads it took. */
  async function tracedGet(className: string, objectId: string, params: Record<string, unknown>, auth = PUBLIC) {
    const text = vi.spyOn(adapter, 'getText');
    const objects = vi.spyOn(adapter, 'get');
    try {
      const answer = await engine.getText(className, objectId, auth, params);
      return { answer, asText: text.mock.calls.length, asObjects: objects.mock.calls.length };
    } finally {
      text.mockRestore();
      objects.mockRestore();
    }
  }

  it("answers a get as the database's text where nothing is rewritten, and get's object otherwise; the checks are get's", async () => {
    const [plain] = (await adapter.find('Plain', { where: {}, order: 'n', principals: ['*'] }))!;
    const asText = await tracedGet('Plain', plain!.objectId, {});
    expect([asText.asText, asText.asObjects]).toEqual([1, 0]);
    expect(JSON.parse(asText.answer)).toEqual(objectJson(plain!, undefined, (name) => `http://files.test/${name}`));
    expect(JSON.parse(asText.answer)).toEqual(await engine.get('Plain', plain!.objectId, PUBLIC));
    const keyed = await tracedGet('Plain', plain!.objectId, { keys: 'n' });
    expect([keyed.asText, keyed.asObjects]).toEqual([0, 1]);
    expect(Object.keys(JSON.parse(keyed.answer)).sort()).toEqual(['createdAt', 'n', 'objectId', 'updatedAt']);
    const [withFile] = await adapter.find('WithFile', { where: {}, principals: ['*'] });
    const file = await tracedGet('WithFile', withFile!.objectId, {});
    expect([file.asText, file.asObjects]).toEqual([0, 1]);
    expect(JSON.parse(file.answer).doc).toEqual({ __type: 'File', name: 'a.txt', url: 'http://files.test/a.txt' });
    // An object the caller may not read is not found, as by get; the owner and the master key read it.
    const owned = await engine.create('Plain', { n: 9, ACL: { u1: { read: true } } }, MASTER);
    await expect(tracedGet('Plain', owned.row.objectId, {})).rejects.toMatchObject({ code: 101 });
    await expect(tracedGet('Plain', 'nosuchobject', {})).rejects.toMatchObject({ code: 101 });
    await expect(tracedGet('Plain', owned.row.objectId, { bogus: 1 })).rejects.toMatchObject({ code: 102 });
    expect(JSON.parse((await tracedGet('Plain', owned.row.objectId, {}, MASTER)).answer)).toMatchObject({ n: 9, ACL: { u1: { read: true } } });
  });

  it('reads objects where the answer is rewritten: keys, include, a File field, a class of its own (_User)', async () => {
    for (const [className, params] of [
      ['Plain', { keys: 'n' }],
      ['Plain', { include: 'tags' }],
      ['WithFile', {}],
    ] as const) {
      const { answer, asText, asObjects } = await traced(className, params);
      expect([className, asText, asObjects]).toEqual([className, 0, 1]);
      expect(JSON.parse(answer)).toEqual(JSON.parse(JSON.stringify(await engine.find(className, params, PUBLIC))));
    }
    const file = JSON.parse((await traced('WithFile', {})).answer).results[0].doc;
    expect(file).toEqual({ __type: 'File', name: 'a.txt', url: 'http://files.test/a.txt' });
    expect((await traced('_User', {}, MASTER)).asText).toBe(0);
  });
});

describe('finds answered as stored text, over HTTP', () => {
  let server: TestServer;
  let app: TestApp;
  let userToken: string;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer();
    app = await createTestApp(server, 'find-text');
    const user = await app.call('POST', '/users', { body: { username: 'reader', password: 'reader-password' } });
    expect(user.status).toBe(201);
    userToken = user.body.sessionToken;
    userId = user.body.objectId;
    const schema = await app.call('POST', '/schemas/Thing', {
      master: true,
      body: {
        fields: {
          title: { type: 'String' },
          n: { type: 'Number' },
          flag: { type: 'Boolean' },
          when: { type: 'Date' },
          meta: { type: 'Object' },
          tags: { type: 'Array' },
          owner: { type: 'Pointer', targetClass: '_User' },
          where: { type: 'GeoPoint' },
          blob: { type: 'Bytes' },
          area: { type: 'Polygon' },
        },
      },
    });
    expect(schema.status).toBe(200);
    const values = [
      { title: 'plain', n: 1 },
      {
        title: 'every type: "quoted", \\ back, é, 😀',
        n: -2.5e-7,
        flag: false,
        when: { __type: 'Date', iso: '2026-01-02T03:04:05.678Z' },
        meta: { nested: { deep: [1, 'two', null, { x: true }] }, empty: {} },
        tags: ['a', 1, null, { b: [] }],
        owner: { __type: 'Pointer', className: '_User', objectId: userId },
        where: { __type: 'GeoPoint', latitude: 12.5, longitude: -45.25 },
        blob: { __type: 'Bytes', base64: 'aGVsbG8=' },
        area: { __type: 'Polygon', coordinates: [[0, 0], [0, 1], [1, 1]] },
      },
      { title: 'big', n: 12345678901234567000 },
      { title: 'private', n: 3, ACL: { [userId]: { read: true, write: true } } },
      { title: 'role and public', n: 4, ACL: { '*': { read: true }, 'role:Admins': { write: true } } },
    ];
    for (const body of values) expect((await app.call('POST', '/classes/Thing', { body })).status).toBe(201);
  });
  afterAll(async () => server?.close());

  /** Each result of a find, against the same object fetched alone (the object path). */
  async function expectSameAsGets(results: Array<Record<string, unknown>>, sessionToken?: string) {
    for (const object of results) {
      const one = await app.call('GET', `/classes/Thing/${object.objectId as string}`, { sessionToken });
      expect(one.status).toBe(200);
      expect(object).toEqual(one.body);
    }
  }

  it('answers each object as a GET of it does, for every field type and ACL, to the public, a user and the master key', async () => {
    const open = await app.call('GET', `/classes/Thing${whereQuery({}, { order: 'n' })}`);
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toMatch(/^application\/json/);
    expect(open.body.results.map((o: { title: string }) => o.title)).toEqual([
      'every type: "quoted", \\ back, é, 😀',
      'plain',
      'role and public',
      'big',
    ]);
    await expectSameAsGets(open.body.results);
    const asUser = await app.call('GET', `/classes/Thing${whereQuery({}, { order: 'n' })}`, { sessionToken: userToken });
    expect(asUser.body.results).toHaveLength(5);
    await expectSameAsGets(asUser.body.results, userToken);
    // The object only the user may read is not found for the public, alone as in a find.
    const privateOne = asUser.body.results.find((o: { title: string }) => o.title === 'private');
    expect((await app.call('GET', `/classes/Thing/${privateOne.objectId as string}`)).status).toBe(404);
    const master = await app.call('GET', `/classes/Thing${whereQuery({ title: 'private' })}`, { master: true });
    expect(master.body.results).toEqual([expect.objectContaining({ title: 'private', ACL: { [userId]: { read: true, write: true } } })]);
    expect(master.body.results[0].n).toBe(3);
  });

  it('adds count, answers a count alone, and an empty page', async () => {
    const counted = await app.call('GET', `/classes/Thing${whereQuery({ n: { $gte: 1 } }, { count: '1', limit: '2', order: 'n' })}`);
    expect(counted.body).toEqual({ results: [expect.objectContaining({ title: 'plain' }), expect.objectContaining({ title: 'role and public' })], count: 3 });
    expect(JSON.parse(JSON.stringify(counted.body))).toEqual(counted.body);
    expect((await app.call('GET', `/classes/Thing${whereQuery({}, { count: '1', limit: '0' })}`)).body).toEqual({ results: [], count: 4 });
    expect((await app.call('GET', `/classes/Thing${whereQuery({ title: 'none' })}`)).body).toEqual({ results: [] });
    expect((await app.call('GET', `/classes/Missing${whereQuery({})}`)).body).toEqual({ results: [] });
    // A bad where is refused as before, also with limit 0.
    const bad = await app.call('GET', `/classes/Thing${whereQuery({ n: { $bogus: 1 } }, { limit: '0' })}`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe(102);
  });

  it('leaves the text path where the answer is rewritten: keys, File fields, protected fields', async () => {
    const keyed = await app.call('GET', `/classes/Thing${whereQuery({ title: 'plain' }, { keys: 'title' })}`);
    expect(Object.keys(keyed.body.results[0]).sort()).toEqual(['createdAt', 'objectId', 'title', 'updatedAt']);

    const file = await app.call('POST', '/files/note.txt', { master: true, rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(file.status).toBe(201);
    expect((await app.call('POST', '/classes/Attachment', { body: { doc: { __type: 'File', name: file.body.name } } })).status).toBe(201);
    const attachments = await app.call('GET', `/classes/Attachment${whereQuery({})}`);
    expect(attachments.body.results[0].doc).toEqual({ __type: 'File', name: file.body.name, url: file.body.url });

    const clp = await app.call('PUT', '/schemas/Thing', {
      master: true,
      body: { classLevelPermissions: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true }, protectedFields: { '*': ['meta'] } } },
    });
    expect(clp.status).toBe(200);
    const hidden = await app.call('GET', `/classes/Thing${whereQuery({ n: { $lt: 0 } })}`);
    expect(hidden.body.results).toHaveLength(1);
    expect(hidden.body.results[0]).not.toHaveProperty('meta');
    expect(hidden.body.results[0].tags).toEqual(['a', 1, null, { b: [] }]);
    // A GET of the object alone leaves the text path too.
    const one = await app.call('GET', `/classes/Thing/${hidden.body.results[0].objectId as string}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(hidden.body.results[0]);
    expect((await app.call('GET', `/classes/Thing/${hidden.body.results[0].objectId as string}`, { master: true })).body.meta).toEqual(expect.any(Object));
    expect((await app.call('GET', `/classes/Thing${whereQuery({ n: { $lt: 0 } })}`, { master: true })).body.results[0].meta).toBeDefined();
  });

  it('answers a find inside a batch as on its own', async () => {
    const alone = await app.call('GET', `/classes/Thing${whereQuery({ title: 'plain' })}`);
    const batch = await app.call('POST', '/batch', { body: { requests: [{ method: 'GET', path: '/data/classes/Thing', body: { where: { title: 'plain' } } }] } });
    expect(batch.status).toBe(200);
    expect(batch.body).toEqual([{ success: alone.body }]);
  });
});
