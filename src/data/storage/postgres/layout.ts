/**
 * How the PostgreSQL storage adapter lays out Backend Apps: one schema per app,
 * `"app_<applicationId>"`, in the database of `BACKYARD_DATABASE_URL`. A schema rather than a
 * database per app: one connection pool serves every app (a database per app needs a pool per app
 * in every process), apps are created and dropped inside transactions (`CREATE SCHEMA`, `DROP
 * SCHEMA ... CASCADE`), and a Citus or YugabyteDB cluster takes schemas as they are.
 *
 * - `"cls_<ClassName>"`: `"objectId" text COLLATE "C" PRIMARY KEY, "createdAt" text COLLATE "C",
 *   "updatedAt" text COLLATE "C"` (ISO 8601 with milliseconds: text order is time order),
 *   `data jsonb` (every other field in Parse's JSON form, as in SQLite's layout.ts) and `acl jsonb`
 *   (NULL: public read and write);
 * - `"_Join:<field>:<OwnerClass>"`: `"owningId", "relatedId"`, primary key over both;
 * - `"_SCHEMA"` (className, schema jsonb) and `"_CONFIG"` (key, value jsonb, "masterKeyOnly").
 *
 * Names come from class and field names that passed `CLASS_NAME`/`FIELD_NAME` (letters, digits,
 * `_`), then are double-quoted; every value is bound.
 */
import { createHash } from 'node:crypto';
import { COLUMN_FIELDS } from '../../query/dialect.js';
import { pathParts, type FieldPath } from '../../fieldPath.js';

/** PostgreSQL keeps the first 63 bytes of an identifier and drops the rest (NAMEDATALEN). */
const MAX_IDENT_BYTES = 63;

/**
 * Double-quotes an SQL identifier. One longer than PostgreSQL keeps (a long class or field name in
 * `_Join:<field>:<Class>` or an index name) becomes its first 40 characters and a hash of the whole,
 * the same in every process, so that two long names never end up as one table or index.
 */
export const quoteIdent = (name: string): string => {
  if (name.length === 0 || name.includes('\0')) throw new Error(`Not an SQL identifier: ${JSON.stringify(name)}`);
  const fitted = Buffer.byteLength(name) <= MAX_IDENT_BYTES ? name : `${name.slice(0, 40)}_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
  return `"${fitted.replace(/"/g, '""')}"`;
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
