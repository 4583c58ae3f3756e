import Database from 'better-sqlite3';
import fc from 'fast-check';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/** Names every JavaScript object answers (`obj[name]` is defined on `{}`): a lookup by a client's name must not find them. */
const PROTOTYPE_NAMES = ['constructor', 'valueOf', 'toString', 'hasOwnProperty', 'isPrototypeOf', '__proto__', 'prototype', 'toLocaleString', '__defineGetter__'] as const;

/*
 * Client strings never reach SQL text (docs/design.md, "Security stance"): the attacks that got through
 * (an index's dotted key written into the DDL unescaped, run through APIs that take several
 * statements) retried through the real data API on SQLite and, in the PostgreSQL run, on PostgreSQL;
 * then arbitrary Unicode names, paths and keys thrown at every schema and query route. None may answer
 * 5xx, and nothing may change outside the app's own tables: the platform's tables (accounts and their
 * tokens) are compared before and after.
 */

let server: TestServer;
let app: TestApp;

/** Every table outside the app's own, with its row count: the platform's state an attack would reach. */
async function outsideTheApp(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  if (onPostgres) {
    const url = server.platform.config.databaseUrl!;
    const tables = await pgQuery(
      `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
       WHERE table_schema NOT IN ('pg_catalog', 'information_schema', $1) ORDER BY 1, 2`,
      [`app_${app.appId}`],
      url,
    );
    for (const { s, t } of tables) {
      const [row] = await pgQuery(`SELECT count(*)::int AS n FROM "${String(s)}"."${String(t).replace(/"/g, '""')}"`, [], url);
      counts[`${String(s)}.${String(t)}`] = Number(row!.n);
    }
    return counts;
  }
  const db = new Database(path.join(server.home, 'platform.db'), { readonly: true });
  try {
    for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{ name: string }>) {
      counts[name] = (db.prepare(`SELECT count(*) AS n FROM "${name.replace(/"/g, '""')}"`).get() as { n: number }).n;
    }
  } finally {
    db.close();
  }
  return counts;
}

/**
 * The app's own tables: only class tables, relation tables and the adapter's bookkeeping. On SQLite
 * the server holds the app's file exclusively: read it once the server has stopped (`stopped`).
 */
async function appTables(stopped = false): Promise<string[]> {
  if (onPostgres) {
    const rows = await pgQuery(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [`app_${app.appId}`], server.platform.config.databaseUrl!);
    return rows.map((r) => String(r.t));
  }
  if (!stopped) return [];
  const db = new Database(path.join(server.home, 'apps', app.appId, 'data.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
  } finally {
    db.close();
  }
}

const OWN_TABLE = /^(cls_[A-Za-z_][A-Za-z0-9_]*|_Join:[A-Za-z0-9_]+:[A-Za-z_][A-Za-z0-9_]*|_[A-Z_]+|sqlite_\w+)$/;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
  const made = await app.call('POST', '/schemas/Foo', { master: true, body: { className: 'Foo', fields: { score: { type: 'Object' }, name: { type: 'String' } } } });
  expect(made.status).toBe(200);
  expect((await app.call('POST', '/classes/Foo', { body: { score: { x: 1 }, name: 'a' } })).status).toBe(201);
});

let stopped = false;
afterAll(async () => {
  if (!stopped) await server?.close();
});

describe('the attacks that got through, retried', () => {
  const home = () => server.home;
  /** Index keys that broke out of the JSON path literal on SQLite and PostgreSQL, with stacked statements. */
  const payloads = () => [
    // SQLite: out of `'$."score"."…"'`, out of json_extract( and the column list, then stacked statements.
    `score.x"')); ATTACH DATABASE '${path.join(home(), 'platform.db')}' AS p; CREATE TABLE p.pwned (x); --`,
    `score.x"')); CREATE TABLE pwned (x); --`,
    // PostgreSQL: out of the text[] literal `'{score,…}'` and the index's column list.
    `score.x}')); SET LOCAL search_path TO backyard; CREATE TABLE pwned (x int); --`,
    `score.x}')) ; CREATE TABLE public.pwned (x int); --`,
    // A bare quote, a backslash, a NUL, a dot at either end, an empty part.
    `score.'`,
    `score.x\\`,
    'score.x\u0000y',
    'score.',
    '.score',
    'score..x',
    `score.0'`,
  ];

  it('an index key that is not a field path is refused with 107 and creates nothing', async () => {
    const before = await outsideTheApp();
    const tablesBefore = await appTables();
    for (const [i, key] of payloads().entries()) {
      const answer = await app.call('PUT', '/schemas/Foo', { master: true, body: { indexes: { [`i${i}`]: { [key]: 1 } } } });
      expect(answer.status, `${key}: ${JSON.stringify(answer.body)}`).toBe(400);
      expect(answer.body.code, key).toBe(107);
      expect(answer.body.error).toMatch(/is not a field path|does not exist/);
    }
    expect(await outsideTheApp()).toEqual(before);
    expect(await appTables()).toEqual(tablesBefore);
    const schema = await app.call('GET', '/schemas/Foo', { master: true });
    expect(Object.keys(schema.body.indexes ?? {})).toEqual(['_id_']);
  });

  it('a dotted index key that is a field path still makes an index that queries use', async () => {
    const made = await app.call('PUT', '/schemas/Foo', { master: true, body: { indexes: { byX: { 'score.x': 1 } } } });
    expect(made.status).toBe(200);
    expect(made.body.indexes.byX).toEqual({ 'score.x': 1 });
    const found = await app.call('GET', `/classes/Foo?${new URLSearchParams({ where: JSON.stringify({ 'score.x': 1 }) })}`);
    expect(found.body.results.map((r: { name: string }) => r.name)).toEqual(['a']);
  });

  it('the same keys in where, order, keys and include answer 4xx, never 5xx', async () => {
    const before = await outsideTheApp();
    for (const key of payloads()) {
      for (const query of [{ where: JSON.stringify({ [key]: 1 }) }, { order: key }, { order: `-${key}` }, { keys: key }, { include: key }, { where: JSON.stringify({ [key]: { $exists: true } }) }]) {
        const answer = await app.call('GET', `/classes/Foo?${new URLSearchParams(query)}`);
        expect(answer.status, `${JSON.stringify(query)}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
      }
    }
    expect(await outsideTheApp()).toEqual(before);
  });
});

describe('arbitrary names, paths and keys at every schema and query route', () => {
  /** Strings built to find the edges: names from Parse's grammar, SQL and JSON punctuation, any Unicode. */
  const hostile = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,12}$/),
    fc
      .array(fc.oneof(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/), fc.constantFrom('0', '1', '99', "'", '"', '\\', '}', '{', ',', ']', '[', '$', ' ', ';', '--', '\u0000', 'é', '😀')), {
        minLength: 1,
        maxLength: 5,
      })
      .map((parts) => parts.join('.')),
    fc.constantFrom("'", '"', ');', '\u0000', '$', '$regex', '.', '..', '_id_', 'ACL', 'objectId', 'createdAt', 'authData.x.id'),
    fc.constantFrom(...PROTOTYPE_NAMES),
  );

  /** One request a client could send, with a hostile string in one place. */
  const request = fc.oneof(
    hostile.map((s) => ({ method: 'POST', path: `/schemas/${encodeURIComponent(s)}`, body: { className: s } })),
    hostile.map((s) => ({ method: 'POST', path: '/schemas/Fuzz', body: { fields: { [s]: { type: 'String' } } } })),
    fc.tuple(hostile, hostile).map(([n, k]) => ({ method: 'PUT', path: '/schemas/Foo', body: { indexes: { [n]: { [k]: 1 } } } })),
    // Under an existing field, as the attack began: only the first part was checked.
    fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), hostile).map(([n, k]) => ({ method: 'PUT', path: '/schemas/Foo', body: { indexes: { [n]: { [`score.${k}`]: 1 } } } })),
    hostile.map((s) => ({ method: 'PUT', path: '/schemas/Foo', body: { fields: { [s]: { __op: 'Delete' } } } })),
    hostile.map((s) => ({ method: 'DELETE', path: `/schemas/${encodeURIComponent(s)}` })),
    hostile.map((s) => ({ method: 'GET', path: `/classes/${encodeURIComponent(s)}` })),
    // An objectId (a GET answers the database's text of the object: engine.ts getText), and a limit
    // or skip, which finds write into the statement's text (the dialects' limitClause).
    hostile.map((s) => ({ method: 'GET', path: `/classes/Foo/${encodeURIComponent(s)}` })),
    fc
      .tuple(fc.constantFrom('limit', 'skip'), fc.oneof(hostile, fc.bigInt().map(String), fc.double().map(String), fc.constantFrom('1e300', '-0', ' 7', '7; DROP TABLE x', '99999999999999999999', '9223372036854775808')))
      .map(([param, s]) => ({ method: 'GET', path: `/classes/Foo?${new URLSearchParams({ [param]: s, order: 'score' })}` })),
    hostile.map((s) => ({ method: 'POST', path: '/classes/Foo', body: { [s]: 1 } })),
    fc.tuple(fc.constantFrom('where', 'order', 'keys', 'include', 'excludeKeys'), hostile).map(([param, s]) => ({
      method: 'GET',
      path: `/classes/Foo?${new URLSearchParams({ [param]: param === 'where' ? JSON.stringify({ [s]: 1 }) : s })}`,
    })),
    fc.tuple(hostile, fc.constantFrom('$exists', '$in', '$regex', '$gt', '$select', '$all', '$nearSphere')).map(([s, op]) => ({
      method: 'GET',
      path: `/classes/Foo?${new URLSearchParams({ where: JSON.stringify({ [s]: { [op]: op === '$exists' ? true : op === '$select' ? { query: { className: 'Foo' }, key: s } : op === '$regex' ? 'a' : op === '$nearSphere' ? { __type: 'GeoPoint', latitude: 0, longitude: 0 } : [1] } }) })}`,
    })),
    hostile.map((s) => ({ method: 'GET', path: `/aggregate/Foo?${new URLSearchParams({ group: JSON.stringify({ objectId: `$${s}`, total: { $sum: `$${s}` } }) })}` })),
    hostile.map((s) => ({ method: 'GET', path: `/aggregate/Foo?${new URLSearchParams({ pipeline: JSON.stringify([{ $group: { _id: `$${s}`, n: { $sum: 1 } } }]) })}` })),
  );

  it('answers class, field and key names that every JavaScript object has (valueOf, constructor...) without a 5xx', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const requests: Array<{ method: string; path: string; body?: unknown }> = [
        { method: 'GET', path: `/classes/${name}` },
        { method: 'POST', path: `/classes/${name}`, body: { [name]: 1 } },
        { method: 'GET', path: `/classes/${name}?${new URLSearchParams({ where: JSON.stringify({ [name]: 1 }), order: name, keys: name, count: '1' })}` },
        { method: 'GET', path: `/schemas/${name}` },
        { method: 'PUT', path: '/schemas/Foo', body: { fields: { [name]: { type: 'String' } } } },
        { method: 'POST', path: `/functions/${name}`, body: {} },
        { method: 'GET', path: `/aggregate/${name}?${new URLSearchParams({ group: JSON.stringify({ objectId: `$${name}` }) })}` },
      ];
      for (const { method, path: route, body } of requests) {
        const answer = await app.call(method, route, { master: true, body });
        expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).toBeLessThan(500);
      }
    }
  });

  it('answers every request with a Parse error or a success, never 5xx, and changes nothing outside the app', async () => {
    const before = await outsideTheApp();
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path: route, body }) => {
        const answer = await app.call(method, route, { master: true, body });
        if (answer.status >= 500) throw new Error(`${method} ${route} ${JSON.stringify(body)} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        if (answer.status >= 400) expect(typeof answer.body.code === 'number' || answer.body.error === 'unauthorized', JSON.stringify(answer.body)).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect(await outsideTheApp()).toEqual(before);
    for (const table of await appTables()) expect(table).toMatch(OWN_TABLE);
  }, 240_000);
});

it("the app's database holds only its own tables once the server has stopped", async () => {
  await server.http.close();
  await server.platform.close();
  stopped = true;
  try {
    const tables = await appTables(true);
    expect(tables).toContain('cls_Foo');
    for (const table of tables) expect(table).toMatch(OWN_TABLE);
    expect(tables.filter((t) => /pwned/i.test(t))).toEqual([]);
  } finally {
    await server.close().catch(() => undefined);
  }
});
