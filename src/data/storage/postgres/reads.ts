import type { GroupPlan } from '../../aggregate/groupPlan.js';
import { ParseCode, ParseError } from '../../errors.js';
import type { Dialect, SqlFragment } from '../../query/dialect.js';
import { compileGet, compileGroup, filterTree, ROW, type StatementTarget } from '../../query/statement.js';
import type { StatementCache } from '../../query/statementCache.js';
import type { SchemaLookup } from '../../types.js';
import type { ConfigEntry, FindOptions, StorageReads, StoredClass, StoredRow } from '../adapter.js';
import type { Run } from './database.js';
import { uniqueFault } from './uniqueUsers.js';

/** What the reads of one app need of its adapter (adapter.ts): its tables, dialect and schema cache. */
export interface AppSchema extends SchemaLookup {
  readonly dialect: Dialect;
  /** The app's PostgreSQL schema name. */
  readonly schema: string;
  /** A table of the app's schema, quoted and qualified. */
  qualified(table: string): string;
  getClass(className: string): Readonly<StoredClass> | undefined;
  /** The SQL of finds and counts by query shape (query/statementCache.ts). */
  readonly shapes: StatementCache;
  /**
   * Reloads the schema cache when another process changed it since (one small query).
   * @param underLock whether `run` is a transaction's that holds the app's lock (adapter.ts reloadSchema).
   */
  catchUp(run: Run, underLock: boolean): Promise<void>;
}

/** SQLite's own limit guides ours: keep IN lists bounded. */
const MAX_IN = 10_000;

interface RowRecord {
  objectId: string;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
  acl: StoredRow['acl'];
}

const toRow = (r: RowRecord): StoredRow => ({ objectId: r.objectId, createdAt: r.createdAt, updatedAt: r.updatedAt, data: r.data, acl: r.acl });
/** PostgreSQL's undefined_column. */
const UNDEFINED_COLUMN = '42703';
/** PostgreSQL's invalid_regular_expression: a `$regex` of the dialect (query/regexSyntax.ts) that PostgreSQL's compiler finds too complex. */
const INVALID_REGEX = '2201B';
/**
 * PostgreSQL's refusals of U+0000 in a bound value: untranslatable_character (jsonb cannot hold
 * `\u0000` in a string) and character_not_in_repertoire (a text parameter with a 0x00 byte). Every
 * SQL text is ours, so either comes from a client's string.
 */
const NUL_REFUSED = new Set(['22P05', '22021']);

/**
 * A Parse error for what PostgreSQL refused in a client's input, or the error itself: a pattern its
 * engine does not take is Parse's 102, a string holding U+0000 in a value or a query (valid JSON
 * that PostgreSQL cannot take; SQLite does, docs/parse-differences.md) is 142 rather than a 500; a
 * write refused by a unique index of `_User` is 202, 203 or 208 (uniqueUsers.ts).
 */
export function clientFault(error: unknown): unknown {
  const code = (error as { code?: string } | null)?.code;
  const taken = uniqueFault(error);
  if (taken) return taken;
  if (code === INVALID_REGEX) return new ParseError(ParseCode.INVALID_QUERY, `Invalid $regex for this database: ${(error as Error).message}`);
  if (code !== undefined && NUL_REFUSED.has(code)) {
    return new ParseError(ParseCode.VALIDATION_ERROR, 'A string holds the character U+0000 (NUL), which this database (PostgreSQL) cannot store or compare: remove it from the value.');
  }
  return error;
}

/** Runs SQL, answering what PostgreSQL refuses in a client's input as a Parse error (clientFault) rather than a 500. */
export const guarded =
  (run: Run): Run =>
  async (sql, params) => {
    try {
      return await run(sql, params);
    } catch (error) {
      throw clientFault(error);
    }
  };

/**
 * The JSON text objects/output.ts `objectJson` answers for the row `t`, written by PostgreSQL, for
 * the finds and gets whose rows the engine answers as stored (engine.ts `asTextApplies`): `objectId`,
 * `createdAt` and `updatedAt`, the members of `data` as jsonb prints them, then `ACL` unless none is
 * stored (SQL NULL, or a JSON `null`, which objectJson reads as none too). The dates are quoted
 * without escaping: only the engine writes them, as `Date#toISOString` gives them (engine.ts);
 * objectId goes through `to_json`.
 * Every column it reads is NOT NULL but `acl` (transaction.ts), so the text is never NULL.
 */
const OBJECT_JSON = [
  `'{"objectId":' || to_json(${ROW}."objectId")::text || ',"createdAt":"' || ${ROW}."createdAt" || '","updatedAt":"' || ${ROW}."updatedAt" || '"'`,
  `CASE WHEN ${ROW}.data = '{}' THEN '' ELSE ',' || substr(left(${ROW}.data::text, -1), 2) END`,
  `CASE WHEN ${ROW}.acl IS NULL OR ${ROW}.acl = 'null' THEN '' ELSE ',"ACL":' || ${ROW}.acl::text END`,
  `'}'`,
].join(' || ');

/**
 * A SELECT of one text column as one row and one column `j`: its texts joined by commas, in the
 * select's order ('' for no rows). PostgreSQL builds the array from the subquery's rows as they come,
 * so its ORDER BY holds. One row of one column, rather than a row per object, spares node-postgres
 * parsing a message per row: measured at 100 objects of 3 fields, the Node process spent 190 to 230
 * µs per find against 430 to 610 for rows of five columns, PostgreSQL 360 to 460 against 320 to 440.
 */
const joinedText = (select: SqlFragment): SqlFragment => ({ sql: `SELECT array_to_string(ARRAY(${select.sql}), ',') AS j`, params: select.params });

export class PostgresReads implements StorageReads {
  /** Whether `run` holds the app's lock before its statements (a transaction's: transaction.ts). */
  protected readonly underLock: boolean = false;
  /** @param run runs the statements (the pool, or a transaction's connection). */
  constructor(
    protected readonly owner: AppSchema,
    protected readonly run: Run,
  ) {}

  /**
   * Whether the class is unknown, after making sure the cache is not merely behind another
   * process's change (one small query, only when the cache does not know the class).
   */
  protected async missing(className: string): Promise<boolean> {
    if (this.owner.getClass(className)) return false;
    await this.owner.catchUp(this.run, this.underLock);
    return !this.owner.getClass(className);
  }

  protected get dialect(): Dialect {
    return this.owner.dialect;
  }

  protected table(className: string): string {
    return this.dialect.classTable(className);
  }

  /** What queries of this app compile against: its dialect and schema cache. */
  private get target(): StatementTarget {
    return { dialect: this.dialect, schema: this.owner };
  }

  async get(className: string, objectId: string): Promise<StoredRow | undefined> {
    if (await this.missing(className)) return undefined;
    const result = await this.run(compileGet(className, this.dialect), [objectId]);
    const row = result.rows[0] as RowRecord | undefined;
    return row && toRow(row);
  }

  /** `get`'s object as the JSON text PostgreSQL writes for it (OBJECT_JSON), with its ACL (StorageReads.getText). */
  async getText(className: string, objectId: string): Promise<{ acl: StoredRow['acl']; json: string } | undefined> {
    if (await this.missing(className)) return undefined;
    const result = await this.run(compileGet(className, this.dialect, `${ROW}.acl, ${OBJECT_JSON} AS j`), [objectId]);
    const row = result.rows[0] as { acl: StoredRow['acl']; j: string } | undefined;
    return row && { acl: row.acl, json: row.j };
  }

  /** The query is checked (and refused with Parse's codes) before a missing class answers no rows. */
  async find(className: string, options: FindOptions): Promise<StoredRow[]> {
    const compile = () => this.owner.shapes.select(className, options);
    const first = compile();
    if (await this.missing(className)) return [];
    const result = await this.compiled(first, compile);
    return (result.rows as RowRecord[]).map(toRow);
  }

  /** `find`'s objects as JSON text, joined by commas, written by PostgreSQL (OBJECT_JSON, joinedText; StorageReads.findText). */
  async findText(className: string, options: FindOptions): Promise<string> {
    const compile = () => joinedText(this.owner.shapes.selectColumns('selectJson', OBJECT_JSON, className, options));
    const first = compile();
    if (await this.missing(className)) return '';
    return ((await this.compiled(first, compile)).rows[0] as { j: string }).j;
  }

  async count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): Promise<number> {
    const compile = () => this.owner.shapes.count(className, options);
    const first = compile();
    if (await this.missing(className)) return 0;
    const result = await this.compiled(first, compile);
    return (result.rows[0] as { n: number }).n;
  }

  /**
   * Runs a compiled statement; when it names a typed column (layout.ts) that another process dropped
   * (a removed field) before its announcement reached this one, catches up and compiles it again.
   */
  private async compiled(first: SqlFragment, compile: () => SqlFragment) {
    try {
      return await this.run(first.sql, first.params);
    } catch (error) {
      if ((error as { code?: string } | null)?.code !== UNDEFINED_COLUMN) throw error;
      await this.owner.catchUp(this.run, this.underLock);
      const again = compile();
      return this.run(again.sql, again.params);
    }
  }

  async relatedIds(ownerClass: string, field: string, owningId: string): Promise<string[]> {
    if (this.owner.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const result = await this.run(`SELECT "relatedId" FROM ${this.dialect.relationTable(ownerClass, field)} WHERE "owningId" = ?`, [owningId]);
    return (result.rows as Array<{ relatedId: string }>).map((r) => r.relatedId);
  }

  async owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): Promise<string[]> {
    if (relatedIds.length === 0 || this.owner.getClass(ownerClass)?.fields[field]?.type !== 'Relation') return [];
    const result = await this.run(`SELECT DISTINCT "owningId" FROM ${this.dialect.relationTable(ownerClass, field)} WHERE "relatedId" = ANY(?::text[])`, [
      relatedIds.slice(0, MAX_IN),
    ]);
    return (result.rows as Array<{ owningId: string }>).map((r) => r.owningId);
  }

  async getConfig(): Promise<ConfigEntry[]> {
    const result = await this.run(`SELECT key, value, "masterKeyOnly" FROM ${this.owner.qualified('_CONFIG')} ORDER BY key COLLATE "C"`);
    return (result.rows as Array<{ key: string; value: unknown; masterKeyOnly: boolean }>).map((r) => ({ key: r.key, value: r.value, masterKeyOnly: r.masterKeyOnly }));
  }

  /** StorageReads.group in SQL (query/statement.ts, compileGroup): keys as text, exact sums. */
  async group(className: string, where: unknown, plan: GroupPlan): Promise<Array<Record<string, unknown>>> {
    const tree = filterTree(className, { where }, this.target);
    if (await this.missing(className)) return [];
    const { sql, params } = compileGroup(tree, plan, this.dialect);
    const result = await this.run(sql, params);
    return (result.rows as Array<Record<string, unknown>>).map((row) => {
      const doc: Record<string, unknown> = { objectId: row.c0 === '' ? null : (row.c0 ?? null) };
      plan.outputs.forEach((o, i) => (doc[o.name] = row[`c${i + 1}`] ?? null));
      return doc;
    });
  }
}
