import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountService } from '../src/platform/accounts/service.js';
import { migrations } from '../src/platform/store/migrations.js';
import { postgresMigrations } from '../src/platform/store/postgresMigrations.js';
import { PostgresSql } from '../src/platform/store/postgresSql.js';
import type { Sql } from '../src/shared/sql.js';
import { openDatabase } from '../src/shared/sqlite.js';
import { SqliteSql } from '../src/shared/sqliteSql.js';
import { makeHome, postgresDatabase, removeHome } from './helpers/server.js';
import { onPostgres } from './helpers/storage.js';

/**
 * The platform store's SQL seam (shared/sql.ts) on SQLite, and on PostgreSQL in the PostgreSQL run:
 * the same statements, transactions that hold the write lock from their start, and the rules the
 * platform services rely on.
 */
const kinds: Array<{ kind: 'sqlite' | 'postgres'; open: () => Promise<{ sql: Sql; close: () => Promise<void> }> }> = [
  {
    kind: 'sqlite',
    open: async () => {
      const home = makeHome();
      const sql = new SqliteSql(openDatabase(path.join(home, 'platform.db'), migrations));
      return { sql, close: async () => (await sql.close(), removeHome(home)) };
    },
  },
  {
    kind: 'postgres',
    open: async () => {
      const database = await postgresDatabase();
      const sql = await PostgresSql.open(database.env.BACKYARD_DATABASE_URL!, postgresMigrations, () => undefined);
      return { sql, close: async () => (await sql.close(), await database.drop()) };
    },
  },
];

describe.each(kinds)('the platform store on $kind', ({ kind, open }) => {
  const skip = kind === 'postgres' && !onPostgres;
  let store: { sql: Sql; close: () => Promise<void> } | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it.skipIf(skip)('commits a transaction, and rolls back all of one that throws', async () => {
    store = await open();
    const { sql } = store;
    await sql.transaction(async () => {
      await sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a1', 'ada', '2026-01-01T00:00:00.000Z')");
    });
    await expect(
      sql.transaction(async () => {
        await sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a2', 'bob', '2026-01-01T00:00:00.000Z')");
        // Inside: the row just written is seen, and a nested call joins the same transaction.
        expect(await sql.get('SELECT login FROM accounts WHERE id = ?', 'a2')).toEqual({ login: 'bob' });
        await sql.transaction(async () => sql.run("UPDATE accounts SET login = 'ADA' WHERE id = 'a1'"));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await sql.all('SELECT id, login FROM accounts ORDER BY id')).toEqual([{ id: 'a1', login: 'ada' }]);
  });

  it.skipIf(skip)('answers counts as numbers and binary columns as Buffers, as the services read them', async () => {
    store = await open();
    const { sql } = store;
    await sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a1', 'ada', '2026-01-01T00:00:00.000Z')");
    await sql.run("INSERT INTO account_tokens (id, account_id, token_hash, kind, created_at) VALUES ('t1', 'a1', ?, 'user', 'x')", Buffer.from([0, 1, 255]));
    expect(await sql.get('SELECT COUNT(*) AS n FROM accounts')).toEqual({ n: 1 });
    expect((await sql.get<{ token_hash: Buffer }>('SELECT token_hash FROM account_tokens'))!.token_hash).toEqual(Buffer.from([0, 1, 255]));
    expect(await sql.run("DELETE FROM account_tokens WHERE id = 'nope'")).toEqual({ changes: 0 });
  });

  it.skipIf(skip)('keeps a read-then-write transaction whole when many run at once: one account per login', async () => {
    store = await open();
    const accounts = new AccountService(store.sql);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => accounts.create(i % 2 ? 'Grace' : 'grace')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(String(o.reason)).toMatch(/already exists/);
    expect((await accounts.list()).map((a) => a.login.toLowerCase())).toEqual(['grace']);
  });

  it.skipIf(skip)('lets statements from outside a transaction wait for it rather than join it', async () => {
    store = await open();
    const { sql } = store;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = sql.transaction(async () => {
      await sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a1', 'ada', 'x')");
      await held;
      throw new Error('rolled back');
    });
    // Written from outside while the transaction is open: it must survive the rollback.
    const outside = sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a2', 'bob', 'x')");
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    await outside;
    expect(await sql.all('SELECT id FROM accounts ORDER BY id')).toEqual([{ id: 'a2' }]);
  });

  it.skipIf(kind !== 'postgres' || !onPostgres)('refuses a text PostgreSQL cannot store (NUL) as the caller\'s mistake, not a failure', async () => {
    store = await open();
    await expect(store.sql.run("INSERT INTO accounts (id, login, created_at) VALUES ('a1', ?, 'x')", 'a\u0000b')).rejects.toMatchObject({ kind: 'invalid', message: expect.stringContaining('\\u0000') });
    expect(await store.sql.all('SELECT id FROM accounts')).toEqual([]);
  });

  it.skipIf(skip)('compares logins without case and sorts them the same way on both', async () => {
    store = await open();
    const accounts = new AccountService(store.sql);
    for (const login of ['bob', 'Ada', 'carol', 'ALAN']) await accounts.create(login);
    expect((await accounts.list()).map((a) => a.login)).toEqual(['Ada', 'ALAN', 'bob', 'carol']);
    expect((await accounts.findByLogin('ada'))?.login).toBe('Ada');
  });
});
