/**
 * How the PostgreSQL storage adapter lays out Backend Apps: one schema per app,
 * `"app_<applicationId>"`, in the database of `BACKYARD_DATABASE_URL`. A schema rather than a
 * database per app: one connection pool serves every app (a database per app needs a pool per app
 * in every process), apps are created and dropped inside transactions (`CREATE SCHEMA`, `DROP
 * SCHEMA ... CASCADE`), and a Citus or YugabyteDB cluster takes schemas as they are.
 *
 * - `"cls_<ClassName>"`: `"objectId" text COLLATE "C" PRIMARY KEY, "createdAt" text COLLATE "C",
 *   "updatedAt" text COLLATE "C"` (ISO 8601 with milliseconds: text order is time order),
 *   `data jsonb` (every other field in Parse's JSON form, as in SQLite's layout.ts), `acl jsonb`
 *   (NULL: public read and write) and `"_publicRead" boolean`, generated from `acl` (no ACL, or one
 *   granting `*` read); and for each top-level String or Number field that an index names, a column
 *   generated from `data`: `"_s:<field>" text COLLATE "C"` (the string, NULL for anything else) or
 *   `"_n:<field>" float8` (the number, NULL for anything else), as Parse Server's own PostgreSQL
 *   adapter keeps typed columns. Indexes on fields are built over those columns and INCLUDE
 *   `"_publicRead"`, so that a count of public objects is an index-only scan (PostgreSQL never
 *   answers from an index over a jsonb expression alone: it wants the columns the query names);
 * - `"_Join:<field>:<OwnerClass>"`: `"owningId", "relatedId"`, primary key over both;
 * - `"_SCHEMA"` (className, schema jsonb) and `"_CONFIG"` (key, value jsonb, "masterKeyOnly").
 *
 * Names come from class and field names that passed `CLASS_NAME`/`FIELD_NAME` (letters, digits,
 * `_`), then are double-quoted; every value is bound.
 */
import { createHash } from 'node:crypto';
import { COLUMN_FIELDS } from '../../query/dialect.js';
import { fieldPath, pathParts, type FieldPath } from '../../fieldPath.js';

/** PostgreSQL keeps the first 63 bytes of an identifier and drops the rest (NAMEDATALEN). */
const MAX_IDENT_BYTES = 63;

/**
 * An identifier as PostgreSQL keeps it (unquoted): one longer than 63 bytes becomes its first 40
 * characters and a hash of the whole, the same in every process, so that two long names never end up
 * as one table, column or index.
 */
export const fitIdent = (name: string): string =>
  Buffer.byteLength(name) <= MAX_IDENT_BYTES ? name : `${name.slice(0, 40)}_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;

/** Double-quotes an SQL identifier, fitted as `fitIdent` fits it (a long `_Join:<field>:<Class>` or index name). */
export const quoteIdent = (name: string): string => {
  if (name.length === 0 || name.includes('\0')) throw new Error(`Not an SQL identifier: ${JSON.stringify(name)}`);
  return `"${fitIdent(name).replace(/"/g, '""')}"`;
};

/** The schema of an app (application ids are letters and digits). */
export const appSchema = (applicationId: string): string => `app_${applicationId}`;

/**
 * A `text[]` literal of a field path for `#>`/`#>>` (`'{"address","city"}'`): each element
 * double-quoted with `"` and `\\` escaped (PostgreSQL's array input syntax), then `'` doubled for the
 * SQL literal. pathParts allows none of those characters; the escapes keep the literal closed
 * regardless. Written into the text (not bound) so that it matches expression indexes.
 */
export const pathLiteral = (path: FieldPath): string => {
  const elements = pathParts(path).map((p) => `"${p.replace(/["\\]/g, (c) => `\\${c}`)}"`);
  return `'{${elements.join(',').replace(/'/g, "''")}}'`;
};

/** The jsonb at a path of `data` of the row `alias` (`alias` '' for an index expression). */
export const jsonAt = (alias: string, path: FieldPath): string => `(${alias ? `${alias}.` : ''}data #> ${pathLiteral(path)})`;

/** The text at a path of `data` (a JSON string's contents, a number's digits...). */
export const textAt = (alias: string, path: FieldPath): string => `(${alias ? `${alias}.` : ''}data #>> ${pathLiteral(path)})`;

/** A string sorted and compared byte by byte, as Mongo and SQLite do, whatever the database's collation. */
export const bytewise = (text: string): string => `(${text} COLLATE "C")`;

export const isColumnPath = (path: readonly string[]): boolean => path.length === 1 && COLUMN_FIELDS.has(path[0]!);

/** The column of a class table true for a row everyone may read (no ACL, or `*` granted read). */
export const PUBLIC_READ = '"_publicRead"';

/** `PUBLIC_READ`'s definition: the same test as the dialect's `readableBy` of `*` (dialect.ts). */
export const PUBLIC_READ_DDL = `${PUBLIC_READ} boolean GENERATED ALWAYS AS (acl IS NULL OR (acl #>> '{*,read}') = 'true') STORED`;

/** What a field column holds: a String field's strings (`text COLLATE "C"`) or a Number field's numbers (`float8`). */
export type FieldColumnKind = 'string' | 'number';

/** The kind of column a top-level field of a Parse type gets when an index names it; undefined for other types. */
export const fieldColumnKind = (type: string | undefined): FieldColumnKind | undefined => (type === 'String' ? 'string' : type === 'Number' ? 'number' : undefined);

/** A field column's name, unquoted as the catalog keeps it (`_s:<field>`, `_n:<field>`, fitted). */
export const fieldColumnName = (field: string, kind: FieldColumnKind): string => fitIdent(`_${kind === 'string' ? 's' : 'n'}:${field}`);

/**
 * A field column's definition: the value at `field` of `data` when it is a JSON string (as text,
 * compared byte by byte) or a JSON number (as float8: every number came from JavaScript, a double),
 * NULL for anything else, so that a comparison with it needs no type guard.
 */
export function fieldColumnDdl(field: string, kind: FieldColumnKind): string {
  const path = pathLiteral(fieldPath([field]));
  const value = kind === 'string' ? `data #>> ${path}` : `(data #> ${path})::float8`;
  const type = kind === 'string' ? 'text COLLATE "C"' : 'float8';
  return `${quoteIdent(fieldColumnName(field, kind))} ${type} GENERATED ALWAYS AS (CASE WHEN jsonb_typeof(data #> ${path}) = '${kind}' THEN ${value} END) STORED`;
}
