/**
 * The typed columns of class tables on PostgreSQL (src/data/storage/postgres/layout.ts): a String or
 * Number field an index names gets a column holding only values of its type, every table a generated
 * `_publicRead`, and indexes on fields are built over those columns carrying `_publicRead`, so that a
 * count of public objects is an index-only scan; tables of the earlier layout are brought to it at open.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredRow } from '../src/data/storage/adapter.js';
import { PostgresAdapter } from '../src/data/storage/postgres/adapter.js';
import { PostgresDatabase, type Run } from '../src/data/storage/postgres/database.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const ITEM = { className: 'Item', fields: { category: { type: 'String' as const }, n: { type: 'Number' as const } }, classLevelPermissions: {}, indexes: {} };
/** Objects of every kind of ACL: none, public read, public read off, a user's, a role's. */
const ACLS: Array<StoredRow['acl']> = [null, { '*': { read: true } }, { '*': { read: false, write: true } }, { u1: { read: true, write: true } }, { 'role:staff': { read: true } }];
const rows = (count: number): StoredRow[] =>
  Array.from({ length: count }, (_, i) => ({
    objectId: `obj${String(i).padStart(7, '0')}`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    data: { category: `c${i % 20}`, n: i % 1000 },
    acl: ACLS[i % ACLS.length]!,
  }));
/** Values of other JSON types at both fields, which neither an equality nor a range may match. */
const ODD: StoredRow[] = ['7', true, null, { n: 7 }, ['c1'], 7].map((v, i) => ({
  objectId: `odd${String(i).padStart(7, '0')}`,
  createdAt: '2026-02-01T00:00:00.000Z',
  updatedAt: '2026-02-01T00:00:00.000Z',
  data: { category: typeof v === 'number' ? 1 : v, n: v === 7 ? '7' : v },
  acl: null,
}));
const readable = (r: StoredRow, principals: string[]) => r.acl === null || principals.some((p) => r.acl![p]?.read === true);

describe.skipIf(!onPostgres)('typed field columns on PostgreSQL', () => {
  let schema: string;
  const databases: PostgresDatabase[] = [];
  /** An adapter of the test's schema on a pool of its own (another process's, as far as PostgreSQL knows), its reads' statements recorded. */
  const open = () => {
    const db = new PostgresDatabase(process.env.BACKYARD_TEST_DATABASE_URL!, () => undefined);
    databases.push(db);
    const statements: string[] = [];
    const run: Run = db.run;
    db.run = (sql, params) => {
      statements.push(sql);
      return run(sql, params);
    };
    return { adapter: new PostgresAdapter(db, schema), db, statements };
  };
  /** The plan PostgreSQL picks for a recorded statement (`?` numbered), seq scans and bitmaps off so that a small table shows its index plan. */
  const plan = (db: PostgresDatabase, sql: string, params: unknown[]) =>
    db.transaction(async (run) => {
      await run('SET LOCAL enable_seqscan = off');
      await run('SET LOCAL enable_bitmapscan = off');
      const explained = await run(`EXPLAIN ${sql}`, params);
      return (explained.rows as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN']).join('\n');
    });

  beforeEach(() => {
    schema = `app_fc${process.pid}${Date.now()}`;
  });
  afterEach(async () => {
    for (const db of databases.splice(0)) await db.pool.end();
    await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('counts public objects by an indexed field from the index alone, and finds what each caller may read', async () => {
    const { adapter, db, statements } = open();
    const all = [...rows(2000), ...ODD];
    await adapter.transaction(async (tx) => {
      await tx.saveClass(ITEM);
      await tx.createIndex('Item', 'by_category', { category: 1 });
      await tx.createIndex('Item', 'by_n', { n: 1 });
      for (const row of all) await tx.insert('Item', row);
    });
    for (const principals of [['*'], ['*', 'u1'], ['*', 'u1', 'role:staff'], ['u1']]) {
      const inCategory = all.filter((r) => r.data.category === 'c1' && readable(r, principals)).map((r) => r.objectId).sort();
      expect(await adapter.count('Item', { where: { category: 'c1' }, principals })).toBe(inCategory.length);
      expect((await adapter.find('Item', { where: { category: 'c1' }, principals, limit: 1000 })).map((r) => r.objectId).sort()).toEqual(inCategory);
      const inRange = all.filter((r) => typeof r.data.n === 'number' && r.data.n >= 0 && r.data.n < 40 && readable(r, principals)).length;
      expect(await adapter.count('Item', { where: { n: { $gte: 0, $lt: 40 } }, principals })).toBe(inRange);
      expect(await adapter.count('Item', { where: { n: 7 }, principals })).toBe(all.filter((r) => r.data.n === 7 && readable(r, principals)).length);
      expect(await adapter.count('Item', { where: { category: { $in: ['c2', 'c3'] } }, principals })).toBe(
        all.filter((r) => ['c2', 'c3'].includes(r.data.category as string) && readable(r, principals)).length,
      );
    }
    // Sorted by the typed column: numbers in order, whatever else there is first.
    const sorted = await adapter.find('Item', { where: { n: { $lt: 3 } }, order: '-n', limit: 5 });
    expect(sorted.map((r) => r.data.n)).toEqual([2, 2, 1, 1, 0]);
    // An ACL changed by an update moves the object in or out of public view (`_publicRead` is generated).
    const before = await adapter.count('Item', { where: { category: 'c0' }, principals: ['*'] });
    expect(all[40]!.acl).toBeNull();
    await adapter.transaction((tx) => tx.replace('Item', { ...all[40]!, acl: { u1: { read: true } } }).then(() => undefined));
    expect(await adapter.count('Item', { where: { category: 'c0' }, principals: ['*'] })).toBe(before - 1);

    const anonymousCount = statements.find((sql) => sql.startsWith('SELECT count(*)') && sql.includes('"_s:category" = ?') && !sql.includes(' IN '))!;
    expect(anonymousCount).toContain('"_publicRead"');
    expect(anonymousCount).not.toContain('acl');
    const rangeCount = statements.find((sql) => sql.startsWith('SELECT count(*)') && sql.includes('"_n:n" >= ?') && !sql.includes('acl'))!;
    await pgQuery(`VACUUM "${schema}"."cls_Item"`);
    expect(await plan(db, anonymousCount, ['c1'])).toContain('Index Only Scan using "idx_Item_by_category"');
    expect(await plan(db, rangeCount, [0, 40])).toContain('Index Only Scan using "idx_Item_by_n"');
    await adapter.close();
  });

  it('drops the typed column of a removed field, so that one made again with another type is compared as that type', async () => {
    const { adapter } = open();
    await adapter.transaction(async (tx) => {
      await tx.saveClass(ITEM);
      await tx.createIndex('Item', 'by_n', { n: 1 });
      for (const row of rows(10)) await tx.insert('Item', row);
    });
    const columns = async () => (await pgQuery(`SELECT attname FROM pg_attribute WHERE attrelid = '"${schema}"."cls_Item"'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attname`)).map((r) => r.attname);
    expect(await columns()).toContain('_n:n');
    await adapter.transaction(async (tx) => {
      await tx.removeField('Item', 'n', { type: 'Number' });
      await tx.saveClass({ ...ITEM, fields: { category: { type: 'String' } }, indexes: {} });
    });
    expect(await columns()).not.toContain('_n:n');
    await adapter.transaction(async (tx) => {
      await tx.saveClass({ ...ITEM, fields: { category: { type: 'String' }, n: { type: 'String' } } });
      await tx.insert('Item', { ...rows(1)[0]!, objectId: 'text000001', data: { n: '3' } });
    });
    expect(await adapter.count('Item', { where: { n: '3' }, principals: ['*'] })).toBe(1);
    expect(await adapter.count('Item', { where: { n: 3 }, principals: ['*'] })).toBe(0);
    await adapter.close();
  });

  it('brings tables of the earlier layout to this one at open, in two processes opening at once', async () => {
    const first = open();
    const all = rows(100);
    await first.adapter.transaction(async (tx) => {
      await tx.saveClass({ ...ITEM, indexes: { by_category: { category: 1 }, by_n: { n: -1 } } });
      await tx.createIndex('Item', 'by_category', { category: 1 });
      await tx.createIndex('Item', 'by_n', { n: -1 });
      for (const row of all) await tx.insert('Item', row);
    });
    await first.adapter.close();
    // The earlier layout: no `_publicRead`, no typed columns, indexes over jsonb expressions.
    const table = `"${schema}"."cls_Item"`;
    await pgQuery(`ALTER TABLE ${table} DROP COLUMN "_publicRead", DROP COLUMN "_s:category", DROP COLUMN "_n:n"`);
    await pgQuery(`CREATE INDEX "idx_Item_by_category" ON ${table} (((data #>> '{"category"}') COLLATE "C") NULLS FIRST)`);
    await pgQuery(`CREATE INDEX "idx_Item_by_n" ON ${table} ((data #> '{"n"}') DESC NULLS LAST)`);

    const [a, b] = [open(), open()];
    await Promise.all([a.adapter.opened, b.adapter.opened]);
    const indexes = (await pgQuery(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'idx_Item_%' ORDER BY indexname`, [schema])).map((r) => r.indexdef);
    expect(indexes).toEqual([
      expect.stringMatching(/\("_s:category" NULLS FIRST\) INCLUDE \("_publicRead"\)$/),
      expect.stringMatching(/\("_n:n" DESC NULLS LAST\) INCLUDE \("_publicRead"\)$/),
    ]);
    for (const { adapter } of [a, b]) {
      expect(await adapter.count('Item', { where: { category: 'c1' }, principals: ['*'] })).toBe(all.filter((r) => r.data.category === 'c1' && readable(r, ['*'])).length);
      expect(await adapter.count('Item', { where: { n: { $gt: 50 } }, principals: ['*', 'u1'] })).toBe(all.filter((r) => (r.data.n as number) > 50 && readable(r, ['*', 'u1'])).length);
    }
    await a.adapter.close();
    await b.adapter.close();
  });
});
