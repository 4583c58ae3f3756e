import pg from 'pg';

/**
 * The PostgreSQL database of `BACKYARD_DATABASE_URL` (issue 16), through node-postgres: one pool for
 * every app's adapter, and one connection that LISTENs, so that a change another Backyard process
 * commits (a schema change) reaches this one's caches.
 */

/** Rewrites the compiler's `?` placeholders as PostgreSQL's `$1, $2, ...` (no SQL text we write holds a literal `?`). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Something that runs SQL with `?` placeholders: the pool, or one client inside a transaction. */
export type Run = (sql: string, params?: readonly unknown[]) => Promise<pg.QueryResult>;

/** The channel schema changes are announced on; the payload is the app's schema name. */
export const SCHEMA_CHANNEL = 'backyard_schema';

export class PostgresDatabase {
  readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private listening: Promise<void> | undefined;
  private readonly subscribers = new Map<string, Set<() => void>>();

  /**
   * @param url a `postgres://` connection string (config.ts checks its form).
   * @param onError where errors of idle connections go (a restarted server, a dropped link); the
   *   pool replaces such connections itself.
   */
  constructor(
    readonly url: string,
    private readonly onError: (error: Error) => void,
  ) {
    this.pool = new pg.Pool({ connectionString: url, max: 16 });
    this.pool.on('error', onError);
  }

  /** Runs one statement on a pooled connection. */
  run: Run = (sql, params = []) => this.pool.query(numbered(sql), params as unknown[]);

  /**
   * Runs `fn` on one connection inside BEGIN ... COMMIT (ROLLBACK when it throws).
   * @throws what `fn` or the database throws.
   */
  async transaction<T>(fn: (run: Run) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const run: Run = (sql, params = []) => client.query(numbered(sql), params as unknown[]);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(run);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Calls `fn` whenever a process announces `payload` on `channel` (NOTIFY, delivered after the
   * announcing transaction commits). Resolves once this process listens.
   */
  async subscribe(channel: string, payload: string, fn: () => void): Promise<void> {
    const key = `${channel}\n${payload}`;
    let set = this.subscribers.get(key);
    if (!set) this.subscribers.set(key, (set = new Set()));
    set.add(fn);
    await this.listen();
  }

  unsubscribe(channel: string, payload: string, fn: () => void): void {
    this.subscribers.get(`${channel}\n${payload}`)?.delete(fn);
  }

  private listen(): Promise<void> {
    this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on('error', this.onError);
      client.on('notification', (message) => {
        for (const fn of this.subscribers.get(`${message.channel}\n${message.payload ?? ''}`) ?? []) fn();
      });
      await client.connect();
      await client.query(`LISTEN ${SCHEMA_CHANNEL}`);
      this.listener = client;
    })();
    return this.listening;
  }

  async close(): Promise<void> {
    await this.listening?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}
