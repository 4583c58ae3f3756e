/**
 * Building blocks of the query compiler: SQL fragments with their bound parameters, the "targets" a
 * predicate can be applied to (a field in `data`, a column, an element of a JSON array, a row of a
 * relation table) and the Mongo rule that a predicate on an array field holds when it holds for any
 * element (style.md, examples 6 and 7).
 *
 * Only names that passed `FIELD_NAME` / `CLASS_NAME` and aliases generated here reach SQL text; every
 * value is a bound parameter.
 */
import { ParseCode, ParseError } from '../errors.js';
import { DEFAULT_FIELDS, FIELD_NAME, type FieldTypeName } from '../types.js';
import { fieldPath, isIndexPart, slicePath, type FieldPath } from '../fieldPath.js';
import type { CompileOptions } from './options.js';
import { COLUMN_FIELDS, type Dialect, type SqlFragment, type Target } from './dialect.js';

export type { Target } from './dialect.js';

export const TRUE: SqlFragment = { sql: 'TRUE', params: [] };
export const FALSE: SqlFragment = { sql: 'FALSE', params: [] };

export const frag = (sql: string, ...params: unknown[]): SqlFragment => ({ sql, params });

export const invalidQuery = (message: string) => new ParseError(ParseCode.INVALID_QUERY, message);
export const invalidKey = (name: string) => new ParseError(ParseCode.INVALID_KEY_NAME, `Invalid key name: ${name}`);
/** A malformed operator value where Parse Server answers 107 (`bad $in value`, `bad $geoWithin value`...). */
export const invalidJson = (message: string) => new ParseError(ParseCode.INVALID_JSON, message);

/** The parts a conjunction was made of, so that a conjunction of conjunctions is one flat list. */
const conjuncts = new WeakMap<SqlFragment, readonly SqlFragment[]>();

/**
 * Conjunction, flattened; drops always-true parts and a part without parameters written before (a
 * range's two bounds each bring the same type guard: SQLite evaluates it once per row less), and
 * collapses to `0` when a part is always false.
 */
export function and(parts: readonly SqlFragment[]): SqlFragment {
  const flat = parts.flatMap((p) => conjuncts.get(p) ?? [p]);
  const seen = new Set<string>();
  const kept = flat.filter((p) => {
    if (p.sql === TRUE.sql) return false;
    if (p.params.length > 0) return true;
    if (seen.has(p.sql)) return false;
    seen.add(p.sql);
    return true;
  });
  if (kept.some((p) => p.sql === FALSE.sql)) return FALSE;
  if (kept.length === 0) return TRUE;
  if (kept.length === 1) return kept[0]!;
  const joined = { sql: kept.map((p) => (p.sql.includes(' OR ') ? `(${p.sql})` : p.sql)).join(' AND '), params: kept.flatMap((p) => p.params) };
  conjuncts.set(joined, kept);
  return joined;
}

/** Disjunction; drops always-false parts and collapses to `1` when a part is always true. */
export function or(parts: readonly SqlFragment[]): SqlFragment {
  const kept = parts.filter((p) => p.sql !== FALSE.sql);
  if (kept.some((p) => p.sql === TRUE.sql)) return TRUE;
  if (kept.length === 0) return FALSE;
  if (kept.length === 1) return kept[0]!;
  return { sql: kept.map((p) => (/ AND | OR /.test(p.sql) ? `(${p.sql})` : p.sql)).join(' OR '), params: kept.flatMap((p) => p.params) };
}

/** Negation that treats SQL NULL (e.g. a missing field) as false, so `$ne`/`$nin` match missing fields. */
export function not(part: SqlFragment): SqlFragment {
  if (part.sql === TRUE.sql) return FALSE;
  if (part.sql === FALSE.sql) return TRUE;
  return { sql: `(${part.sql}) IS NOT TRUE`, params: part.params };
}

/** A field named in a `where`, with what the schema says about it. */
export interface FieldRef {
  readonly className: string;
  readonly alias: string;
  readonly path: FieldPath;
  readonly type?: FieldTypeName;
  readonly targetClass?: string;
  /** The schema type of `path[0]` when the key is dotted. */
  readonly rootType?: FieldTypeName;
}

/** State shared by one compilation: options, unique aliases and the recursion into sub-wheres. */
export interface Ctx {
  readonly options: CompileOptions;
  alias(prefix: string): string;
  where(className: string, alias: string, where: unknown): SqlFragment;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

export { isClassName } from '../types.js';

export const isArrayIndex = isIndexPart;

/**
 * Splits and checks a (dotted) key of a query, an order or an index: Parse's field-name rule for the
 * first part, a field name or an array index for each later one.
 * @throws ParseError 105 `Invalid key name: <key>` otherwise.
 */
export function keyPath(key: string): FieldPath {
  const path = key.split('.');
  if (!FIELD_NAME.test(path[0]!)) throw invalidKey(key);
  return fieldPath(path, () => invalidKey(key));
}

/** Resolves a where key of `className` to a field reference (unknown fields are allowed). */
export function fieldRef(options: CompileOptions, className: string, alias: string, key: string): FieldRef {
  const path = keyPath(key);
  const name = path[0]!;
  const def = DEFAULT_FIELDS[name] ?? options.schema.fields(className)?.[name];
  if (path.length > 1) return { className, alias, path, rootType: def?.type };
  return { className, alias, path, type: def?.type, targetClass: def?.targetClass };
}

/**
 * Whether a dotted key goes through an Array field by name (`sender.group`), so that, as in Mongo,
 * it reads that path in every element; `items.1.value` picks one element by index instead.
 */
export const throughArray = (field: FieldRef): boolean => field.path.length > 1 && field.rootType === 'Array' && !isArrayIndex(field.path[1]);

export const isColumn = (field: FieldRef) => field.path.length === 1 && COLUMN_FIELDS.has(field.path[0]!);

/** The target of the field's value itself (no array or relation quantifier). */
export const scalarTarget = (dialect: Dialect, field: FieldRef): Target =>
  isColumn(field) ? dialect.columnTarget(field.alias, field.path[0]!) : dialect.dataTarget(field.alias, field.path, field.className);

/**
 * Applies `pred` with Mongo's array rule: on an Array field it holds when it holds for any element
 * (and, with `whole`, for the array itself, as for `{"tags": null}` or `{"tags": [..]}`); on a Relation
 * field when it holds for any related object; on a dotted key through an Array field (`sender.group`)
 * when it holds for that path in any element (and, with `whole`, for a missing array); otherwise for
 * the value itself.
 */
export function anyOf(ctx: Ctx, field: FieldRef, pred: (t: Target) => SqlFragment, whole = false): SqlFragment {
  const d = ctx.options.dialect;
  if (throughArray(field)) {
    const each = ctx.alias('je');
    const root = slicePath(field.path, 0, 1);
    const inner = pred(d.elementTarget(each, slicePath(field.path, 1)));
    const some =
      inner.sql === FALSE.sql ? FALSE : frag(`EXISTS (SELECT 1 FROM ${d.elements(field.alias, root, each)} WHERE ${inner.sql})`, ...inner.params);
    if (!whole) return some;
    // Only a missing (or null) array is read as a whole: a path through an array reads nothing.
    const notArray = frag(`(${d.typeIs(d.dataTarget(field.alias, root).typeAt(), ['array'])}) IS NOT TRUE`);
    return or([and([notArray, pred(d.dataTarget(field.alias, field.path))]), some]);
  }
  if (field.type === 'Relation' && field.path.length === 1) {
    const join = ctx.alias('rl');
    const inner = pred(d.relationTarget(join, field.targetClass));
    if (inner.sql === FALSE.sql) return FALSE;
    const table = d.relationTable(field.className, field.path[0]!);
    return frag(`${field.alias}."objectId" IN (SELECT ${join}."owningId" FROM ${table} AS ${join} WHERE ${inner.sql})`, ...inner.params);
  }
  if (field.type === 'Array' && field.path.length === 1) {
    const each = ctx.alias('je');
    const inner = pred(d.elementTarget(each));
    const some =
      inner.sql === FALSE.sql ? FALSE : frag(`EXISTS (SELECT 1 FROM ${d.elements(field.alias, field.path, each)} WHERE ${inner.sql})`, ...inner.params);
    return whole ? or([pred(d.dataTarget(field.alias, field.path)), some]) : some;
  }
  return pred(scalarTarget(d, field));
}
