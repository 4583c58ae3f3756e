/**
 * The SQLite adapter's write transactions on a real file: prepared BEGIN IMMEDIATE / COMMIT, with a
 * rollback that leaves nothing written (the schema included) when the work or SQLite itself fails;
 * transactions take turns, and one opened inside another joins it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MASTER } from '../src/data/auth/context.js';
import { DataEngine } from '../src/data/engine.js';
import { DataStore } from '../src/data/store.js';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';

const CLASS = { className: 'Item', fields: { title: { type: 'String' as const } }, classLevelPermissions: {}, indexes: {} };
/** The synchronous store under the adapter, for what only it shows (pragmas, the WAL's counters). */
const storeOf = (adapter: SqliteAdapter) => (adapter as unknown as { database: Record<string, any> }).database;

const row = (i: number) => {
  const now = new Date().toISOString();
  return { objectId: `obj${String(i).padStart(7, '0')}`, createdAt: now, updatedAt: now, data: { title: `item ${i}` }, acl: null };
};

describe('the SQLite adapter write path', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-storage-'));
    file = path.join(dir, 'data.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('checkpoints every 10,000 WAL pages rather than SQLite\'s 1,000 (fewer copies of the same pages)', async () => {
    const adapter = new SqliteAdapter(file);
    const db = storeOf(adapter).db as { pragma(p: string, o: { simple: true }): unknown };
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    await adapter.close();
  });

  it('holds the file exclusively: no -shm file, and a second connection is refused while the app is open', async () => {
    const { default: Database } = await import('better-sqlite3');
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    await adapter.transaction((tx) => tx.insert('Item', row(1)));
    expect(fs.existsSync(`${file}-shm`)).toBe(false);
    const other = new Database(file, { timeout: 0 });
    try {
      expect(() => other.prepare('SELECT count(*) FROM sqlite_master').get()).toThrow(/locked|busy/i);
    } finally {
      other.close();
    }
    await adapter.close();
    // Closed: the data is all there for whoever opens the file next.
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT count(*) AS n FROM "cls_Item"').get()).toEqual({ n: 1 });
    after.close();
  });

  it('a lone writer syncs at once on this thread; concurrent writers share one sync in the thread pool', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    const wal = storeOf(adapter).wal as { written: number; synced: number; running?: Promise<void> };
    await adapter.transaction((tx) => tx.insert('Item', row(1)));
    const alone = adapter.durable(true);
    // Already on disk when the call returns: no hand-off to another thread.
    expect(wal.synced).toBe(wal.written);
    expect(wal.running).toBeUndefined();
    await alone;

    await adapter.transaction((tx) => tx.insert('Item', row(2)));
    const first = adapter.durable();
    const second = adapter.durable(true); // a sync is running: it waits like the others
    expect(wal.running).toBeDefined();
    expect(wal.synced).toBeLessThan(wal.written);
    await Promise.all([first, second]);
    expect(wal.synced).toBe(wal.written);

    // Transactions that end while a sync is in flight commit together once it has ended: a commit
    // made during it would wait for the next sync anyway.
    await adapter.transaction((tx) => tx.insert('Item', row(3)));
    const syncing = adapter.durable();
    const syncedBySyncInFlight = wal.written;
    await Promise.all([5, 6, 7].map((i) => adapter.transaction((tx) => tx.insert('Item', row(i)))));
    expect(wal.synced).toBe(syncedBySyncInFlight);
    expect(wal.written).toBe(syncedBySyncInFlight + 1);
    await syncing;
    await adapter.durable();

    // After a slow sync (a slow disk), even a lone writer waits in the thread pool.
    const timing = wal as unknown as { lastSyncMs: number };
    timing.lastSyncMs = 50;
    await adapter.transaction((tx) => tx.insert('Item', row(4)));
    const slow = adapter.durable(true);
    expect(wal.running).toBeDefined();
    await slow;
    // The pool's sync measured itself, so a fast disk is noticed again.
    expect(timing.lastSyncMs).not.toBe(50);
    await adapter.close();
  });

  it('_User gets case-insensitive indexes on username and email, which the free-name check uses', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass({ className: '_User', fields: { username: { type: 'String' }, email: { type: 'String' } }, classLevelPermissions: {}, indexes: {} }));
    const now = new Date().toISOString();
    for (const [i, name] of ['Alice', 'bob', 'Carol.Smith'].entries()) {
      await adapter.transaction((tx) => tx.insert('_User', { objectId: `user${i}`, createdAt: now, updatedAt: now, data: { username: name, email: `${name.toLowerCase()}@example.test` }, acl: null }));
    }
    const db = storeOf(adapter).db as { prepare(sql: string): { all(...p: unknown[]): unknown[] } };
    const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cls__User'").all().map((r) => (r as { name: string }).name);
    expect(indexes).toEqual(expect.arrayContaining(['cls__User_username_lower', 'cls__User_email_lower']));
    const taken = async (username: string) => (await adapter.find('_User', { where: { username: { $regex: `^${username.replace(/[.\\-]/g, '\\$&')}$`, $options: 'i' } }, limit: 1 })).map((r) => r.objectId);
    expect(await taken('ALICE')).toEqual(['user0']);
    expect(await taken('carol.smith')).toEqual(['user2']);
    expect(await taken('carolXsmith')).toEqual([]);
    // An app made before these indexes gets them when its database is opened.
    (db as unknown as { exec(sql: string): void }).exec('DROP INDEX "cls__User_username_lower"; DROP INDEX "cls__User_email_lower"');
    await adapter.close();
    const reopened = new SqliteAdapter(file);
    const again = (storeOf(reopened).db as typeof db).prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cls__User'").all().map((r) => (r as { name: string }).name);
    expect(again).toEqual(expect.arrayContaining(['cls__User_username_lower', 'cls__User_email_lower']));
    await reopened.close();
  });

  it('a transaction that throws rolls back and leaves nothing written, the schema included', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    await expect(
      adapter.transaction(async (tx) => {
        await tx.insert('Item', row(1));
        await tx.saveClass({ ...CLASS, className: 'Other' });
        throw new Error('refused half-way');
      }),
    ).rejects.toThrow('refused half-way');
    expect(await adapter.get('Item', 'obj0000001')).toBeUndefined();
    expect(adapter.getClass('Other')).toBeUndefined();
    // A field learned by an existing class is taken back too.
    await expect(
      adapter.transaction(async (tx) => {
        await tx.saveClass({ ...CLASS, fields: { ...CLASS.fields, extra: { type: 'Number' } } });
        throw new Error('refused after learning');
      }),
    ).rejects.toThrow('refused after learning');
    expect(adapter.fields('Item')).not.toHaveProperty('extra');
    // The connection is usable again and not left inside a transaction.
    await adapter.transaction((tx) => tx.insert('Item', row(2)));
    expect((await adapter.get('Item', 'obj0000002'))?.data).toEqual({ title: 'item 2' });
    // A duplicate objectId fails inside SQLite itself, and rolls back the same way.
    await expect(adapter.transaction((tx) => tx.insert('Item', row(2)))).rejects.toThrow(/UNIQUE|PRIMARY KEY/);
    await adapter.transaction((tx) => tx.insert('Item', row(3)));
    expect(await adapter.get('Item', 'obj0000003')).toBeDefined();
    await adapter.close();
  });

  it('transactions take turns, and an ended one refuses use', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let kept: { insert(c: string, r: ReturnType<typeof row>): Promise<void> } | undefined;
    const first = adapter.transaction(async (tx) => {
      kept = tx;
      order.push('first begins');
      await tx.insert('Item', row(1));
      await held;
      await tx.insert('Item', row(2));
      order.push('first ends');
    });
    const second = adapter.transaction(async (tx) => {
      order.push('second begins');
      expect(await tx.count('Item', {})).toBe(2);
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['first begins']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins']);
    await expect(kept!.insert('Item', row(3))).rejects.toThrow(/already ended/);
    await adapter.close();
  });

  /** Counts the adapter's COMMITs, and holds its first transaction open until `release`, so that the others queue behind it. */
  function grouped(adapter: SqliteAdapter) {
    const database = storeOf(adapter);
    const commit = database.commit.bind(database);
    const seen = { commits: 0 };
    database.commit = () => {
      commit();
      seen.commits++;
    };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = adapter.transaction(async (tx) => {
      await tx.insert('Item', row(0));
      await held;
    });
    return { seen, first, release };
  }

  it('transactions that waited their turn share one commit, and none is answered before it; each fails alone', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    const { seen, first, release } = grouped(adapter);
    const committedWhenAnswered: number[] = [];
    const queued = Array.from({ length: 10 }, (_, i) =>
      adapter
        .transaction(async (tx) => {
          // The 5th writes a row and then fails; the 7th fails inside SQLite (a duplicate objectId).
          await tx.insert('Item', i === 6 ? row(2) : row(i + 1));
          if (i === 4) throw new Error('refused after writing');
        })
        .then(() => committedWhenAnswered.push(seen.commits)),
    );
    release();
    const settled = await Promise.allSettled([first, ...queued]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', ...Array.from({ length: 10 }, (_, i) => (i === 4 || i === 6 ? 'rejected' : 'fulfilled'))]);
    expect(seen.commits).toBe(1);
    expect(committedWhenAnswered).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    const stored = (await adapter.find('Item', { where: {}, limit: 100, principals: undefined })).map((r) => r.objectId).sort();
    expect(stored).toEqual([0, 1, 2, 3, 4, 6, 8, 9, 10].map((i) => row(i).objectId));
    // A transaction alone commits by itself, at once.
    await adapter.transaction((tx) => tx.insert('Item', row(11)));
    expect(seen.commits).toBe(2);
    await adapter.close();
  });

  it('a transaction that changes the schema commits at once with the group before it, and one that fails takes its schema change back', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    const { seen, first, release } = grouped(adapter);
    const queued = [
      adapter.transaction((tx) => tx.insert('Item', row(1))),
      adapter.transaction(async (tx) => {
        await tx.saveClass({ ...CLASS, className: 'Refused' });
        throw new Error('refused after a schema change');
      }),
      adapter.transaction((tx) => tx.saveClass({ ...CLASS, className: 'Other' })),
      adapter.transaction((tx) => tx.insert('Item', row(2))),
    ];
    release();
    const settled = await Promise.allSettled([first, ...queued]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // The first four in one commit (the one that changed the schema ended the group), the last alone.
    expect(seen.commits).toBe(2);
    expect(adapter.getClass('Refused')).toBeUndefined();
    expect(adapter.getClass('Other')).toBeDefined();
    expect((await adapter.find('Item', { where: {}, limit: 100, principals: undefined })).length).toBe(3);
    await adapter.close();
  });

  it('when a shared commit fails, every transaction of its group is refused and nothing of theirs is written', async () => {
    const adapter = new SqliteAdapter(file);
    await adapter.transaction((tx) => tx.saveClass(CLASS));
    // A deferred foreign key is checked at COMMIT: a way to have SQLite itself refuse one.
    const db = storeOf(adapter).db as { exec(sql: string): void; pragma(p: string): unknown; prepare(sql: string): { run(): unknown } };
    db.pragma('foreign_keys = ON');
    db.exec('CREATE TABLE parent (id TEXT PRIMARY KEY)');
    db.exec('CREATE TABLE child (parentId TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
    const { seen, first, release } = grouped(adapter);
    const queued = [
      adapter.transaction((tx) => tx.insert('Item', row(1))),
      adapter.transaction(async () => {
        db.prepare("INSERT INTO child VALUES ('no such parent')").run();
      }),
    ];
    release();
    const settled = await Promise.allSettled([first, ...queued]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const s of settled) expect(String((s as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(seen.commits).toBe(0);
    expect(await adapter.get('Item', row(0).objectId)).toBeUndefined();
    expect(await adapter.get('Item', row(1).objectId)).toBeUndefined();
    // The connection is out of the failed transaction and writes again.
    await adapter.transaction((tx) => tx.insert('Item', row(2)));
    expect(await adapter.get('Item', row(2).objectId)).toBeDefined();
    expect(seen.commits).toBe(1);
    await adapter.close();
  });

  it('an engine bound to a transaction writes all or nothing, and binding it again keeps the same transaction', async () => {
    const adapter = new SqliteAdapter(file);
    const store = new DataStore('app', adapter, () => '');
    const engine = new DataEngine(store);
    await expect(
      engine.atomically(async (bound) => {
        await bound.create('Item', { title: 'kept?' }, MASTER);
        await bound.atomically(async (again) => {
          expect(again).toBe(bound);
          await again.create('Item', { title: 'also kept?' }, MASTER);
        });
        expect((await bound.find('Item', { count: 1, limit: 0 }, MASTER)).count).toBe(2);
        throw new Error('refused at the end');
      }),
    ).rejects.toThrow('refused at the end');
    // Neither the objects nor the class they taught the schema survived.
    expect(engine.schema.has('Item')).toBe(false);
    await engine.atomically(async (bound) => {
      await bound.create('Item', { title: 'one' }, MASTER);
      await bound.create('Item', { title: 'two' }, MASTER);
    });
    expect(await store.countRows('Item')).toBe(2);
    await store.close();
  });
});
