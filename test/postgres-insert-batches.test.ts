import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase, type Run } from '../src/data/storage/postgres/database.js';
import type { RowInsert } from '../src/data/storage/postgres/insertBatches.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/**
 * Group commit of creates on PostgreSQL (src/data/storage/postgres/insertBatches.ts), on the run's
 * real PostgreSQL: transactions that are nothing but one insert, arriving together, share a
 * statement; each is answered only once its row is committed, and a row PostgreSQL refuses fails
 * alone.
 */
describe.skipIf(!onPostgres)('inserts of creates sent together', () => {
  const schema = `batches_${process.pid}_${Date.now()}`;
  const table = `"${schema}"."Thing"`;
  let db: PostgresDatabase;
  const statements: string[] = [];

  beforeAll(async () => {
    db = new PostgresDatabase(process.env.BACKYARD_TEST_DATABASE_URL!, () => undefined);
    const run: Run = db.run;
    db.run = (sql, params) => {
      statements.push(sql);
      return run(sql, params);
    };
    await pgQuery(`CREATE SCHEMA "${schema}"`);
    await pgQuery(`CREATE TABLE ${table} ("objectId" text COLLATE "C" PRIMARY KEY, n jsonb NOT NULL, note text)`);
  });

  afterAll(async () => {
    await db?.pool.end();
    await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  const row = (objectId: string, n: unknown, note: string | null = null): RowInsert => ({
    table,
    columns: ['"objectId"', 'n', 'note'],
    types: ['text', 'jsonb', 'text'],
    values: [objectId, JSON.stringify(n), note],
  });
  /** A transaction of nothing but one insert, as a create is. */
  const create = (insert: RowInsert) =>
    db.transaction(async (_run, defer) => {
      defer(insert);
      return insert.values[0];
    });
  const stored = async (prefix: string) =>
    (await pgQuery(`SELECT "objectId", n, note FROM ${table} WHERE "objectId" LIKE $1 ORDER BY "objectId"`, [`${prefix}%`])) as Array<{ objectId: string; n: unknown; note: string | null }>;

  it('sends one insert alone when nothing else is under way', async () => {
    statements.length = 0;
    await create(row('alone-1', { a: 1 }, 'x'));
    await create(row('alone-2', [2]));
    expect(statements.filter((s) => s.startsWith('INSERT'))).toHaveLength(2);
    expect(statements.some((s) => s.includes('unnest'))).toBe(false);
    expect(await stored('alone-')).toEqual([
      { objectId: 'alone-1', n: { a: 1 }, note: 'x' },
      { objectId: 'alone-2', n: [2], note: null },
    ]);
  });

  it('commits creates that arrive together in fewer statements, each answered with its row stored', async () => {
    statements.length = 0;
    const ids = Array.from({ length: 40 }, (_, i) => `together-${String(i).padStart(2, '0')}`);
    const answered = await Promise.all(ids.map((id, i) => create(row(id, { i, text: `row ${i}` }, i % 2 ? `note ${i}` : null))));
    expect(answered).toEqual(ids);
    const inserts = statements.filter((s) => s.startsWith('INSERT'));
    expect(inserts.length).toBeLessThan(ids.length);
    expect(inserts.some((s) => s.includes('unnest'))).toBe(true);
    const rows = await stored('together-');
    expect(rows).toEqual(ids.map((objectId, i) => ({ objectId, n: { i, text: `row ${i}` }, note: i % 2 ? `note ${i}` : null })));
  });

  it('fails only the row PostgreSQL refuses when it shared a statement', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `mixed-${String(i).padStart(2, '0')}`);
    // jsonb cannot hold \u0000 (SQLSTATE 22P05); one row carries it, and one repeats a stored objectId (23505).
    const outcomes = await Promise.allSettled([
      ...ids.map((id, i) => create(row(id, i === 5 ? { bad: 'nul\u0000here' } : { i }))),
      create(row('together-00', { again: true })),
    ]);
    const refused = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [[i, (o.reason as { code?: string }).code]] : []));
    expect(refused).toEqual([
      [5, '22P05'],
      [12, '23505'],
    ]);
    expect((await stored('mixed-')).map((r) => r.objectId)).toEqual(ids.filter((_, i) => i !== 5));
    expect((await stored('together-00'))[0]!.n).toEqual({ i: 0, text: 'row 0' });
  });

  it('keeps a transaction that does more than insert one row on its own connection, all or nothing', async () => {
    await expect(
      db.transaction(async (run, defer) => {
        defer(row('tx-1', 1));
        defer(row('tx-2', 2));
        await run(`SELECT 1`);
        throw new Error('changed its mind');
      }),
    ).rejects.toThrow('changed its mind');
    expect(await stored('tx-')).toEqual([]);
    await db.transaction(async (_run, defer) => {
      defer(row('tx-3', 3));
      defer(row('tx-4', 4));
    });
    expect((await stored('tx-')).map((r) => r.objectId)).toEqual(['tx-3', 'tx-4']);
  });
});
