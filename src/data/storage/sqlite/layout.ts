import { COLUMN_FIELDS } from '../../query/dialect.js';
import { pathParts, type FieldPath } from '../../fieldPath.js';
import type { Db } from '../../../shared/sqlite.js';

/**
 * How the SQLite storage adapter lays out one Backend App's `data.db`. Every name that goes into SQL
 * text comes from a class or field name that passed `CLASS_NAME`/`FIELD_NAME` (or is a known system
 * class) and is then double-quoted; every value is a bound parameter (style.md, example 6).
 *
 * - one rowid table per class, `"cls_<ClassName>"`, with the columns
 *     `objectId TEXT PRIMARY KEY, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL,
 *      data TEXT NOT NULL (JSON object of every other field, in Parse's JSON form: a Date is
 *      {"__type":"Date","iso":…}, a Pointer {"__type":"Pointer","className":…,"objectId":…}, a File
 *      {"__type":"File","name":…,"url":…}, a GeoPoint {"__type":"GeoPoint","latitude":…,"longitude":…}),
 *      acl TEXT (JSON ACL as Parse writes it, e.g. {"*":{"read":true},"<userId>":{"write":true},
 *      "role:admins":{"read":true}}; NULL means public read and write),
 *      publicRead INTEGER NOT NULL (1 when anyone may read the object; last in every index: classTables.ts)`
 *   `createdAt`/`updatedAt` are ISO 8601 strings with milliseconds, so text order is time order.
 * - one table per relation field, `"_Join:<field>:<OwnerClass>"`, with
 *     `owningId TEXT NOT NULL, relatedId TEXT NOT NULL, PRIMARY KEY (owningId, relatedId)`
 * - `_SCHEMA` holds each class's fields, class-level permissions and indexes.
 */

/**
 * Double-quotes an SQL identifier (doubling any `"` inside). Callers pass only names that passed the
 * naming rules; a name SQLite could cut short (an empty one, or one holding U+0000) is refused anyway.
 * @throws Error for such a name (a programming mistake, never a client's: names are checked first).
 */
export const quoteIdent = (name: string): string => {
  if (name.length === 0 || name.includes('\0')) throw new Error(`Not an SQL identifier: ${JSON.stringify(name)}`);
  return `"${name.replace(/"/g, '""')}"`;
};

export const classTable = (className: string): string => quoteIdent(`cls_${className}`);

export const relationTable = (ownerClass: string, field: string): string => quoteIdent(`_Join:${field}:${ownerClass}`);

export { COLUMN_FIELDS } from '../../query/dialect.js';

/**
 * The JSON path literal of a field path inside `data`, e.g. `$."address"."city"`; an all-digit part
 * is an array index (`items.1.value` → `$."items"[1]."value"`, as Parse reads dotted query keys). It
 * is written into the SQL text (not bound) so that SQLite can match it against expression indexes,
 * which it does only for identical text (style.md, example 8).
 */
export const jsonPath = (path: FieldPath): string => {
  const body = pathParts(path).map((p, i) => (i > 0 && /^\d+$/.test(p) ? `[${Number(p)}]` : `."${p}"`)).join('');
  // pathParts allows no quote of either kind; doubling `'` keeps the literal closed regardless.
  return `'$${body.replace(/'/g, "''")}'`;
};

/**
 * The SQL expression of a field path on a row of alias `alias`: a column for objectId, createdAt and
 * updatedAt, else `json_extract(<alias>.data, '$."a"."b"')`. Indexes on a field use this same text.
 */
export const fieldExpr = (alias: string, path: FieldPath): string =>
  path.length === 1 && COLUMN_FIELDS.has(path[0]!) ? `${alias}.${quoteIdent(path[0]!)}` : `json_extract(${alias}.data, ${jsonPath(path)})`;

/** `json_type(...)` of the same path, to guard comparisons by JSON type (style.md, example 7). */
export const fieldTypeExpr = (alias: string, path: FieldPath): string => `json_type(${alias}.data, ${jsonPath(path)})`;

/** The expression an index on a field path is built over: `fieldExpr` without a table alias. */
export const indexExpr = (path: FieldPath): string =>
  path.length === 1 && COLUMN_FIELDS.has(path[0]!) ? quoteIdent(path[0]!) : `json_extract(data, ${jsonPath(path)})`;

/**
 * Runs one statement whose text holds names (DDL: tables, indexes). better-sqlite3's `prepare` refuses
 * text that holds more than one statement, where `exec` would run them all: so a name that slipped
 * past the checks could never stack a statement of its own (docs/design.md, "Security stance").
 * @throws SqliteError as SQLite answers, or RangeError for text holding several statements.
 */
export function runStatement(db: Db, sql: string): void {
  db.prepare(sql).run();
}
