/**
 * Operators that read other rows (REST guide, "Relational Queries"): `$inQuery`/`$notInQuery` on a
 * Pointer (or Array of pointers, or Relation) field, `$select`/`$dontSelect` on any field, and the
 * top-level `$relatedTo`. Sub-queries are compiled with the same rules and restricted by
 * `options.readable` (ACLs) and `options.access` (CLP and protected fields, as Parse Server 9 runs a
 * sub-query as a query of the caller's own), so a caller never learns about rows it may not read.
 */
import { COLUMN_FIELDS, type SqlFragment, type Target } from './dialect.js';
import type { FieldOperator } from './operators.js';
import { FALSE, TRUE, and, anyOf, frag, invalidQuery, isClassName, isPlainObject, keyPath, not, or, type Ctx } from './sql.js';
import { parseLiteral } from './values.js';
import { DEFAULT_FIELDS, type FieldTypeName } from '../types.js';
import type { FieldPath } from '../fieldPath.js';

/**
 * The class a sub-query reads: `className`, or with `redirectClassNameForKey` naming one of its
 * Relation fields, that relation's target class (as the SDK's `relation.query()` sends it, and as
 * Parse Server redirects a sub-query); a key that is no Relation leaves the class as it is.
 */
function subQueryClass(ctx: Ctx, value: Record<string, unknown>, op: string): string {
  const className = value.className as string;
  const redirect = value.redirectClassNameForKey;
  if (redirect === undefined) return className;
  if (typeof redirect !== 'string') throw invalidQuery(`${op}: redirectClassNameForKey must be a field name`);
  const target = ctx.options.schema.fields(className)?.[redirect];
  return target?.type === 'Relation' && target.targetClass !== undefined ? target.targetClass : className;
}

/**
 * `{className, where, redirectClassNameForKey?}` of a sub-query, or undefined for a class the schema
 * does not know (whose sub-query finds nothing, as Parse Server answers); throws 102 for a bad shape,
 * 119 when the class's CLP does not let the caller `find` (checked for the class read after a
 * redirect). The where is the caller's (QueryAccess.scopeWhere).
 */
function subQuerySpec(ctx: Ctx, value: unknown, op: string): { className: string; where: unknown } | undefined {
  if (!isPlainObject(value) || !isClassName(value.className)) throw invalidQuery(`${op} needs {"className": ..., "where": {...}}`);
  if (!ctx.options.schema.fields(value.className)) return undefined;
  const className = subQueryClass(ctx, value, op);
  ctx.options.access?.checkFind(className);
  const where = value.where ?? {};
  if (!isPlainObject(where)) throw invalidQuery(`${op}: where must be an object`);
  return { className, where: ctx.options.access?.scopeWhere(className, where) ?? where };
}

/**
 * `FROM <table> AS <alias><join> WHERE <sub-where AND readable AND extra>` of a sub-query, with a fresh
 * alias; `join` adds sources that read the row (`, json_each(<alias>.data, ...) AS je`).
 */
function subQuerySource(
  ctx: Ctx,
  className: string,
  where: unknown,
  extra: (alias: string) => SqlFragment = () => TRUE,
  join: (alias: string) => string = () => '',
): { alias: string; sql: string; params: unknown[] } {
  const alias = ctx.alias('sq');
  const cond = and([ctx.where(className, alias, where), ctx.options.readable?.(className, alias) ?? TRUE, extra(alias)]);
  return { alias, sql: `FROM ${ctx.options.dialect.classTable(className)} AS ${alias}${join(alias)} WHERE ${cond.sql}`, params: cond.params };
}

/** A pointer at `t` to one of the rows of the sub-query. */
function pointsInto(ctx: Ctx, t: Target, className: string, where: unknown): SqlFragment {
  if (t.kind === 'column' || (t.kind === 'relation' && t.className !== undefined && t.className !== className)) return FALSE;
  const src = subQuerySource(ctx, className, where);
  const inSub = frag(`${t.textAt(['objectId'])} IN (SELECT ${src.alias}."objectId" ${src.sql})`, ...src.params);
  return t.kind === 'relation' ? inSub : and([frag(`${t.textAt(['className'])} = ?`, className), inSub]);
}

/** `$inQuery: {className, where}`: the pointer points to an object the sub-query finds. */
export const $inQuery: FieldOperator = (ctx, field, value) => {
  const spec = subQuerySpec(ctx, value, '$inQuery');
  if (!spec) return FALSE;
  const { className, where } = spec;
  return anyOf(ctx, field, (t) => pointsInto(ctx, t, className, where));
};

/** `$notInQuery`: the negation of `$inQuery`; a missing pointer matches. */
export const $notInQuery: FieldOperator = (ctx, field, value, ops) => not($inQuery(ctx, field, value, ops));

/**
 * A value at `t` equal to an element of the Array `key` of a row the sub-query finds (Parse Server
 * flattens the selected arrays into one `$in` list): pointer elements by objectId, other objects never,
 * anything else by value and JSON type.
 */
function selectedFromArray(ctx: Ctx, t: Target, key: FieldPath, className: string, where: unknown): SqlFragment {
  const d = ctx.options.dialect;
  /** `FROM <rows>, <elements of key> AS je WHERE ... AND <elements>`, and the element's alias. */
  const elements = (condition: (element: Target) => string) => {
    const each = ctx.alias('je');
    const src = subQuerySource(ctx, className, where, () => frag(condition(d.elementTarget(each))), (alias) => `, ${d.elements(alias, key, each)}`);
    return { element: d.elementTarget(each), ...src };
  };
  const p = elements((e) => `${d.typeIs(e.typeAt(), ['object'])} AND ${e.textAt(['__type'])} = 'Pointer'`);
  const pointers = frag(`${t.textAt(['objectId'])} IN (SELECT ${p.element.textAt(['objectId'])} ${p.sql})`, ...p.params);
  if (t.kind === 'relation') return pointers;
  const v = elements((e) => `(${d.typeIs(e.typeAt(), ['object', 'array'])}) IS NOT TRUE`);
  const scalars = frag(`(${d.scalarKey(t)}) IN (SELECT ${d.scalarKey(v.element)} ${v.sql})`, ...v.params);
  return or([pointers, scalars]);
}

/** The objectId of the pointer at `t`, as a target of its own. */
const objectIdOf = (t: Target): Target => ({
  kind: 'data',
  at: (sub = []) => t.at(['objectId', ...sub]),
  textAt: (sub = []) => t.textAt(['objectId', ...sub]),
  numberAt: (sub = []) => t.numberAt(['objectId', ...sub]),
  typeAt: (sub = []) => t.typeAt(['objectId', ...sub]),
});

/**
 * How a value at `t` compares with the `$select` key's values: Pointers by objectId, Dates by ISO
 * string, Files by name, elements of an Array key each, anything else by value and JSON type (so "1"
 * never equals 1).
 */
function selectedBy(ctx: Ctx, t: Target, keyType: FieldTypeName | undefined, key: FieldPath, className: string, where: unknown): SqlFragment {
  if (keyType === 'Array') return selectedFromArray(ctx, t, key, className, where);
  const isColumn = key.length === 1 && COLUMN_FIELDS.has(key[0]!);
  const typed = keyType === 'Pointer' || keyType === 'File' || keyType === 'Date' || isColumn;
  const subOf = (column: boolean) =>
    keyType === 'Pointer' ? ['objectId'] : keyType === 'File' ? ['name'] : keyType === 'Date' && !column ? ['iso'] : [];
  const d = ctx.options.dialect;
  const keyTarget = (alias: string) => (isColumn ? d.columnTarget(alias, key[0]!) : d.dataTarget(alias, key));
  const keyText = (alias: string) => keyTarget(alias).textAt(subOf(isColumn));
  const src = subQuerySource(ctx, className, where, (alias) => frag(`${keyText(alias)} IS NOT NULL`));
  const from = src.sql;
  if (typed) return frag(`${t.textAt(subOf(t.kind === 'column'))} IN (SELECT ${keyText(src.alias)} ${from})`, ...src.params);
  return frag(`(${d.scalarKey(t)}) IN (SELECT ${d.scalarKey(keyTarget(src.alias))} ${from})`, ...src.params);
}

/**
 * `$select: {query: {className, where}, key}`: the value equals `key` of an object the sub-query finds.
 * A `key` protected from the caller is refused as a `where` key would be (119).
 */
export const $select: FieldOperator = (ctx, field, value) => {
  if (!isPlainObject(value) || typeof value.key !== 'string') throw invalidQuery('$select needs {"query": {...}, "key": ...}');
  const spec = subQuerySpec(ctx, value.query, '$select');
  if (!spec) return FALSE;
  const { className, where } = spec;
  const key = keyPath(value.key);
  ctx.options.access?.checkField(className, value.key, 'query');
  const keyType = key.length === 1 ? (DEFAULT_FIELDS[key[0]!] ?? ctx.options.schema.fields(className)?.[key[0]!])?.type : undefined;
  const comparable = (t: Target) => t.kind !== 'relation' || keyType === 'Pointer' || keyType === 'Array';
  // A Pointer field compares its objectId with a key of strings (objectId, a String field), as it
  // matches a bare objectId in `$in`.
  const byId = field.type === 'Pointer' && keyType !== 'Pointer' && keyType !== 'Array';
  return anyOf(ctx, field, (t) => (comparable(t) ? selectedBy(ctx, byId ? objectIdOf(t) : t, keyType, key, className, where) : FALSE));
};

/** `$dontSelect`: the negation of `$select`; a missing value matches. */
export const $dontSelect: FieldOperator = (ctx, field, value, ops) => not($select(ctx, field, value, ops));

/**
 * Top-level `$relatedTo: {object: Pointer, key}`: objects of `className` in the relation `key` of
 * `object`. Throws 102 for a bad shape or an unknown owner class, 105 for a bad key, 119 for a key
 * protected from the caller; a key that is not a Relation to `className` matches nothing, and so does
 * an owner the caller may not get (its class's CLP or its ACL), as Parse Server 9's
 * authorizeRelatedToQuery answers, so that the relation is no membership oracle.
 */
export function relatedTo(ctx: Ctx, className: string, alias: string, value: unknown): SqlFragment {
  if (!isPlainObject(value) || !isPlainObject(value.object)) throw invalidQuery('$relatedTo needs {"object": Pointer, "key": ...}');
  const owner = parseLiteral(value.object);
  if (owner.kind !== 'pointer' || !isClassName(owner.className)) throw invalidQuery('$relatedTo: object must be a Pointer');
  if (typeof value.key !== 'string') throw invalidQuery('$relatedTo needs a key');
  if (keyPath(value.key).length !== 1) return FALSE;
  const fields = ctx.options.schema.fields(owner.className);
  if (!fields) throw invalidQuery(`$relatedTo: unknown class ${owner.className}`);
  const relation = fields[value.key];
  ctx.options.access?.checkField(owner.className, value.key, 'query');
  if (relation?.type !== 'Relation' || (relation.targetClass !== undefined && relation.targetClass !== className)) return FALSE;
  if (ctx.options.access?.mayGet(owner.className) === false) return FALSE;
  const join = ctx.alias('rl');
  const table = ctx.options.dialect.relationTable(owner.className, value.key);
  const related = frag(`${alias}."objectId" IN (SELECT ${join}."relatedId" FROM ${table} AS ${join} WHERE ${join}."owningId" = ?)`, owner.objectId);
  const ownerAlias = ctx.alias('ow');
  const readable = ctx.options.readable?.(owner.className, ownerAlias);
  if (!readable) return related;
  return and([related, frag(`EXISTS (SELECT 1 FROM ${ctx.options.dialect.classTable(owner.className)} AS ${ownerAlias} WHERE ${ownerAlias}."objectId" = ? AND ${readable.sql})`, owner.objectId, ...readable.params)]);
}
