import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Sql, SqlChanges } from '../../shared/sql.js';
import { numbered } from '../../data/storage/postgres/database.js';
import type { Migration } from '../../shared/sqlite.js';
import { invalid, unavailable } from '../../errors.js';
import { isUnreachableDatabase, unreachableText } from '../../shared/unreachable.js';

/** The schema that holds the platform's tables in the database of `BACKYARD_DATABASE_URL`. */
export const PLATFORM_SCHEMA = 'backyard';

/**
 * The platform's advisory locks take two int4 keys, a key space apart from the one-bigint keys of the
 * apps' locks (storage/postgres): this class, then which lock.
 */
const LOCK_CLASS = 0x62796172; // "byar"
/** The lock every platform write transaction takes (one writer at a time, as SQLite's). */
const WRITE_LOCK = 1;
/** The lock that makes two processes starting at once migrate one after the other. */
const MIGRATION_LOCK = 2;

/** PostgreSQL's int8 (COUNT(*), identity columns) as a JavaScript number, as SQLite answers it. */
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * A lost or refused connection as ManagementError(unavailable), and a text PostgreSQL cannot store
 * (a NUL character: SQLSTATE 22021) as ManagementError(invalid), which callers answer as such (500
 * and 400); other errors as they are.
 */
const unreachable = (error: unknown): unknown => {
  if (isUnreachableDatabase(error)) return unavailable(`Backyard's database (PostgreSQL) cannot be reached right now (${error.message}); try again later.`);
  if ((error as { code?: unknown }).code === '22021') return invalid('A text value holds a character that cannot be stored (a NUL, \\u0000): remove it and try again.');
  return error;
};

interface Scope {
  client: pg.PoolClient;
  open: boolean;
}

/**
 * `Sql` over a node-postgres pool whose connections look up tables in the `backyard` schema
 * (the platform's state on PostgreSQL). `?` placeholders become `$n`. A transaction takes
 * a transaction-scoped advisory lock first, so read-then-write transactions of every process run
 * one at a time, as they do on SQLite.
 */
export class PostgresSql implements Sql {
  readonly kind = 'postgres';
  private readonly scope = new AsyncLocalStorage<Scope>();
  /** Transactions open now: the storage is disabled when none is (sqliteSql.ts says why). */
  private openTransactions = 0;

  private constructor(private readonly pool: pg.Pool) {}

  /**
   * Connects to `url`, creates the `backyard` schema when missing and applies `migrations` above the
   * recorded version (under a lock, so processes starting together migrate once).
   * @throws Error naming the database (without its password) when it cannot be reached or migrated.
   */
  static async open(url: string, migrations: readonly Migration[], onError: (error: Error) => void): Promise<PostgresSql> {
    // Tables are found in the platform's schema: set at connection start, after the URL's own options.
    const connection = new URL(url);
    const own = connection.searchParams.get('options');
    connection.searchParams.delete('options');
    const options = [own, `-c search_path=${PLATFORM_SCHEMA}`].filter(Boolean).join(' ');
    const pool = new pg.Pool({ connectionString: connection.toString(), options, max: 4, types });
    pool.on('error', onError);
    const sql = new PostgresSql(pool);
    try {
      await sql.migrate(migrations);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw isUnreachableDatabase(error) ? new Error(unreachableText(url, error)) : error;
    }
    return sql;
  }

  async get<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async run(sql: string, ...params: unknown[]): Promise<SqlChanges> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.getStore()?.open) return fn();
    const client = await this.pool.connect().catch((error: unknown) => {
      throw unreachable(error);
    });
    const scope: Scope = { client, open: true };
    this.openTransactions++;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_CLASS, WRITE_LOCK]);
      const result = await this.scope.run(scope, fn);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      scope.open = false;
      client.release();
      if (--this.openTransactions === 0) this.scope.disable();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * @throws ManagementError(unavailable) when the database cannot be reached (the caller may try
   *   again later), or the database's own error.
   */
  private async query(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    const scope = this.scope.getStore();
    const runner = scope?.open ? scope.client : this.pool;
    try {
      return await runner.query(numbered(sql), params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p)));
    } catch (error) {
      throw unreachable(error);
    }
  }

  private async migrate(migrations: readonly Migration[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]);
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${PLATFORM_SCHEMA}`);
        await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
        const current = Number((await client.query('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations')).rows[0].v);
        const latest = migrations.at(-1)?.version ?? 0;
        if (current > latest) {
          throw new Error(`The platform schema in PostgreSQL has version ${current}, newer than this Backyard knows (${latest}). Upgrade Backyard.`);
        }
        for (const m of migrations) {
          if (m.version <= current) continue;
          await client.query('BEGIN');
          try {
            await client.query(m.sql);
            await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  }
}
