import type { GroupPlan } from '../../aggregate/groupPlan.js';
import { compileGroup, filterTree, ROW, type StatementTarget } from '../../query/statement.js';
import type { ConfigEntry, FindOptions, StorageReads, StoredRow } from '../adapter.js';
import { readConfig } from './config.js';
import type { SqliteDatabase } from './database.js';
import { sqliteDialect } from './dialect.js';
import { relationTable } from './layout.js';

/** A class row as SQLite gives it in raw mode: objectId, createdAt, updatedAt, data (JSON), acl (JSON or null). */
type RowRecord = [string, string, string, string, string | null];

const toRow = (r: RowRecord): StoredRow => ({
  objectId: r[0],
  createdAt: r[1],
  updatedAt: r[2],
  data: JSON.parse(r[3]) as Record<string, unknown>,
  acl: r[4] === null ? null : (JSON.parse(r[4]) as StoredRow['acl']),
});

/**
 * A row's object as JSON text, the object objects/output.ts `objectJson` answers for the row of a
 * class engine.ts `findText` and `getText` apply to (the columns' JSON strings, the members of `data` as stored,
 * `ACL` when there is one: a JSON `null` is none, as objectJson reads it), concatenated by
 * SQLite: one string per object reaches JavaScript instead of four, and nothing is spliced there
 * (an equality of 100 rows allocated about 150 KB per request with the splicing in JavaScript).
 * `data` is always an object's JSON.stringify text here (transaction.ts writes it), so its members
 * are what lies between its braces, none when it is `{}`.
 */
const OBJECT_JSON = [
  `'{"objectId":' || json_quote(${ROW}."objectId")`,
  `',"createdAt":' || json_quote(${ROW}."createdAt")`,
  `',"updatedAt":' || json_quote(${ROW}."updatedAt")`,
  `CASE WHEN ${ROW}.data = '{}' THEN '' ELSE ',' || substr(${ROW}.data, 2, length(${ROW}.data) - 2) END`,
  `CASE WHEN ${ROW}.acl IS NULL OR ${ROW}.acl = 'null' THEN '' ELSE ',"ACL":' || ${ROW}.acl END`,
  `'}'`,
].join(' || ');

/** SQLite's own limit on bound parameters is far above this; keep IN lists bounded anyway. */
const MAX_IN = 10_000;

/**
 * The reads of one app's `data.db` (StorageReads), with statements built by query/statement.ts so
 * that SQLite filters, sorts, counts and pages. Answered synchronously on this thread behind the
 * asynchronous interface; the transaction (transaction.ts) adds the writes.
 */
export class SqliteReads implements StorageReads {
  /** What its queries compile against: SQLite's dialect and the database's schema cache. */
  private readonly target: StatementTarget;

  constructor(protected readonly database: SqliteDatabase) {
    this.target = { dialect: sqliteDialect, schema: database };
  }

  /** The database, for a statement: a transaction refuses once it has ended (transaction.ts). */
  protected open(): SqliteDatabase {
    return this.database;
  }

  async get(className: string, objectId: string): Promise<StoredRow | undefined> {
    const database = this.open();
    if (!database.classes.has(className)) return undefined;
    const r = database.getStmt(className).get(objectId) as RowRecord | undefined;
    return r && toRow(r);
  }

  /** `get`'s object as the JSON text SQLite writes for it (OBJECT_JSON), with its ACL (StorageReads.getText). */
  async getText(className: string, objectId: string): Promise<{ acl: StoredRow['acl']; json: string } | undefined> {
    const database = this.open();
    if (!database.classes.has(className)) return undefined;
    const r = database.getStmt(className, 'json', `${ROW}.acl, ${OBJECT_JSON}`).get(objectId) as [string | null, string] | undefined;
    return r && { acl: r[0] === null ? null : (JSON.parse(r[0]) as StoredRow['acl']), json: r[1] };
  }

  async find(className: string, options: FindOptions): Promise<StoredRow[]> {
    const database = this.open();
    if (!database.classes.has(className)) return [];
    const { sql, params } = database.shapes.select(className, options);
    return (database.rowStmt(sql).all(...params) as RowRecord[]).map(toRow);
  }

  /** `find`'s objects as JSON text, each written by SQLite itself (OBJECT_JSON), joined by commas (StorageReads.findText). */
  async findText(className: string, options: FindOptions): Promise<string> {
    const database = this.open();
    if (!database.classes.has(className)) return '';
    const { sql, params } = database.shapes.selectColumns('selectJson', OBJECT_JSON, className, options);
    return (database.valueStmt(sql).all(...params) as string[]).join(',');
  }

  async count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): Promise<number> {
    const database = this.open();
    if (!database.classes.has(className)) return 0;
    const { sql, params } = database.shapes.count(className, options);
    return (database.stmt(sql).get(...params) as { n: number }).n;
  }

  async relatedIds(ownerClass: string, field: string, owningId: string): Promise<string[]> {
    const database = this.open();
    if (database.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    return (database.stmt(`SELECT relatedId FROM ${relationTable(ownerClass, field)} WHERE owningId = ?`).all(owningId) as Array<{ relatedId: string }>).map(
      (r) => r.relatedId,
    );
  }

  async owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): Promise<string[]> {
    const database = this.open();
    if (relatedIds.length === 0 || database.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const ids = relatedIds.slice(0, MAX_IN);
    return (
      database.db
        .prepare(`SELECT DISTINCT owningId FROM ${relationTable(ownerClass, field)} WHERE relatedId IN (${ids.map(() => '?').join(', ')})`)
        .all(...ids) as Array<{ owningId: string }>
    ).map((r) => r.owningId);
  }

  async getConfig(): Promise<ConfigEntry[]> {
    return readConfig(this.open().db);
  }

  /** StorageReads.group in SQL (query/statement.ts, compileGroup): keys as stored, aggregates over numeric values only. */
  async group(className: string, where: unknown, plan: GroupPlan): Promise<Array<Record<string, unknown>>> {
    const database = this.open();
    if (!database.classes.has(className)) return [];
    const { sql, params } = compileGroup(filterTree(className, { where }, this.target), plan, sqliteDialect);
    return (database.rowStmt(sql).all(...params) as unknown[][]).map((row) => {
      const doc: Record<string, unknown> = { objectId: row[0] === '' ? null : (row[0] ?? null) };
      plan.outputs.forEach((o, i) => (doc[o.name] = row[i + 1] ?? null));
      return doc;
    });
  }
}
