/**
 * The schema cache of a PostgreSQL app (src/data/storage/postgres/adapter.ts) against announcements
 * that arrive while this process's own transaction is changing the schema: a reload read from the
 * pool then sees the committed schema, older than the transaction's change, and must not replace
 * the cache with it. (CI once answered a protected field right after `PUT /schemas` set it hidden:
 * the announcement of the request before had reloaded the cache in the middle of the change.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PostgresAdapter } from '../src/data/storage/postgres/adapter.js';
import { PostgresDatabase, SCHEMA_CHANNEL, type Run } from '../src/data/storage/postgres/database.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const item = (protectedFields: string[]) => ({
  className: 'Item',
  fields: { secret: { type: 'String' as const } },
  classLevelPermissions: { find: { '*': true }, get: { '*': true }, protectedFields: { '*': protectedFields } },
  indexes: {},
});

describe.skipIf(!onPostgres)('the PostgreSQL schema cache during a schema change', () => {
  let schema: string;
  const databases: PostgresDatabase[] = [];
  /**
   * An adapter of the test's schema on a pool of its own (another process, as far as PostgreSQL
   * knows), with the promises of its reads of `_SCHEMA`, so that a test can await a reload.
   */
  const open = () => {
    const db = new PostgresDatabase(process.env.BACKYARD_TEST_DATABASE_URL!, () => undefined);
    databases.push(db);
    const schemaReads: Array<Promise<unknown>> = [];
    const run: Run = db.run;
    db.run = (sql, params) => {
      const result = run(sql, params);
      if (sql.startsWith('SELECT "className", schema FROM')) schemaReads.push(result.catch(() => undefined));
      return result;
    };
    return { adapter: new PostgresAdapter(db, schema), schemaReads };
  };
  const hidden = (adapter: PostgresAdapter) => adapter.getClass('Item')?.classLevelPermissions.protectedFields;

  beforeEach(() => {
    schema = `app_sc${process.pid}${Date.now()}`;
  });
  afterEach(async () => {
    for (const db of databases.splice(0)) await db.pool.end();
    await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('keeps a change an announcement arrives in the middle of, once it commits', async () => {
    const { adapter, schemaReads } = open();
    await adapter.transaction((tx) => tx.saveClass(item([])));
    await adapter.transaction(async (tx) => {
      await tx.saveClass(item(['secret']));
      // The announcement of an earlier change, arriving now: the adapter reloads from the pool.
      const before = schemaReads.length;
      await pgQuery('SELECT pg_notify($1, $2)', [SCHEMA_CHANNEL, schema]);
      await vi.waitFor(() => expect(schemaReads.length).toBeGreaterThan(before), { timeout: 10_000, interval: 5 });
      await schemaReads.at(-1);
      expect(hidden(adapter)).toEqual({ '*': ['secret'] });
    });
    expect(hidden(adapter)).toEqual({ '*': ['secret'] });
    // What was committed is what the cache holds.
    const stored = await pgQuery(`SELECT schema FROM "${schema}"."_SCHEMA" WHERE "className" = 'Item'`);
    expect((stored[0]!.schema as { classLevelPermissions: unknown }).classLevelPermissions).toEqual(item(['secret']).classLevelPermissions);
  });

  it('restores the cache of a change rolled back, whatever was reloaded meanwhile', async () => {
    const { adapter, schemaReads } = open();
    await adapter.transaction((tx) => tx.saveClass(item([])));
    await expect(
      adapter.transaction(async (tx) => {
        await tx.saveClass(item(['secret']));
        const before = schemaReads.length;
        await pgQuery('SELECT pg_notify($1, $2)', [SCHEMA_CHANNEL, schema]);
        await vi.waitFor(() => expect(schemaReads.length).toBeGreaterThan(before), { timeout: 10_000, interval: 5 });
        await schemaReads.at(-1);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(hidden(adapter)).toEqual({ '*': [] });
  });

  it("still takes another process's change from the pool when no transaction of its own holds the lock", async () => {
    const one = open();
    const other = open();
    await one.adapter.transaction((tx) => tx.saveClass(item([])));
    await other.adapter.catchUp();
    expect(hidden(other.adapter)).toEqual({ '*': [] });
    await one.adapter.transaction((tx) => tx.saveClass(item(['secret'])));
    // Without waiting for the announcement: a catch-up reads the version and reloads from the pool.
    await other.adapter.catchUp();
    expect(hidden(other.adapter)).toEqual({ '*': ['secret'] });
  });
});
