import type { FieldType, SchemaLookup } from '../../types.js';
import type { Dialect } from '../../query/dialect.js';
import type { StorageAdapter, StorageReads, StorageTransaction, StoredClass } from '../adapter.js';
import { SchemaCache } from '../schemaCache.js';
import { StatementCache } from '../../query/statementCache.js';
import { EVERYTHING, SCHEMA_CHANNEL, type PostgresDatabase, type Run } from './database.js';
import { postgresDialect } from './dialect.js';
import { fieldColumnKind, fieldColumnName, fitIdent, PUBLIC_READ_DDL, quoteIdent, type FieldColumnKind } from './layout.js';
import { clientFault, guarded, PostgresReads } from './reads.js';
import { fieldIndexDdl, PostgresTransaction } from './transaction.js';
import { PostgresUniqueUsers } from './uniqueUsers.js';

export { indexExpression } from './transaction.js';

/**
 * The PostgreSQL StorageAdapter: one Backend App's objects in the schema `schema` of a
 * shared database (layout.ts), queried through the dialect of dialect.ts. Reads run on the pool.
 * A transaction runs on one connection and first takes the app's advisory lock
 * (`pg_advisory_xact_lock`), so that writes to one app take turns across every Backyard process on
 * the database, as they do on SQLite's one connection: a read-modify-write (a uniqueness check of a
 * username, an increment) sees every write committed before it. Commits are durable when answered
 * (PostgreSQL's `synchronous_commit`), so `durable()` has nothing to wait for.
 *
 * The schema is cached here and read synchronously. A transaction that changes it announces the
 * change (NOTIFY on database.ts's channel) as it commits; every process's adapter of the app
 * reloads its cache when told, so a class or field made through one process is known to the others
 * within one notification's delay.
 */
export class PostgresAdapter implements StorageAdapter, SchemaLookup {
  readonly dialect: Dialect;
  /** The app's schema as this process knows it (TransactionOwner: transactions keep it current). */
  readonly cache = new SchemaCache();
  readonly shapes: StatementCache;
  /** `_User`'s unique username, email and provider ids (uniqueUsers.ts). */
  readonly uniqueUsers: PostgresUniqueUsers;
  private readonly reads: PostgresReads;
  private readonly onSchemaChange = (payload: string) => {
    if (payload === this.schema || payload === EVERYTHING) void this.reloadSchema(this.db.run, false).catch(() => undefined);
  };
  /**
   * How many of this process's transactions hold the app's lock. While one does, the cache is that
   * transaction's (read under the lock, then changed by it before it commits), and a reload from the
   * pool reads at best the same committed schema, or one older than the transaction's changes.
   */
  private locksHeld = 0;
  private opening: Promise<void> | undefined;
  private isOpen = false;
  /** The typed field columns (layout.ts) the class tables have, as `<table>\0<column>`, read from the catalog. */
  private fieldColumns = new Set<string>();
  /** Changes whenever `fieldColumns` does, so that statements compiled before are compiled again. */
  private columnsGeneration = 0;

  /**
   * Resolves once the schema exists and its cache is loaded; undefined after. A failed opening (the
   * database unreachable) is tried again by the next call, so the app serves once the database is back.
   */
  get opened(): Promise<void> | undefined {
    if (this.isOpen) return undefined;
    this.opening ??= this.open().then(
      () => {
        this.isOpen = true;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    return this.opening;
  }

  /**
   * @param db the shared database (pool and listener).
   * @param schema the app's schema name (layout.ts, appSchema); created when missing.
   */
  constructor(
    private readonly db: PostgresDatabase,
    readonly schema: string,
  ) {
    this.dialect = postgresDialect(schema, (className, field) => this.fieldColumn(className, field));
    this.uniqueUsers = new PostgresUniqueUsers(schema);
    this.shapes = new StatementCache({ dialect: this.dialect, schema: this }, () => this.cache.generation * 2 ** 20 + this.columnsGeneration);
    this.reads = new PostgresReads(this, guarded(db.run));
    // Started now, so that the first request finds it under way; a failure is reported to that request.
    this.opened?.catch(() => undefined);
  }

  qualified(table: string): string {
    return `${quoteIdent(this.schema)}.${quoteIdent(table)}`;
  }

  private async open(): Promise<void> {
    await this.db.transaction(async (run) => {
      // Two processes opening the same new app would race on CREATE SCHEMA.
      await run('SELECT pg_advisory_xact_lock(hashtext(?))', [this.schema]);
      await run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
      await run(`CREATE TABLE IF NOT EXISTS ${this.qualified('_SCHEMA')} ("className" text COLLATE "C" PRIMARY KEY, schema jsonb NOT NULL)`);
      await run(
        `CREATE TABLE IF NOT EXISTS ${this.qualified('_CONFIG')} (key text COLLATE "C" PRIMARY KEY, value jsonb NOT NULL, "masterKeyOnly" boolean NOT NULL DEFAULT false)`,
      );
      await run(`CREATE TABLE IF NOT EXISTS ${this.qualified('_SCHEMA_VERSION')} (one boolean PRIMARY KEY DEFAULT true CHECK (one), v bigint NOT NULL)`);
      await run(`INSERT INTO ${this.qualified('_SCHEMA_VERSION')} (v) VALUES (0) ON CONFLICT DO NOTHING`);
    });
    await this.db.subscribe(SCHEMA_CHANNEL, this.onSchemaChange);
    await this.reloadSchema(this.db.run, false);
    await this.upgradeTables();
    // Apps whose `_User` was made before its unique indexes get them now (or a warning: uniqueUsers.ts).
    if (this.cache.has('_User')) {
      await this.db.transaction(async (run) => {
        await run('SELECT pg_advisory_xact_lock(hashtext(?))', [this.schema]);
        await this.uniqueUsers.userIndexes(run);
      });
    }
  }

  /** The kind of typed column `className`'s table has of `field`, when it has one of its schema type (layout.ts). */
  private fieldColumn(className: string, field: string): FieldColumnKind | undefined {
    const kind = fieldColumnKind(this.cache.fields(className)?.[field]?.type);
    return kind && this.fieldColumns.has(`${fitIdent(`cls_${className}`)}\0${fieldColumnName(field, kind)}`) ? kind : undefined;
  }

  /** Reads which typed field columns the app's class tables have (committed ones, as every statement will see them). */
  private async loadColumns(run: Run = this.db.run): Promise<void> {
    const result = await run(
      `SELECT c.relname AS t, a.attname AS c FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ? AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND a.attname ~ '^_[sn]:'`,
      [this.schema],
    );
    this.fieldColumns = new Set((result.rows as Array<{ t: string; c: string }>).map((r) => `${r.t}\0${r.c}`));
    this.columnsGeneration++;
  }

  /**
   * Brings class tables made before the typed columns (layout.ts) to the current layout: each gets
   * `_publicRead`, and each index on fields without it is made again over the typed columns (as
   * SQLite's classTables.ts `upgradeFieldIndexes` does). Under the app's lock, in one transaction, so
   * that of processes opening the app at once one does it and the others find it done.
   */
  private async upgradeTables(): Promise<void> {
    const stale = async (run: Run) => {
      const result = await run(
        `SELECT c.relname AS t, NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = '_publicRead' AND NOT a.attisdropped) AS "noFlag",
           ARRAY(SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid AND x.indnatts = x.indnkeyatts) AS plain
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname LIKE 'cls\\_%'`,
        [this.schema],
      );
      return new Map((result.rows as Array<{ t: string; noFlag: boolean; plain: string[] }>).map((r) => [r.t, r]));
    };
    const needs = (tables: Awaited<ReturnType<typeof stale>>) =>
      this.cache.load().flatMap((cls) => {
        const table = tables.get(fitIdent(`cls_${cls.className}`));
        if (!table) return [];
        const indexes = Object.entries(cls.indexes ?? {}).filter(([name]) => table.plain.includes(fitIdent(`idx_${cls.className}_${name}`)));
        return table.noFlag || indexes.length > 0 ? [{ cls, noFlag: table.noFlag, indexes }] : [];
      });
    if (needs(await stale(this.db.run)).length > 0) {
      await this.db.transaction(async (run) => {
        await run('SELECT pg_advisory_xact_lock(hashtext(?))', [this.schema]);
        for (const { cls, noFlag, indexes } of needs(await stale(run))) {
          const table = this.qualified(`cls_${cls.className}`);
          if (noFlag) await run(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${PUBLIC_READ_DDL}`);
          for (const [name, keys] of indexes) {
            const index = quoteIdent(`idx_${cls.className}_${name}`);
            await run(`DROP INDEX IF EXISTS ${quoteIdent(this.schema)}.${index}`);
            for (const statement of fieldIndexDdl(table, index, keys, cls.fields)) await run(statement);
          }
        }
      });
    }
    await this.loadColumns();
  }

  /** The `_SCHEMA_VERSION` the cache was read at: every commit that changes the schema increments it. */
  version = -1;

  /**
   * Reads the schema again and makes it the cache's.
   * @param run the pool's, or that of a transaction holding the app's lock.
   * @param underLock whether `run` is a transaction holding the app's lock. A reload that is not
   *   leaves the cache alone while one of this process's transactions holds the lock: it may have read
   *   the schema before that transaction's changes, which are in the cache but not yet committed, and
   *   the transaction's commit makes the cache current anyway.
   */
  private async reloadSchema(run: Run, underLock: boolean): Promise<void> {
    const version = await this.readVersion(run);
    const result = await run(`SELECT "className", schema FROM ${this.qualified('_SCHEMA')} ORDER BY "className"`);
    if (!underLock && this.locksHeld > 0) return;
    // A commit of this process may have set a newer schema while this was read (an announcement of
    // its own earlier change arriving late): what was read is older, and must not replace it.
    if (version < this.version) return;
    this.uniqueUsers.forget();
    const rows = result.rows as Array<{ className: string; schema: Omit<StoredClass, 'className'> }>;
    this.cache.replace(rows.map((r) => ({ className: r.className, ...r.schema })));
    this.version = version;
    // Another process's index or removed field may have added or dropped a typed column.
    if (this.isOpen) await this.loadColumns(run);
  }

  private async readVersion(run: Run): Promise<number> {
    return Number((await run(`SELECT v FROM ${this.qualified('_SCHEMA_VERSION')}`)).rows[0]?.v ?? 0);
  }

  /**
   * Reloads the cache when another process changed the schema since it was read and its
   * announcement has not arrived yet (PostgresReads.missing, a transaction's start).
   */
  async catchUp(run: Run = this.db.run, underLock = false): Promise<void> {
    if (this.opened) await this.opened;
    if ((await this.readVersion(run)) !== this.version) await this.reloadSchema(run, underLock);
  }

  /** Reloads the cache unless it was read at `version` (a transaction holding the lock, on its connection). */
  async followVersion(version: number, run: Run): Promise<void> {
    if (version !== this.version) await this.reloadSchema(run, true);
  }

  /** Counts a transaction of this process taking (`true`) or, as it ends, releasing the app's lock. */
  holdLock(held: boolean): void {
    this.locksHeld += held ? 1 : -1;
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    if (this.opened) await this.opened;
    let tx: PostgresTransaction | undefined;
    try {
      const result = await this.db.transaction(async (run, defer) => {
        tx = new PostgresTransaction(this, guarded(run), defer);
        const result = await fn(tx);
        if (tx.schemaChanged) {
          const bumped = await run(`UPDATE ${this.qualified('_SCHEMA_VERSION')} SET v = v + 1 RETURNING v`);
          await run('SELECT pg_notify(?, ?)', [SCHEMA_CHANNEL, this.schema]);
          this.version = Number(bumped.rows[0]?.v);
        }
        tx.ended = true;
        return result;
      });
      this.uniqueUsers.committed(tx!.authDataIndexes);
      if (tx!.holdsLock) this.holdLock(false);
      if (tx!.columnsChanged) await this.loadColumns();
      return result;
    } catch (error) {
      if (tx) tx.ended = true;
      if (tx?.schemaChanged && tx.before) {
        this.cache.restore(tx.before.view);
        this.version = tx.before.version;
      }
      if (tx?.holdsLock) this.holdLock(false);
      // A deferred insert's failure comes from the commit, not through `guarded`.
      throw clientFault(error);
    }
  }

  async durable(): Promise<void> {
    // PostgreSQL answered COMMIT once the commit was flushed (synchronous_commit).
  }

  loadSchema(): StoredClass[] {
    return this.cache.load();
  }

  schemaGeneration(): number {
    return this.cache.generation;
  }
  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.cache.get(className);
  }

  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.cache.fields(className);
  }

  /** Reads wait for the opening when a caller did not (the schema cache must be loaded first). */
  private read<T>(fn: () => Promise<T>): Promise<T> {
    return this.opened ? this.opened.then(fn) : fn();
  }
  get: StorageReads['get'] = (className, objectId) => this.read(() => this.reads.get(className, objectId));
  find: StorageReads['find'] = (className, options) => this.read(() => this.reads.find(className, options));
  findText: NonNullable<StorageReads['findText']> = (className, options) => this.read(() => this.reads.findText(className, options));
  getText: NonNullable<StorageReads['getText']> = (className, objectId) => this.read(() => this.reads.getText(className, objectId));
  count: StorageReads['count'] = (className, options) => this.read(() => this.reads.count(className, options));
  relatedIds: StorageReads['relatedIds'] = (ownerClass, field, owningId) => this.read(() => this.reads.relatedIds(ownerClass, field, owningId));
  owningIds: StorageReads['owningIds'] = (ownerClass, field, relatedIds) => this.read(() => this.reads.owningIds(ownerClass, field, relatedIds));
  getConfig: StorageReads['getConfig'] = () => this.read(() => this.reads.getConfig());
  group: StorageReads['group'] = (className, where, plan) => this.read(() => this.reads.group(className, where, plan));

  /** Stops listening for this app's schema changes; the shared pool stays open (database.ts closes it). */
  async close(): Promise<void> {
    this.db.unsubscribe(SCHEMA_CHANNEL, this.onSchemaChange);
  }

  /** Drops the app's schema with everything in it (the app is being deleted). */
  async drop(): Promise<void> {
    await this.close();
    await this.db.run(`DROP SCHEMA IF EXISTS ${quoteIdent(this.schema)} CASCADE`);
  }
}
