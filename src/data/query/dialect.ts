/**
 * What the query compiler asks of a database's SQL.
 * The compiler (compile.ts and its operators) parses and validates a Parse `where`/`order` once, with
 * Parse's error codes, and decides the Mongo semantics (array quantifiers, missing fields, type-exact
 * comparisons); every piece of SQL text that depends on how a database stores JSON comes from here:
 * SQLite's JSON1 functions (storage/sqlite/dialect.ts) or PostgreSQL's JSONB operators
 * (storage/postgres/dialect.ts). Values are always bound: a dialect writes `?` where a value goes and
 * its adapter numbers them if its driver wants `$1`.
 */
import type { FieldPath } from '../fieldPath.js';
import type { GeoPoint, Literal } from './literals.js';

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/** A JSON value's kind, as both dialects can test it. */
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

/**
 * Where a predicate reads its value: a field inside an object's JSON `data`, a column (objectId,
 * createdAt, updatedAt: text), an element of a JSON array, or a row of a relation table.
 */
export interface Target {
  readonly kind: 'data' | 'column' | 'element' | 'relation';
  /**
   * The value at a sub-path (e.g. `['iso']` of a Date) in the dialect's native JSON form. Sub-paths
   * are checked as field paths are (fieldPath.ts `extendPath`) before they reach SQL.
   */
  at(sub?: readonly string[]): string;
  /** The value at a sub-path as SQL text when it is a JSON string (NULL or anything when it is not). */
  textAt(sub?: readonly string[]): string;
  /** The value at a sub-path as an SQL number when it is a JSON number, else NULL. */
  numberAt(sub?: readonly string[]): string;
  /** The JSON kind at a sub-path, as `Dialect.typeIs` tests it; NULL when nothing is there. */
  typeAt(sub?: readonly string[]): string;
  /** Column targets: the column name. */
  readonly column?: string;
  /** Relation targets: the class every related object belongs to. */
  readonly className?: string;
  /**
   * Data targets of a top-level field the database keeps a typed column of (PostgreSQL's
   * `"_s:<field>"`/`"_n:<field>"`, layout.ts): that column's SQL and what it holds.
   */
  readonly fieldColumn?: { readonly sql: string; readonly kind: 'string' | 'number' };
}

/** What a literal is compared with: the SQL expression, its type guard and the bound value. */
export interface Operand {
  expr: string;
  guard?: SqlFragment;
  param: unknown;
  /** The SQL standing for the bound value: `?`, or `?` with a conversion (`json(?)`, `?::jsonb`). */
  placeholder: string;
  /** Literals with the same group compare against the same expression and guard (for `IN`). */
  group: string;
  /**
   * Whether `expr = param` can only hold where the guard holds too, so that equality (and `IN`)
   * needs no guard: a guard reads the stored object, which an index on `expr` alone spares.
   */
  exact?: boolean;
}

/**
 * One database's SQL for the compiler. Implementations hold the names of the adapter's tables (a
 * PostgreSQL adapter qualifies them with the app's schema).
 */
export interface Dialect {
  /** The quoted table of a class's objects. */
  classTable(className: string): string;
  /** The quoted table of a Relation field's pairs (`owningId`, `relatedId`). */
  relationTable(ownerClass: string, field: string): string;

  /** A field path inside `data` of the row `alias`, a row of `className` when known (a dialect may read a typed column of it). */
  dataTarget(alias: string, path: FieldPath, className?: string): Target;
  /** A column of the row `alias`. */
  columnTarget(alias: string, column: string): Target;
  /**
   * The element `each` of an array (from `elements`), or with `base` the value at that path inside it
   * (the `group` of `sender.group` when `sender` is an array of objects).
   */
  elementTarget(each: string, base?: FieldPath): Target;
  /** The relation table row `join`: a pointer to an object of `className`. */
  relationTarget(join: string, className: string | undefined): Target;
  /**
   * A FROM item naming `each` the elements of the JSON array at `path` in `data` of the row `alias`
   * (no rows when the value there is no array).
   */
  elements(alias: string, path: FieldPath, each: string): string;

  /** SQL that is true when the kind expression `typeSql` (Target.typeAt) is one of `kinds`. */
  typeIs(typeSql: string, kinds: readonly JsonKind[]): string;
  /** The operand comparing `t` with a non-null literal, or undefined when `t` can never hold it. */
  operand(t: Target, lit: Exclude<Literal, { kind: 'null' }>): Operand | undefined;
  /** Mongo's `{"f": null}` on `t`: missing or a JSON null (columns and relations never are). */
  isNull(t: Target): SqlFragment;
  /** An ordered comparison SQL of an operand (`<`, `<=`, `>`, `>=`). */
  compare(o: Operand, op: '<' | '<=' | '>' | '>='): string;

  /** A string at `t` equal to the ASCII `lowered` once its ASCII letters are lowered. */
  lowerEquals(t: Target, lowered: string): SqlFragment;
  /** A string at `t` matching Parse's `$regex` with `$options` (checked valid by the caller). */
  regex(t: Target, pattern: string, flags: string): SqlFragment;
  /** A string at `t` holding every word of a `$text` `$term` (pattern.ts's rules). */
  textSearch(t: Target, term: string, caseSensitive: boolean, diacriticSensitive: boolean): SqlFragment;
  /** The great-circle distance in radians from the GeoPoint at `t` to `p` (NULL for no GeoPoint). */
  distance(t: Target, p: GeoPoint): SqlFragment;
  /** The GeoPoint at `t` inside (or on an edge of) the polygon of `[latitude, longitude]` corners. */
  pointInPolygon(t: Target, ring: readonly (readonly [number, number])[]): SqlFragment;
  /** The Polygon at `t` (its `coordinates`) holding `p`, edges included. */
  polygonHolds(t: Target, p: GeoPoint): SqlFragment;

  /**
   * A key equal for two values exactly when they are the same JSON scalar (so "1" never equals 1), for
   * `$select` to compare a value with the selected key's values: a list of expressions, written
   * `(<key>) IN (SELECT <key> ...)`.
   */
  scalarKey(t: Target): string;
  /** An ORDER BY term for `t` (a Date's iso, a Pointer's objectId...), missing values first ascending. */
  orderTerm(expr: string, descending: boolean): string;
  /** The expression `orderTerm` sorts a target by: strings as text, anything else in native order. */
  sortKey(t: Target, sub: readonly string[], textual: boolean): string;

  // What statements (statement.ts) need beyond a WHERE: the rest of SELECT, ORDER BY and LIMIT is
  // written once there.

  /**
   * SQL true for a row `alias` that one of `principals` (`*`, a user's objectId, `role:<name>`) may
   * read: no ACL, or an ACL granting one of them `read` (Parse docs, "Security", "ACLs").
   */
  readableBy(alias: string, principals: readonly string[]): SqlFragment;
  /** The `count(*)` column, as the driver answers it with a JS number. */
  readonly countAll: string;
  /**
   * A find's `LIMIT` clause for `limit` rows (a non-negative integer the caller checked, such as
   * objects/findParams.ts gives): bound, or written into the text where binding it costs more.
   */
  limitClause(limit: number): SqlFragment;
  /** A JSON number at `path` of `data` of the row `alias` as an SQL number (exact where the database can), NULL for anything else. */
  numberIn(alias: string, path: FieldPath): string;
  /** A `$group` key (statement.ts, `compileGroup`): the String at `path` of `data`, or one group for every row when undefined. */
  groupKey(alias: string, path: FieldPath | undefined): string;
  /** An aggregate's SQL as the driver answers it with a JS number (or null). */
  groupNumber(expr: string): string;
}

/** Fields every adapter keeps in columns of their own rather than inside `data`. */
export const COLUMN_FIELDS: ReadonlySet<string> = new Set(['objectId', 'createdAt', 'updatedAt']);
