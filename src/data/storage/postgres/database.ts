import pg from 'pg';
import { InsertBatches, singleInsert, type RowInsert } from './insertBatches.js';
import type { Run } from './run.js';

/** Rewrites the compiler's `?` placeholders as PostgreSQL's `$1, $2, ...` (no SQL text we write holds a literal `?`). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export type { Run } from './run.js';

/** The payload subscribers get after the listening connection was lost and made again. */
export const EVERYTHING = '*';

/** How long to wait before listening again after the listening connection is lost. */
const RELISTEN_MS = 1000;

/** Query shapes prepared by name; more (a `$in` of every length...) run unnamed. */
const MAX_PREPARED = 2000;

/** Channel names are ours (letters and `_`); quoted all the same. */
const quoteChannel = (channel: string) => `"${channel.replace(/"/g, '""')}"`;

/** The channel schema changes are announced on; the payload is the app's schema name. */
export const SCHEMA_CHANNEL = 'backyard_schema';

/**
 * The PostgreSQL database of `BACKYARD_DATABASE_URL`, through node-postgres: one pool for
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
    // Named statements (config) with generic plans: each query shape is planned once per connection
    // rather than at each of its first runs. A URL's own `options` parameter takes precedence.
    const options = new URL(url).searchParams.has('options') ? {} : { options: '-c plan_cache_mode=force_generic_plan' };
    this.pool = new pg.Pool({ connectionString: url, max: 16, ...options });
    this.pool.on('error', onError);
  }

  /**
   * Statement text (with `?`) → its numbered text and the name it is prepared under on each
   * connection (node-postgres prepares a named statement once per connection).
   */
  private readonly prepared = new Map<string, { text: string; name: string }>();

  /**
   * The query of a statement: reads and writes of rows are named, so that each connection parses
   * and plans a query shape once rather than per call (at most MAX_PREPARED shapes; DDL never). The
   * compiler gives a query shape the same text for any values (query/statementCache.ts), so one
   * name serves them all.
   */
  private config(sql: string, params: readonly unknown[]): pg.QueryConfig {
    // The extended protocol for every statement, also those without values (DDL): PostgreSQL refuses
    // several statements in one Parse message, where the simple protocol would run them all.
    const known = this.prepared.get(sql);
    if (known) return { text: known.text, name: known.name, values: params as unknown[], queryMode: 'extended' } as pg.QueryConfig;
    const text = numbered(sql);
    if (this.prepared.size < MAX_PREPARED && /^(SELECT|INSERT|UPDATE|DELETE) /.test(text)) {
      const name = `backyard_${this.prepared.size}`;
      this.prepared.set(sql, { text, name });
      return { text, name, values: params as unknown[], queryMode: 'extended' } as pg.QueryConfig;
    }
    return { text, values: params as unknown[], queryMode: 'extended' } as pg.QueryConfig;
  }

  /** Runs one statement on a pooled connection. */
  run: Run = (sql, params = []) => this.pool.query(this.config(sql, params));

  /** Creates' inserts sent alone, shared between those that arrive together (insertBatches.ts). */
  private readonly batches = new InsertBatches((sql, params) => this.run(sql, params));

  /**
   * Runs `fn` on one connection as one transaction. BEGIN is sent with the first statement `run`
   * sends; rows given to `defer` (inserts whose result nobody reads) wait for it, or, when a
   * transaction is nothing but one deferred insert, go without a transaction of their own through
   * InsertBatches, which PostgreSQL commits as one statement: a create costs one round trip instead
   * of three, and creates arriving together share one. The connection is taken from the pool only
   * when a statement is sent on it.
   * @throws what `fn` or the database throws (a deferred statement's failure at the end), after
   *   rolling back.
   */
  async transaction<T>(fn: (run: Run, defer: (insert: RowInsert) => void) => Promise<T>): Promise<T> {
    let connecting: Promise<pg.PoolClient> | undefined;
    const send = async (sql: string, params: readonly unknown[] = []) => (await (connecting ??= this.pool.connect())).query(this.config(sql, params));
    let begun = false;
    const pending: RowInsert[] = [];
    /** Begins (once) and sends the deferred inserts, in order. */
    const flush = async () => {
      if (!begun) {
        begun = true;
        await send('BEGIN');
      }
      for (const insert of pending.splice(0)) {
        const { sql, params } = singleInsert(insert);
        await send(sql, params);
      }
    };
    const run: Run = async (sql, params = []) => {
      await flush();
      return send(sql, params);
    };
    let broken: Error | undefined;
    try {
      const result = await fn(run, (insert) => void pending.push(insert));
      if (!begun && pending.length === 1) await this.batches.insert(pending[0]!);
      else if (begun || pending.length > 0) {
        await flush();
        await send('COMMIT');
      }
      return result;
    } catch (error) {
      if (begun) await send('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      if (connecting) await connecting.then((client) => client.release(broken), () => undefined);
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
        await this.onListener(() => client.query(`LISTEN ${quoteChannel(channel)}`));
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

  /** The listening connection's statements, one at a time (a client runs one query at once; pg@9 will refuse more). */
  private listenerQueue: Promise<unknown> = Promise.resolve();

  private onListener<T>(statement: () => Promise<T>): Promise<T> {
    const next = this.listenerQueue.then(statement, statement);
    this.listenerQueue = next.catch(() => undefined);
    return next;
  }

  private listen(): Promise<pg.Client> {
    this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on('error', this.onError);
      client.on('end', () => this.lostListener(client));
      client.on('notification', (message) => {
        for (const fn of this.subscribers.get(message.channel) ?? []) fn(message.payload ?? '');
      });
      await client.connect();
      this.listener = client;
      return client;
    })();
    // A failed connection is tried again by the next subscriber (the database may be back by then).
    this.listening.catch(() => {
      this.listening = undefined;
    });
    return this.listening;
  }

  private closed = false;

  /**
   * The listening connection ended (PostgreSQL restarted, the link dropped): listen again, and tell
   * every subscriber that anything may have changed meanwhile (payload `*`: announcements made while
   * nobody listened are lost).
   */
  private lostListener(client: pg.Client): void {
    if (this.closed || this.listener !== client) return;
    this.listener = undefined;
    this.listening = undefined;
    this.channels.clear();
    const relisten = async (): Promise<void> => {
      if (this.closed) return;
      try {
        const fresh = await this.listen();
        for (const channel of this.subscribers.keys()) {
          this.channels.add(channel);
          await this.onListener(() => fresh.query(`LISTEN ${quoteChannel(channel)}`));
        }
        for (const set of this.subscribers.values()) for (const fn of set) fn(EVERYTHING);
      } catch {
        setTimeout(() => void relisten(), RELISTEN_MS).unref();
      }
    };
    setTimeout(() => void relisten(), RELISTEN_MS).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listening?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}
