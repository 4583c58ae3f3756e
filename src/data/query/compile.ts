/**
 * Compiles a Parse REST `where` (Parse's Mongo-like query language, REST guide "Queries") into the SQL
 * of the adapter's dialect (dialect.ts: SQLite's or PostgreSQL's), with every value bound (style.md,
 * examples 6-8). Keys, operators and values are checked here once, with Parse's error codes.
 *
 * The walk here validates the shape and dispatches each operator to one small function
 * (operators.ts, geo.ts, subquery.ts). Semantics are Mongo's, as Parse Server's reference backend
 * answers them: type-exact comparisons, array fields matched element-wise (also through a dotted key,
 * `sender.group`, while `items.1.value` picks an element by index), `$ne`/`$nin`/`$notInQuery`/
 * `$dontSelect`/`$nor` matching missing fields.
 */
import { ParseCode, ParseError } from '../errors.js';
import { distanceTo, GEO_OPERATORS } from './geo.js';
import { COMPARISON_OPERATORS, $eq, type FieldOperator } from './operators.js';
import { $dontSelect, $inQuery, $notInQuery, $select, relatedTo } from './subquery.js';
import type { Dialect, SqlFragment } from './dialect.js';
import type { CompileOptions } from './options.js';
import { TRUE, and, fieldRef, invalidKey, invalidQuery, isPlainObject, not, or, scalarTarget, type Ctx, type FieldRef } from './sql.js';
import { parseGeoPoint } from './values.js';

export type { SqlFragment } from './dialect.js';

export type { CompileOptions } from './options.js';

/** Every field operator, by name; an operator not listed here answers 102. */
const FIELD_OPERATORS: Readonly<Record<string, FieldOperator>> = {
  ...COMPARISON_OPERATORS,
  ...GEO_OPERATORS,
  $inQuery,
  $notInQuery,
  $select,
  $dontSelect,
};

/** Nesting of `$or`/`$and`/`$nor`/sub-queries allowed before a where is refused. */
const MAX_DEPTH = 20;

const ALIAS = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A fresh compilation context: unique aliases, and depth-limited recursion into sub-wheres. */
function newContext(options: CompileOptions): Ctx {
  let next = 0;
  let depth = 0;
  const ctx: Ctx = {
    options,
    alias: (prefix) => `${prefix}${++next}`,
    where: (className, alias, where) => {
      if (++depth > MAX_DEPTH) throw invalidQuery('The query is nested too deeply');
      try {
        return compileNode(ctx, className, alias, where);
      } finally {
        depth--;
      }
    },
  };
  return ctx;
}

/** `$or`/`$and`/`$nor`: a non-empty array of wheres. */
function compileLogical(ctx: Ctx, op: string, className: string, alias: string, value: unknown): SqlFragment {
  if (!Array.isArray(value) || value.length === 0) throw invalidQuery(`${op} needs a non-empty array`);
  const parts = value.map((sub) => {
    if (!isPlainObject(sub)) throw invalidQuery(`${op} needs an array of objects`);
    return ctx.where(className, alias, sub);
  });
  if (op === '$and') return and(parts);
  return op === '$or' ? or(parts) : not(or(parts));
}

/**
 * Splits a typed value merged with operators, as the SDK builds `equalTo(p)` followed by
 * `doesNotMatchKeyInQuery(p, ...)`: `{"__type": "Pointer", ..., "$dontSelect": {...}}` is the value
 * without its `$` keys, equalled, and those operators.
 */
function splitTyped(value: Record<string, unknown>): [Record<string, unknown> | undefined, Record<string, unknown>] {
  if (!('__type' in value)) return [undefined, value];
  const literal: Record<string, unknown> = {};
  const ops: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) (k.startsWith('$') ? ops : literal)[k] = v;
  return [literal, ops];
}

/** The value of one field key: an operator object (`{"$gt": 1, "$lt": 5}`) or a value to equal. */
function compileField(ctx: Ctx, field: FieldRef, value: unknown): SqlFragment {
  if (!isPlainObject(value) || !Object.keys(value).some((k) => k.startsWith('$'))) return $eq(ctx, field, value, {});
  const [literal, ops] = splitTyped(value);
  return and([
    literal ? $eq(ctx, field, literal, {}) : TRUE,
    ...Object.entries(ops).map(([op, arg]) => {
      const operator = Object.hasOwn(FIELD_OPERATORS, op) ? FIELD_OPERATORS[op] : undefined;
      if (!operator) throw invalidQuery(op.startsWith('$') ? `Unknown operator: ${op}` : `Cannot mix ${op} with operators`);
      return operator(ctx, field, arg, ops);
    }),
  ]);
}

function compileNode(ctx: Ctx, className: string, alias: string, where: unknown): SqlFragment {
  if (where === undefined || where === null) return TRUE;
  if (!isPlainObject(where)) throw invalidQuery('where must be a JSON object');
  return and(
    Object.entries(where).map(([key, value]) => {
      if (key === '$or' || key === '$and' || key === '$nor') return compileLogical(ctx, key, className, alias, value);
      if (key === '$relatedTo') return relatedTo(ctx, className, alias, value);
      // Parse Server's validateQuery: a `$` key other than these is an invalid key name, and the ACL
      // (kept apart from the fields) cannot be queried.
      if (key.startsWith('$')) throw invalidKey(key);
      if (key === 'ACL') throw invalidQuery('Cannot query on ACL.');
      ctx.options.access?.checkField(className, key, 'query');
      return compileField(ctx, fieldRef(ctx.options, className, alias, key), value);
    }),
  );
}

function checkAlias(alias: string): void {
  if (!ALIAS.test(alias)) throw new ParseError(ParseCode.INTERNAL_SERVER_ERROR, `Invalid SQL alias: ${alias}`);
}

/**
 * The WHERE clause (without the word WHERE) for rows of `className` under table alias `alias`, e.g.
 * `{"score": {"$gte": 10}}` → `json_extract(t.data, '$."score"') >= ? AND json_type(...) IN ('integer','real')`
 * with params `[10]`; `'1'` for an empty (or absent) where.
 *
 * Throws ParseError 102 for an unknown operator, a malformed value (a bad `$regex`, an
 * empty `$or`), a query on `ACL` or an unknown class in a sub-query; 107 where Parse Server answers it
 * (`$in`/`$nin`/`$all`/`$containedBy` that are no arrays, a malformed geo value or `$text`, a bad
 * `$relativeTime`) and for a where binding more than MAX_BOUND_VALUES values; 105 for a key that breaks
 * Parse's field-name rule (a top-level `$foo` too). Fields
 * the schema does not know are allowed (they hold nothing). With `options.access`, throws 119 for a
 * protected field or a sub-query into a class CLP keeps from the caller.
 */
export function compileWhere(className: string, alias: string, where: unknown, options: CompileOptions): SqlFragment {
  checkAlias(alias);
  const compiled = newContext(options).where(className, alias, where);
  if (compiled.params.length > MAX_BOUND_VALUES) {
    throw invalidQuery(`The query holds ${compiled.params.length} values; at most ${MAX_BOUND_VALUES} fit in one query: split a long $in or $nin into several queries.`);
  }
  return compiled;
}

/**
 * The most values one `where` may bind: SQLite takes 32,766 bound parameters in a statement and
 * PostgreSQL 65,535, and the ACL check, limit and skip bind a few more.
 */
export const MAX_BOUND_VALUES = 32_000;

/** Parse.com's storage names of the two dates, which Parse Server accepts in `order` for them. */
const ORDER_ALIASES: Readonly<Record<string, string>> = { _created_at: 'createdAt', _updated_at: 'updatedAt' };

/**
 * The ORDER BY list (without ORDER BY) for Parse's `order` parameter ("score,-createdAt": a leading `-`
 * sorts descending; `_created_at`/`_updated_at` name createdAt/updatedAt, as Parse Server reads them).
 * Dates sort by ISO string, Pointers by objectId, Files by name. `$score` (text relevance, which this
 * compiler does not compute) is skipped. Returns '' for an empty order; throws ParseError 105 for a bad
 * key name, 119 for a field protected from the caller (`options.access`).
 */
export function compileOrder(className: string, alias: string, order: string, options: CompileOptions): string {
  checkAlias(alias);
  const terms: string[] = [];
  for (const raw of order.split(',')) {
    const item = raw.trim();
    if (item === '' || item === '$score') continue;
    const descending = item.startsWith('-');
    const named = descending ? item.slice(1) : item;
    const key = Object.hasOwn(ORDER_ALIASES, named) ? ORDER_ALIASES[named]! : named;
    if (key === '') throw invalidKey(item);
    options.access?.checkField(className, key, 'sort');
    const field = fieldRef(options, className, alias, key);
    const target = scalarTarget(options.dialect, field);
    const sub = field.type === 'Date' ? ['iso'] : field.type === 'Pointer' ? ['objectId'] : field.type === 'File' ? ['name'] : [];
    const textual = sub.length > 0 || field.type === 'String';
    terms.push(options.dialect.orderTerm(options.dialect.sortKey(target, sub, textual), descending));
  }
  return terms.join(', ');
}

/**
 * Checks a query's `where` and `order` as compileWhere and compileOrder do, for a class that has no
 * table yet: Parse Server refuses a bad key, operator or value (105/102/107) whether or not the
 * class exists. Throws as those two do; returns nothing.
 */
export function checkQuery(className: string, where: unknown, order: string | undefined, options: CompileOptions): void {
  compileWhere(className, 't', where, options);
  if (order) compileOrder(className, 't', order, options);
}

/** The `$nearSphere` operator objects of a where's top level (and of its `$and` members). */
function* nearSphereFields(where: unknown): Generator<[string, unknown]> {
  if (!isPlainObject(where)) return;
  for (const [key, value] of Object.entries(where)) {
    if (key === '$and' && Array.isArray(value)) for (const sub of value) yield* nearSphereFields(sub);
    else if (!key.startsWith('$') && isPlainObject(value) && '$nearSphere' in value) yield [key, value.$nearSphere];
  }
}

/**
 * When `where` has `$nearSphere` on a field (at the top level or in `$and`): the SQL expression of the
 * distance in radians from the query point, to sort nearest first (Parse sorts `$nearSphere` results by
 * distance unless an `order` is given), with its params; else undefined. Throws as compileWhere does for
 * a bad key or point.
 */
export function nearSphereOrder(className: string, alias: string, where: unknown, options: CompileOptions): SqlFragment | undefined {
  checkAlias(alias);
  for (const [key, point] of nearSphereFields(where)) {
    const field = fieldRef(options, className, alias, key);
    if (field.path.length === 1 && field.type !== undefined && field.type !== 'GeoPoint') continue;
    return distanceTo(options.dialect, scalarTarget(options.dialect, field), parseGeoPoint(point));
  }
  return undefined;
}
