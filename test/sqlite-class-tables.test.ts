/**
 * The layout of class tables in an app's SQLite `data.db` (src/data/storage/sqlite/classTables.ts):
 * `publicRead` written with every ACL and last in every index on fields, so that public rows are counted
 * from an index alone; and tables of the earlier layout rebuilt at open with nothing lost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';
import type { StoredRow } from '../src/data/storage/adapter.js';
import { dataMigrations } from '../src/data/storage/sqlite/migrations.js';
import { openDatabase } from '../src/shared/sqlite.js';

const storeDb = (adapter: SqliteAdapter) => (adapter as unknown as { database: { db: Database.Database } }).database.db;
const ITEM = { className: 'Item', fields: { category: { type: 'String' as const }, n: { type: 'Number' as const } }, classLevelPermissions: {}, indexes: {} };

/** Objects of every kind of ACL: none, public read, public read off, a user's, a role's. */
const ACLS: Array<StoredRow['acl']> = [null, { '*': { read: true } }, { '*': { read: false, write: true } }, { u1: { read: true, write: true } }, { 'role:staff': { read: true } }];
const rows = (count: number): StoredRow[] =>
  Array.from({ length: count }, (_, i) => ({
    objectId: `obj${String(i).padStart(7, '0')}`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    data: { category: `c${i % 3}`, n: i },
    acl: ACLS[i % ACLS.length]!,
  }));
/** The end of the category index's text: its key, then publicRead, then the key's JSON type (classTables.ts `fieldIndexDdl`). */
const TYPED_CATEGORY = /\(json_extract\(data, '\$\."category"'\), publicRead, json_type\(data, '\$\."category"'\)\)$/;
const visible = (all: StoredRow[], principals: string[], category: string) =>
  all.filter((r) => r.data.category === category && (r.acl === null || principals.some((p) => r.acl![p]?.read === true))).map((r) => r.objectId);

describe('class tables on SQLite', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-class-tables-'));
    file = path.join(dir, 'data.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('counts public objects by an indexed field from the index alone, and finds what each caller may read', async () => {
    const adapter = new SqliteAdapter(file);
    const all = rows(60);
    await adapter.transaction(async (tx) => {
      await tx.saveClass(ITEM);
      await tx.createIndex('Item', 'by_category', { category: 1 });
      for (const row of all) await tx.insert('Item', row);
    });
    // The statements the store prepares, to ask SQLite how it runs the anonymous count.
    const db = storeDb(adapter);
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
    for (const principals of [['*'], ['*', 'u1'], ['*', 'u1', 'role:staff']]) {
      expect(await adapter.count('Item', { where: { category: 'c1' }, principals })).toBe(visible(all, principals, 'c1').length);
      expect((await adapter.find('Item', { where: { category: 'c1' }, principals, limit: 100 })).map((r) => r.objectId).sort()).toEqual(visible(all, principals, 'c1'));
    }
    // An ACL changed by an update moves the object in or out of public view.
    const changed = { ...all[3]!, acl: null };
    await adapter.transaction((tx) => tx.replace('Item', changed).then(() => undefined));
    expect(await adapter.count('Item', { where: { category: 'c0' }, principals: ['*'] })).toBe(visible([...all.slice(0, 3), changed, ...all.slice(4)], ['*'], 'c0').length);

    const anonymousCount = prepared.find((sql) => sql.startsWith('SELECT count(*)'))!;
    expect(anonymousCount).toContain('publicRead');
    const plan = (prepare(`EXPLAIN QUERY PLAN ${anonymousCount}`).all('c1') as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    expect(plan).toContain('USING COVERING INDEX idx_Item_by_category');
    expect(db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'idx_Item_by_category'`).get()).toEqual({ sql: expect.stringMatching(TYPED_CATEGORY) });
    await adapter.close();
  });

  it('counts public objects in a numeric range from the index alone, values of other JSON types left out', async () => {
    const adapter = new SqliteAdapter(file);
    const all = rows(60);
    // Values a numeric range must not match although SQLite orders them among or after numbers: a
    // string, a boolean (json_extract gives 1), null, an object.
    const odd: StoredRow[] = ['7', true, null, { n: 7 }].map((n, i) => ({ ...all[0]!, objectId: `odd${String(i).padStart(7, '0')}`, data: { category: 'c1', n }, acl: null }));
    await adapter.transaction(async (tx) => {
      await tx.saveClass(ITEM);
      await tx.createIndex('Item', 'by_n', { n: 1 });
      for (const row of [...all, ...odd]) await tx.insert('Item', row);
    });
    const db = storeDb(adapter);
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
    const inRange = (principals: string[]) => all.filter((r) => (r.data.n as number) >= 0 && (r.data.n as number) < 40 && (r.acl === null || principals.some((p) => r.acl![p]?.read === true))).length;
    for (const principals of [['*'], ['*', 'u1']]) {
      expect(await adapter.count('Item', { where: { n: { $gte: 0, $lt: 40 } }, principals })).toBe(inRange(principals));
    }
    expect(await adapter.count('Item', { where: { n: { $gte: 0 } }, principals: ['*'] })).toBe(all.filter((r) => r.acl === null || r.acl['*']?.read === true).length);
    const count = prepared.find((sql) => sql.startsWith('SELECT count(*)') && sql.includes(' < '))!;
    const plan = (prepare(`EXPLAIN QUERY PLAN ${count}`).all(0, 40) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    expect(plan).toContain('USING COVERING INDEX idx_Item_by_n');
    await adapter.close();
  });

  it('makes again at open an index on fields made before it carried the fields\' JSON types', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction(async (tx) => {
      await tx.saveClass({ ...ITEM, indexes: { by_category: { category: 1 } } });
      for (const row of rows(20)) await tx.insert('Item', row);
    });
    const db = storeDb(adapter);
    // The index as it was made before: publicRead last, no type.
    db.exec(`CREATE INDEX "idx_Item_by_category" ON "cls_Item" (json_extract(data, '$."category"'), publicRead)`);
    await adapter.close();
    const reopened = new SqliteAdapter(file);
    expect(storeDb(reopened).prepare(`SELECT sql FROM sqlite_master WHERE name = 'idx_Item_by_category'`).get()).toEqual({ sql: expect.stringMatching(TYPED_CATEGORY) });
    expect(await reopened.count('Item', { where: { category: 'c1' }, principals: ['*'] })).toBe(visible(rows(20), ['*'], 'c1').length);
    await reopened.close();
  });

  it('rebuilds a class table of the earlier layout at open: every row, its ACL and its indexes kept, publicRead computed', async () => {
    const all = rows(25);
    // The layout before publicRead, as an app made then has it.
    const old = openDatabase(file, dataMigrations, { exclusive: true });
    old.prepare('INSERT INTO _SCHEMA (className, schema) VALUES (?, ?)').run('Item', JSON.stringify({ fields: ITEM.fields, classLevelPermissions: {}, indexes: { by_category: { category: 1 } } }));
    old.exec(`CREATE TABLE "cls_Item" (objectId TEXT PRIMARY KEY, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, data TEXT NOT NULL, acl TEXT) WITHOUT ROWID`);
    old.exec(`CREATE INDEX "cls_Item_createdAt" ON "cls_Item" (createdAt)`);
    old.exec(`CREATE INDEX "idx_Item_by_category" ON "cls_Item" (json_extract(data, '$."category"'))`);
    const insert = old.prepare('INSERT INTO "cls_Item" (objectId, createdAt, updatedAt, data, acl) VALUES (?, ?, ?, ?, ?)');
    for (const r of all) insert.run(r.objectId, r.createdAt, r.updatedAt, JSON.stringify(r.data), r.acl === null ? null : JSON.stringify(r.acl));
    old.close();

    const adapter = new SqliteAdapter(file);
    const db = storeDb(adapter);
    const stored = db.prepare('SELECT objectId, createdAt, updatedAt, data, acl, publicRead FROM "cls_Item" ORDER BY objectId').all() as Array<Record<string, unknown>>;
    expect(stored).toEqual(
      all.map((r) => ({
        objectId: r.objectId,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        data: JSON.stringify(r.data),
        acl: r.acl === null ? null : JSON.stringify(r.acl),
        publicRead: r.acl === null || r.acl['*']?.read === true ? 1 : 0,
      })),
    );
    const table = db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'cls_Item'`).get() as { sql: string };
    expect(table.sql).not.toContain('WITHOUT ROWID');
    const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cls_Item' AND sql IS NOT NULL ORDER BY name`).all() as Array<{ name: string; sql: string }>;
    expect(indexes.map((i) => i.name)).toEqual(['cls_Item_createdAt', 'idx_Item_by_category']);
    expect(indexes.find((i) => i.name === 'idx_Item_by_category')?.sql).toMatch(TYPED_CATEGORY);
    expect(indexes.find((i) => i.name === 'cls_Item_createdAt')?.sql).toMatch(/\(createdAt\)$/);
    expect(db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name LIKE '%:upgrading'`).get()).toEqual({ n: 0 });
    for (const principals of [['*'], ['*', 'u1'], ['*', 'role:staff']]) {
      expect(await adapter.count('Item', { where: { category: 'c2' }, principals })).toBe(visible(all, principals, 'c2').length);
    }
    // New objects and a second open go on as usual.
    await adapter.transaction((tx) => tx.insert('Item', { ...rows(1)[0]!, objectId: 'fresh00001', data: { category: 'c2', n: 99 } }));
    await adapter.close();
    const reopened = new SqliteAdapter(file);
    expect(await reopened.count('Item', { where: { category: 'c2' }, principals: ['*'] })).toBe(visible(all, ['*'], 'c2').length + 1);
    await reopened.close();
  });
});
