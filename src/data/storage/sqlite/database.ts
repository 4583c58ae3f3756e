import type Database from 'better-sqlite3';
import { openDatabase } from '../../../shared/sqlite.js';
import { fieldPath } from '../../fieldPath.js';
import { compileGet } from '../../query/statement.js';
import { StatementCache } from '../../query/statementCache.js';
import type { FieldType, SchemaLookup } from '../../types.js';
import type { StoredClass } from '../adapter.js';
import { SchemaCache } from '../schemaCache.js';
import { upgradeClassTables, upgradeFieldIndexes } from './classTables.js';
import { sqliteDialect } from './dialect.js';
import { WalSync } from './durability.js';
import { registerQueryFunctions } from './functions.js';
import { classTable, indexExpr, quoteIdent, runStatement } from './layout.js';
import { dataMigrations } from './migrations.js';
import { SqliteUniqueUsers } from './uniqueUsers.js';

/** How a statement answers rows: better-sqlite3's objects, arrays (raw) or first columns (pluck). */
const asPrepared = (s: Database.Statement) => s;
const asRaw = (s: Database.Statement) => s.raw(true);
const asPluck = (s: Database.Statement) => s.pluck(true);

/** Statements kept prepared per mode (`stmt`, `rowStmt`, `valueStmt`). */
const MAX_STATEMENTS = 2000;

/**
 * One Backend App's `data.db`, open on this thread (better-sqlite3, synchronous): WAL with
 * `synchronous=NORMAL` plus a group commit that syncs the WAL before a write is answered
 * (durability.ts), laid out as layout.ts describes, with the schema cache its queries compile against
 * and the statements prepared for it. The reads (reads.ts) and the transactions (transaction.ts) run
 * on it; the adapter (adapter.ts) owns it and decides when transactions begin and end.
 */
export class SqliteDatabase implements SchemaLookup {
  readonly db: Database.Database;
  /** The app's schema as stored in `_SCHEMA`. */
  readonly classes: SchemaCache;
  /** `_User`'s unique username, email and provider ids (uniqueUsers.ts); a transaction calls it before each user write. */
  readonly uniqueUsers: SqliteUniqueUsers;
  /** The SQL of finds and counts by query shape (query/statementCache.ts). */
  readonly shapes: StatementCache;
  /** Whether the open transaction changed the schema or a table (what `rollback` must reload). */
  schemaChanged = false;

  private readonly statements = new Map<string, Database.Statement>();
  /** Statements that read class rows, in raw mode: arrays, so no column name is looked up per row. */
  private readonly rowStatements = new Map<string, Database.Statement>();
  /** Statements that answer one column's values (`valueStmt`). */
  private readonly valueStatements = new Map<string, Database.Statement>();
  /** The get-by-objectId statement of each class (`getStmt`). */
  private readonly getStatements = new Map<string, Database.Statement>();
  private readonly wal: WalSync;
  private readonly txn: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Database.Statement>;

  /**
   * Opens (creating and migrating) the file, upgrades class tables of an earlier layout
   * (classTables.ts) and loads the schema.
   * @throws SqliteError SQLITE_BUSY when another connection holds the file (shared/sqlite.ts).
   */
  constructor(file: string) {
    // Only the server process that serves the app opens its data.db (docs/design.md, "One process, one
    // port"); holding the locks spares each statement two fcntl calls (about 8% of a GET by id).
    this.db = openDatabase(file, dataMigrations, { exclusive: true });
    // Group commit: commits do not sync; `durable()` syncs the WAL off the event loop (durability.ts).
    this.db.pragma('synchronous = NORMAL');
    // A checkpoint copies each page changed since the last one into data.db and syncs it, inside a
    // commit on the event loop. Random objectIds spread inserts over the table's pages, so a longer
    // interval copies each page once for many commits: 10,000 pages (a WAL of up to 40 MB, reused,
    // and removed at close) instead of SQLite's 1,000 took about 15 µs off each insert here.
    this.db.pragma('wal_autocheckpoint = 10000');
    this.wal = new WalSync(`${file}-wal`);
    // Prepared BEGIN/COMMIT rather than better-sqlite3's `db.transaction(fn)`, which builds a wrapper
    // per call (about 9 µs less per write, bench/data-api).
    this.txn = {
      begin: this.db.prepare('BEGIN IMMEDIATE'),
      commit: this.db.prepare('COMMIT'),
      rollback: this.db.prepare('ROLLBACK'),
      savepoint: this.db.prepare('SAVEPOINT joined'),
      release: this.db.prepare('RELEASE joined'),
      rollbackTo: this.db.prepare('ROLLBACK TO joined'),
    };
    registerQueryFunctions(this.db);
    upgradeClassTables(this.db);
    this.classes = new SchemaCache(this.readSchema());
    upgradeFieldIndexes(this.db, this.classes.load());
    this.shapes = new StatementCache({ dialect: sqliteDialect, schema: this }, () => this.classes.generation);
    this.uniqueUsers = new SqliteUniqueUsers(this.db, file);
    if (this.classes.has('_User')) {
      this.userIndexes();
      this.uniqueUsers.userIndexes();
    }
  }

  /** The statement of `sql`, prepared once (until a schema change: `forgetStatements`). */
  stmt(sql: string): Database.Statement {
    return this.prepared(this.statements, sql, asPrepared);
  }

  /** The statement of `sql` in raw mode (rows as arrays), prepared once. */
  rowStmt(sql: string): Database.Statement {
    return this.prepared(this.rowStatements, sql, asRaw);
  }

  /** The statement of `sql` answering its first column's values (better-sqlite3's pluck mode), prepared once. */
  valueStmt(sql: string): Database.Statement {
    return this.prepared(this.valueStatements, sql, asPluck);
  }

  private prepared(cache: Map<string, Database.Statement>, sql: string, mode: (s: Database.Statement) => Database.Statement): Database.Statement {
    let s = cache.get(sql);
    if (!s) {
      // Texts are few in a real app (a query shape and limit each: query/statementCache.ts); past
      // MAX_STATEMENTS a client is sending new ones, and the cache starts again rather than grow.
      if (cache.size >= MAX_STATEMENTS) cache.clear();
      s = mode(this.db.prepare(sql));
      cache.set(sql, s);
    }
    return s;
  }

  /**
   * The raw-mode SELECT of one row of `className` by objectId (query/statement.ts), with the row's
   * columns or `columns` (the caller's constant SQL, one per `kind`), prepared once per class and kind
   * so that a get builds no SQL text.
   */
  getStmt(className: string, kind = 'row', columns?: string): Database.Statement {
    const key = `${kind}|${className}`;
    let s = this.getStatements.get(key);
    if (!s) {
      s = this.rowStmt(compileGet(className, sqliteDialect, columns));
      this.getStatements.set(key, s);
    }
    return s;
  }

  /** Statements naming a table must be prepared again after the table changes. */
  forgetStatements(): void {
    this.statements.clear();
    this.schemaChanged = true;
  }

  begin(): void {
    this.txn.begin.run();
    this.schemaChanged = false;
  }

  commit(): void {
    this.txn.commit.run();
    this.wal.wrote();
  }

  /** Starts a transaction that joins the open one (a savepoint, adapter.ts): its writes commit with it. */
  join(): void {
    this.txn.savepoint.run();
  }

  /** Ends a joined transaction that succeeded: its writes stay in the open one. */
  release(): void {
    this.txn.release.run();
  }

  /**
   * Undoes a joined transaction that failed, keeping the open one's earlier writes (reloading the
   * schema as `rollback` does).
   * @returns false when SQLite had already rolled back the whole open transaction (a full disk, an
   *   I/O error: https://www.sqlite.org/lang_transaction.html, "Response To Errors Within A
   *   Transaction"), whose earlier writes are then lost too.
   */
  rollbackJoined(): boolean {
    const open = this.db.inTransaction;
    if (open) {
      this.txn.rollbackTo.run();
      this.txn.release.run();
    }
    this.reloadIfChanged();
    return open;
  }

  /**
   * Rolls back (when SQLite has not already, as after a full disk) and, when the transaction changed
   * the schema, reloads the schema cache and forgets the statements prepared since.
   */
  rollback(): void {
    if (this.db.inTransaction) this.txn.rollback.run();
    this.reloadIfChanged();
  }

  private reloadIfChanged(): void {
    if (!this.schemaChanged) return;
    this.classes.replace(this.readSchema());
    this.statements.clear();
    this.rowStatements.clear();
    this.valueStatements.clear();
    this.getStatements.clear();
    this.schemaChanged = false;
  }

  /** The WAL sync in flight, if any (durability.ts `inFlight`). */
  syncInFlight(): Promise<void> | undefined {
    return this.wal.inFlight();
  }

  /** Resolves once every commit so far is on disk (durability.ts). */
  durable(alone = false): Promise<void> {
    return this.wal.durable(alone);
  }

  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.classes.fields(className);
  }

  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.classes.get(className);
  }

  /**
   * Case-insensitive indexes on `_User`'s username and email: signup, login and updates check that
   * they are free with a case-insensitive exact match, which the compiler turns into
   * `lower(field) = ?` (query/operators.ts), so that check looks up one entry instead of reading
   * every user. Created with the `_User` table, and at open for apps made before them.
   */
  userIndexes(): void {
    for (const field of ['username', 'email']) {
      runStatement(this.db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls__User_${field}_lower`)} ON ${classTable('_User')} (lower(${indexExpr(fieldPath([field]))}))`);
    }
  }

  private readSchema(): StoredClass[] {
    const rows = this.db.prepare('SELECT className, schema FROM _SCHEMA ORDER BY className').all() as Array<{ className: string; schema: string }>;
    return rows.map((r) => ({ className: r.className, ...(JSON.parse(r.schema) as Omit<StoredClass, 'className'>) }));
  }

  close(): void {
    this.wal.close();
    if (this.db.open) this.db.close();
  }
}
