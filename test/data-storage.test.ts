/**
 * The SQLite adapter's write path on real files: commits are durable through the group commit
 * (durability.ts), and WAL checkpoints run on the checkpoint thread (checkpointer.ts) instead of
 * inside a commit on the event loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';
import { checkpointer } from '../src/data/storage/sqlite/checkpointer.js';
import { CHECKPOINT_EVERY } from '../src/data/storage/sqlite/durability.js';
import { classTable } from '../src/data/storage/sqlite/layout.js';

const CLASS = { className: 'Item', fields: { title: { type: 'String' as const } }, classLevelPermissions: {}, indexes: {} };
const row = (i: number) => {
  const now = new Date().toISOString();
  return { objectId: `obj${String(i).padStart(7, '0')}`, createdAt: now, updatedAt: now, data: { title: `item ${i}` }, acl: null };
};
const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`timed out waiting until ${what}`);
};

describe('the SQLite adapter write path', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-storage-'));
    file = path.join(dir, 'data.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('checkpoints on the checkpoint thread: the database file receives the rows while the WAL is only appended to by commits', async () => {
    expect(checkpointer.available).toBe(true);
    const adapter = new SqliteAdapter(file);
    adapter.saveClass(CLASS);
    // SQLite's automatic checkpoint is off in the adapter's own connection.
    const own = (adapter as unknown as { db: Database.Database }).db;
    expect(own.pragma('wal_autocheckpoint', { simple: true })).toBe(0);

    const sizeBefore = fs.statSync(file).size;
    for (let i = 0; i < CHECKPOINT_EVERY * 3; i++) adapter.transaction(() => adapter.insert('Item', row(i)));
    await adapter.durable();
    // The thread copies the WAL into data.db: its size grows without any checkpoint on this thread.
    await until(() => fs.statSync(file).size > sizeBefore + 100 * 1024, 'data.db received the checkpointed pages');

    // Another connection sees every row, and a full checkpoint finds little left to copy.
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare(`SELECT count(*) AS n FROM ${classTable('Item')}`).get()).toEqual({ n: CHECKPOINT_EVERY * 3 });
    reader.close();
    expect(adapter.get('Item', 'obj0000007')?.data).toEqual({ title: 'item 7' });

    // Closing releases the thread's connection too, so the last one out removes the WAL.
    adapter.close();
    await checkpointer.release(file);
    await until(() => !fs.existsSync(`${file}-wal`), 'the WAL was removed at the last close');
    const reopened = new SqliteAdapter(file);
    expect(reopened.get('Item', `obj${String(CHECKPOINT_EVERY * 3 - 1).padStart(7, '0')}`)?.data).toEqual({ title: `item ${CHECKPOINT_EVERY * 3 - 1}` });
    reopened.close();
  });

  it('a transaction that throws rolls back and leaves nothing written', () => {
    const adapter = new SqliteAdapter(file);
    adapter.saveClass(CLASS);
    expect(() =>
      adapter.transaction(() => {
        adapter.insert('Item', row(1));
        throw new Error('refused half-way');
      }),
    ).toThrow('refused half-way');
    expect(adapter.get('Item', 'obj0000001')).toBeUndefined();
    // The connection is usable again and not left inside a transaction.
    adapter.transaction(() => adapter.insert('Item', row(2)));
    expect(adapter.get('Item', 'obj0000002')?.data).toEqual({ title: 'item 2' });
    // A duplicate objectId fails inside SQLite itself, and rolls back the same way.
    expect(() => adapter.transaction(() => adapter.insert('Item', row(2)))).toThrow(/UNIQUE|PRIMARY KEY/);
    adapter.transaction(() => adapter.insert('Item', row(3)));
    expect(adapter.get('Item', 'obj0000003')).toBeDefined();
    adapter.close();
  });
});
