import pg from 'pg';


/** Rewrites the compiler's `?` placeholders as PostgreSQL's `$1, $2, ...` (no SQL text we write holds a literal `?`). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Something that runs SQL with `?` placeholders: the pool, or one client inside a transaction. */
export type Run = (sql: string, params?: readonly unknown[]) => Promise<pg.QueryResult>;

/** Query shapes prepared by name; more (a `$in` of every length...) run unnamed. */
const MAX_PREPARED = 2000;

/** Channel names are ours (letters and `_`); quoted all the same. */
const quoteChannel = (channel: string) => `"${channel.replace(/"/g, '""')}"`;

/** The channel schema changes are announced on; the payload is the app's schema name. */
export const SCHEMA_CHANNEL = 'backyard_schema';

/**
 * The PostgreSQL database of `BACKYARD_DATABASE_URL` (issue 16), through node-postgres: one pool for
 * every app's adapter, and one connection that LISTENs, so that a change another Backyard process
 * commits (a schema change) reaches this one's caches.
 */
export class PostgresDatabase {
  readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private listening: Promise<pg.Client> | undefined;
  private readonly subscribers = new Map<string, Set<(payload: string) => void>>();

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

  /** Statement text → the name it is prepared under on each connection (node-postgres prepares a named statement once per connection). */
  private readonly names = new Map<string, string>();

  /**
   * The query of a statement: reads and writes of rows are named, so that each connection parses
   * and plans a query shape once rather than per call (at most MAX_PREPARED shapes; DDL never).
   */
  private config(sql: string, params: readonly unknown[]): pg.QueryConfig {
    const text = numbered(sql);
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_PREPARED && /^(SELECT|INSERT|UPDATE|DELETE) /.test(text)) {
      name = `backyard_${this.names.size}`;
      this.names.set(text, name);
    }
    return name === undefined ? { text, values: params as unknown[] } : { name, text, values: params as unknown[] };
  }

  /** Runs one statement on a pooled connection. */
  run: Run = (sql, params = []) => this.pool.query(this.config(sql, params));

  /**
   * Runs `fn` on one connection inside BEGIN ... COMMIT (ROLLBACK when it throws).
   * @throws what `fn` or the database throws.
   */
  async transaction<T>(fn: (run: Run) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const run: Run = (sql, params = []) => client.query(this.config(sql, params));
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
   * Calls `fn` with the payload of every announcement on `channel` (NOTIFY, delivered once the
   * announcing transaction commits; this process's own announcements too). Resolves once this
   * process listens on the channel.
   */
  async subscribe(channel: string, fn: (payload: string) => void): Promise<void> {
    let set = this.subscribers.get(channel);
    if (!set) this.subscribers.set(channel, (set = new Set()));
    set.add(fn);
    try {
      const client = await this.listen();
      if (!this.channels.has(channel)) {
        this.channels.add(channel);
        await client.query(`LISTEN ${quoteChannel(channel)}`);
      }
    } catch (error) {
      // Closed while connecting (a command that opened the platform and is done): nothing to hear.
      if (!this.closed) throw error;
    }
  }

  unsubscribe(channel: string, fn: (payload: string) => void): void {
    this.subscribers.get(channel)?.delete(fn);
  }

  /** Announces `payload` on `channel` to every process (`pg_notify`, outside any transaction). */
  async publish(channel: string, payload: string): Promise<void> {
    await this.run('SELECT pg_notify(?, ?)', [channel, payload]);
  }

  private readonly channels = new Set<string>();

  private listen(): Promise<pg.Client> {
    this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on('error', this.onError);
      client.on('notification', (message) => {
        for (const fn of this.subscribers.get(message.channel) ?? []) fn(message.payload ?? '');
      });
      await client.connect();
      this.listener = client;
      return client;
    })();
    return this.listening;
  }

  private closed = false;

  async close(): Promise<void> {
    this.closed = true;
    await this.listening?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}
