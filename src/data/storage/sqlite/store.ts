import Database from 'better-sqlite3';
import { compileOrder, compileWhere, nearSphereOrder, type CompileOptions, type SqlFragment } from '../../query/compile.js';
import { registerQueryFunctions } from './functions.js';
import { sqliteDialect } from './dialect.js';
import type { FieldType, SchemaLookup } from '../../types.js';
import { openDatabase } from '../../../shared/sqlite.js';
import type { GroupPlan } from '../../aggregate/groupPlan.js';
import type { ConfigEntry, FindOptions, StoredClass, StoredRow } from '../adapter.js';
import { classTableDdl, publicReadOf, upgradeClassTables, withPublicRead } from './classTables.js';
import { fieldPath, type FieldPath } from '../../fieldPath.js';
import { classTable, indexExpr, jsonPath, quoteIdent, relationTable, runStatement } from './layout.js';
import { dataMigrations } from './migrations.js';
import { SchemaCache } from '../schemaCache.js';
import { readConfig, writeConfig } from './config.js';
import { WalSync } from './durability.js';
import { SqliteUniqueUsers } from './uniqueUsers.js';

/** A class row as SQLite gives it in raw mode: objectId, createdAt, updatedAt, data (JSON), acl (JSON or null). */
type RowRecord = [string, string, string, string, string | null];

/** The columns of RowRecord, in order, for a class table aliased `t`. */
const ROW_COLUMNS = 't.objectId, t.createdAt, t.updatedAt, t.data, t.acl';

const toRow = (r: RowRecord): StoredRow => ({
  objectId: r[0],
  createdAt: r[1],
  updatedAt: r[2],
  data: JSON.parse(r[3]) as Record<string, unknown>,
  acl: r[4] === null ? null : (JSON.parse(r[4]) as StoredRow['acl']),
});

/** SQLite's own limit on bound parameters is far above this; keep IN lists bounded anyway. */
const MAX_IN = 10_000;

/**
 * One `data.db` of a Backend App, synchronously (better-sqlite3): WAL, `synchronous=NORMAL` plus a
 * group commit that syncs the WAL before a write is answered (durability.ts), laid out as
 * `layout.ts` describes, with queries compiled by `src/data/query` so that SQLite filters, sorts,
 * counts and pages. Also the schema lookup its compiler uses. `SqliteAdapter` (adapter.ts) is the
 * asynchronous StorageAdapter over it, which owns the transactions.
 */
export class SqliteStore implements SchemaLookup {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Statements that read class rows, in raw mode: arrays, so no column name is looked up per row. */
  private readonly rowStatements = new Map<string, Database.Statement>();
  /** The get-by-objectId statement of each class, so that a get builds no SQL text. */
  private readonly getStatements = new Map<string, Database.Statement>();
  private readonly classes: SchemaCache;
  /** `_User`'s unique username, email and provider ids (uniqueUsers.ts); SqliteTransaction calls it before each user write. */
  readonly uniqueUsers: SqliteUniqueUsers;

  private readonly wal: WalSync;
  private readonly txn: { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement };

  constructor(file: string) {
    // Only the server process that serves the app opens its data.db (design.md, "One process, one
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
    this.txn = { begin: this.db.prepare('BEGIN IMMEDIATE'), commit: this.db.prepare('COMMIT'), rollback: this.db.prepare('ROLLBACK') };
    registerQueryFunctions(this.db);
    upgradeClassTables(this.db);
    this.classes = new SchemaCache(this.readSchema());
    this.uniqueUsers = new SqliteUniqueUsers(this.db, file);
    if (this.classes.has('_User')) {
      this.userIndexes();
      this.uniqueUsers.userIndexes();
    }
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
  private rowStmt(sql: string): Database.Statement {
    let s = this.rowStatements.get(sql);
    if (!s) {
      s = this.db.prepare(sql).raw(true);
      this.rowStatements.set(sql, s);
    }
    return s;
  }


  /** Whether the open transaction changed the schema or a table (what `rollback` must reload). */
  private schemaChanged = false;

  /** Statements naming a table must be prepared again after the table changes. */
  private forgetStatements(): void {
    this.statements.clear();
    this.schemaChanged = true;
  }

  /**
   * Runs `fn` in one write transaction (BEGIN IMMEDIATE ... COMMIT), or inside the one already open
   * (the adapter's, or this store's own for a multi-statement write).
   * Prepared BEGIN/COMMIT rather than better-sqlite3's `db.transaction(fn)`, which builds a wrapper per
   * call (about 9 µs less per write, bench/data-api).
   * @throws what `fn` throws, after rolling back.
   */
  private transaction<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.begin();
    let result: T;
    try {
      result = fn();
      this.commit();
    } catch (error) {
      this.rollback();
      throw error;
    }
    return result;
  }

  begin(): void {
    this.txn.begin.run();
    this.schemaChanged = false;
  }

  commit(): void {
    this.txn.commit.run();
    this.wal.wrote();
  }

  /**
   * Rolls back (when SQLite has not already, as after a full disk) and, when the transaction changed
   * the schema, reloads the schema cache and forgets the statements prepared since.
   */
  rollback(): void {
    if (this.db.inTransaction) this.txn.rollback.run();
    if (!this.schemaChanged) return;
    this.classes.replace(this.readSchema());
    this.forgetStatements();
    this.getStatements.clear();
    this.schemaChanged = false;
  }

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
  private userIndexes(): void {
    for (const field of ['username', 'email']) {
      runStatement(this.db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls__User_${field}_lower`)} ON ${classTable('_User')} (lower(${indexExpr(fieldPath([field]))}))`);
    }
  }

  private readSchema(): StoredClass[] {
    const rows = this.db.prepare('SELECT className, schema FROM _SCHEMA ORDER BY className').all() as Array<{ className: string; schema: string }>;
    return rows.map((r) => ({ className: r.className, ...(JSON.parse(r.schema) as Omit<StoredClass, 'className'>) }));
  }

  loadSchema(): StoredClass[] {
    return this.classes.load();
  }

  saveClass(cls: StoredClass): void {
    this.transaction(() => {
      const { className, ...rest } = cls;
      this.stmt('INSERT INTO _SCHEMA (className, schema) VALUES (?, ?) ON CONFLICT (className) DO UPDATE SET schema = excluded.schema').run(
        className,
        JSON.stringify(rest),
      );
      if (!this.classes.has(className)) {
        runStatement(this.db, classTableDdl(classTable(className)));
        runStatement(this.db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls_${className}_createdAt`)} ON ${classTable(className)} (createdAt)`);
        if (className === '_User') {
          this.userIndexes();
          this.uniqueUsers.userIndexes();
        }
        this.forgetStatements();
      }
      for (const [field, type] of Object.entries(cls.fields)) {
        if (type.type === 'Relation') {
          runStatement(this.db, 
            `CREATE TABLE IF NOT EXISTS ${relationTable(className, field)} (
               owningId TEXT NOT NULL, relatedId TEXT NOT NULL, PRIMARY KEY (owningId, relatedId)) WITHOUT ROWID`,
          );
          runStatement(this.db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`_Join:${field}:${className}_related`)} ON ${relationTable(className, field)} (relatedId)`);
        }
      }
      this.classes.set(cls);
      this.schemaChanged = true;
    });
  }

  dropClass(className: string): void {
    this.transaction(() => {
      const cls = this.classes.get(className);
      if (!cls) return;
      for (const [field, type] of Object.entries(cls.fields)) {
        if (type.type === 'Relation') runStatement(this.db, `DROP TABLE IF EXISTS ${relationTable(className, field)}`);
      }
      runStatement(this.db, `DROP TABLE IF EXISTS ${classTable(className)}`);
      this.stmt('DELETE FROM _SCHEMA WHERE className = ?').run(className);
      this.classes.delete(className);
      this.forgetStatements();
    });
  }

  private indexName = (className: string, name: string) => quoteIdent(`idx_${className}_${name}`);

  createIndex(className: string, name: string, keys: Record<string, 1 | -1>): void {
    const columns = Object.entries(keys).map(([field, dir]) => `${indexExpr(fieldPath(field.split('.')))}${dir === -1 ? ' DESC' : ''}`);
    runStatement(this.db, `CREATE INDEX IF NOT EXISTS ${this.indexName(className, name)} ON ${classTable(className)} ${withPublicRead(columns)}`);
    this.forgetStatements();
  }

  dropIndex(className: string, name: string): void {
    runStatement(this.db, `DROP INDEX IF EXISTS ${this.indexName(className, name)}`);
    this.forgetStatements();
  }

  removeField(className: string, field: string, type: FieldType): void {
    if (type.type === 'Relation') runStatement(this.db, `DROP TABLE IF EXISTS ${relationTable(className, field)}`);
    else {
      const path = jsonPath(fieldPath([field]));
      this.stmt(`UPDATE ${classTable(className)} SET data = json_remove(data, ${path}) WHERE json_type(data, ${path}) IS NOT NULL`).run();
    }
    this.forgetStatements();
  }

  insert(className: string, row: StoredRow): void {
    this.stmt(`INSERT INTO ${classTable(className)} (objectId, createdAt, updatedAt, data, acl, publicRead) VALUES (?, ?, ?, ?, ?, ?)`).run(
      row.objectId,
      row.createdAt,
      row.updatedAt,
      JSON.stringify(row.data),
      row.acl === null ? null : JSON.stringify(row.acl),
      publicReadOf(row.acl),
    );
  }

  replace(className: string, row: StoredRow): boolean {
    const result = this.stmt(`UPDATE ${classTable(className)} SET updatedAt = ?, data = ?, acl = ?, publicRead = ? WHERE objectId = ?`).run(
      row.updatedAt,
      JSON.stringify(row.data),
      row.acl === null ? null : JSON.stringify(row.acl),
      publicReadOf(row.acl),
      row.objectId,
    );
    return result.changes > 0;
  }

  delete(className: string, objectId: string): boolean {
    return this.transaction(() => {
      const cls = this.classes.get(className);
      const deleted = this.stmt(`DELETE FROM ${classTable(className)} WHERE objectId = ?`).run(objectId).changes > 0;
      if (deleted && cls) {
        for (const [field, type] of Object.entries(cls.fields)) {
          if (type.type === 'Relation') this.stmt(`DELETE FROM ${relationTable(className, field)} WHERE owningId = ?`).run(objectId);
        }
      }
      return deleted;
    });
  }

  deleteAll(className: string): void {
    this.transaction(() => {
      const cls = this.classes.get(className);
      this.stmt(`DELETE FROM ${classTable(className)}`).run();
      for (const [field, type] of Object.entries(cls?.fields ?? {})) {
        if (type.type === 'Relation') this.stmt(`DELETE FROM ${relationTable(className, field)}`).run();
      }
    });
  }

  get(className: string, objectId: string): StoredRow | undefined {
    if (!this.classes.has(className)) return undefined;
    let statement = this.getStatements.get(className);
    if (!statement) {
      statement = this.rowStmt(`SELECT ${ROW_COLUMNS} FROM ${classTable(className)} AS t WHERE t.objectId = ?`);
      this.getStatements.set(className, statement);
    }
    const r = statement.get(objectId) as RowRecord | undefined;
    return r && toRow(r);
  }

  /** The rows of a class the principals may read: public rows and rows whose ACL grants one of them read. */
  private readable(alias: string, principals: readonly string[] | undefined): SqlFragment | undefined {
    if (principals === undefined) return undefined;
    // publicRead first: it is in every index on fields, so a public row found through one is never read for its ACL (classTables.ts).
    const others = principals.filter((p) => p !== '*');
    if (others.length === 0) return { sql: `${alias}.publicRead = 1`, params: [] };
    return {
      sql: `(${alias}.publicRead = 1 OR EXISTS (SELECT 1 FROM json_each(${alias}.acl) AS p WHERE p.key IN (${others.map(() => '?').join(', ')}) AND json_extract(p.value, '$.read') = 1))`,
      params: others,
    };
  }

  private compileOptions({ principals, access }: Pick<FindOptions, 'principals' | 'access'>): CompileOptions {
    return { dialect: sqliteDialect, schema: this, readable: (_cls, alias) => this.readable(alias, principals), access };
  }

  private whereClause(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): SqlFragment {
    const compiled = compileWhere(className, 't', options.where ?? {}, this.compileOptions(options));
    const acl = this.readable('t', options.principals);
    return acl ? { sql: `(${compiled.sql}) AND ${acl.sql}`, params: [...compiled.params, ...acl.params] } : compiled;
  }

  find(className: string, options: FindOptions): StoredRow[] {
    if (!this.classes.has(className)) return [];
    const where = this.whereClause(className, options);
    const compileOptions = this.compileOptions(options);
    let orderSql = options.order ? compileOrder(className, 't', options.order, compileOptions) : '';
    const params = [...where.params];
    if (!orderSql) {
      const near = nearSphereOrder(className, 't', options.where ?? {}, compileOptions);
      if (near) {
        orderSql = near.sql;
        params.push(...near.params);
      }
    }
    const limit = options.limit ?? 100;
    const sql = `SELECT ${ROW_COLUMNS} FROM ${classTable(className)} AS t WHERE ${where.sql}${
      orderSql ? ` ORDER BY ${orderSql}` : ''
    } LIMIT ? OFFSET ?`;
    return (this.rowStmt(sql).all(...params, limit, options.skip ?? 0) as RowRecord[]).map(toRow);
  }

  count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): number {
    if (!this.classes.has(className)) return 0;
    const where = this.whereClause(className, options);
    const row = this.stmt(`SELECT count(*) AS n FROM ${classTable(className)} AS t WHERE ${where.sql}`).get(...where.params) as { n: number };
    return row.n;
  }

  addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): void {
    const insert = this.stmt(`INSERT OR IGNORE INTO ${relationTable(ownerClass, field)} (owningId, relatedId) VALUES (?, ?)`);
    this.transaction(() => relatedIds.forEach((id) => insert.run(owningId, id)));
  }

  removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): void {
    const remove = this.stmt(`DELETE FROM ${relationTable(ownerClass, field)} WHERE owningId = ? AND relatedId = ?`);
    this.transaction(() => relatedIds.forEach((id) => remove.run(owningId, id)));
  }

  relatedIds(ownerClass: string, field: string, owningId: string): string[] {
    if (this.classes.get(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    return (this.stmt(`SELECT relatedId FROM ${relationTable(ownerClass, field)} WHERE owningId = ?`).all(owningId) as Array<{ relatedId: string }>).map(
      (r) => r.relatedId,
    );
  }

  owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): string[] {
    if (relatedIds.length === 0 || this.classes.get(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const ids = relatedIds.slice(0, MAX_IN);
    return (
      this.db
        .prepare(`SELECT DISTINCT owningId FROM ${relationTable(ownerClass, field)} WHERE relatedId IN (${ids.map(() => '?').join(', ')})`)
        .all(...ids) as Array<{ owningId: string }>
    ).map((r) => r.owningId);
  }

  /** StorageReads.group in SQL: GROUP BY the key's value, aggregates over numeric values only. */
  group(className: string, where: unknown, plan: GroupPlan): Array<Record<string, unknown>> {
    if (!this.classes.has(className)) return [];
    const compiled = this.whereClause(className, { where });
    const numeric = (field: FieldPath) => `CASE WHEN json_type(t.data, ${jsonPath(field)}) IN ('integer', 'real') THEN json_extract(t.data, ${jsonPath(field)}) END`;
    const columns = plan.outputs.map((o) => {
      switch (o.op) {
        case 'count':
          return `count(*) * ${o.times}`;
        case 'sum':
          return `coalesce(sum(${numeric(o.field)}), 0)`;
        default:
          return `${o.op}(${numeric(o.field)})`;
      }
    });
    const key = plan.key === undefined ? 'NULL' : `json_extract(t.data, ${jsonPath(plan.key)})`;
    const sql = `SELECT ${[key, ...columns].join(', ')} FROM ${classTable(className)} AS t WHERE ${compiled.sql} GROUP BY 1 ORDER BY min(t.createdAt || t.objectId)`;
    return (this.rowStmt(sql).all(...compiled.params) as unknown[][]).map((row) => {
      const doc: Record<string, unknown> = { objectId: row[0] === '' ? null : (row[0] ?? null) };
      plan.outputs.forEach((o, i) => (doc[o.name] = row[i + 1] ?? null));
      return doc;
    });
  }

  getConfig(): ConfigEntry[] {
    return readConfig(this.db);
  }

  putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): void {
    this.transaction(() => writeConfig(this.db, params, masterKeyOnly));
  }

  close(): void {
    this.wal.close();
    if (this.db.open) this.db.close();
  }
}
