/**
 * Operators that read other rows (REST guide, "Relational Queries"): `$inQuery`/`$notInQuery` on a
 * Pointer (or Array of pointers, or Relation) field, `$select`/`$dontSelect` on any field, and the
 * top-level `$relatedTo`. Sub-queries are compiled with the same rules and restricted by
 * `options.readable` (ACLs) and `options.access` (CLP and protected fields, as Parse Server 9 runs a
 * sub-query as a query of the caller's own), so a caller never learns about rows it may not read.
 */
import type { SqlFragment } from './compile.js';
import type { FieldOperator } from './operators.js';
import { FALSE, TRUE, and, anyOf, frag, invalidQuery, isClassName, isPlainObject, keyPath, not, type Ctx, type Target } from './sql.js';
import { parseLiteral } from './values.js';
import { DEFAULT_FIELDS, type FieldTypeName } from '../types.js';
import { COLUMN_FIELDS, classTable, fieldExpr, fieldTypeExpr, relationTable } from '../storage/sqlite/layout.js';

/**
 * `{className, where}` of a sub-query; throws 102 for a bad shape or a class the schema does not know,
 * 119 when the class's CLP does not let the caller `find`. The where is the caller's (QueryAccess.scopeWhere).
 */
function subQuerySpec(ctx: Ctx, value: unknown, op: string): { className: string; where: unknown } {
  if (!isPlainObject(value) || !isClassName(value.className)) throw invalidQuery(`${op} needs {"className": ..., "where": {...}}`);
  if (!ctx.options.schema.fields(value.className)) throw invalidQuery(`${op}: unknown class ${value.className}`);
  ctx.options.access?.checkFind(value.className);
  const where = value.where ?? {};
  if (!isPlainObject(where)) throw invalidQuery(`${op}: where must be an object`);
  return { className: value.className, where: ctx.options.access?.scopeWhere(value.className, where) ?? where };
}

/** `FROM <table> AS <alias> WHERE <sub-where AND readable AND extra>` of a sub-query, with a fresh alias. */
function subQuerySource(
  ctx: Ctx,
  className: string,
  where: unknown,
  extra: (alias: string) => SqlFragment = () => TRUE,
): { alias: string; sql: string; params: unknown[] } {
  const alias = ctx.alias('sq');
  const cond = and([ctx.where(className, alias, where), ctx.options.readable?.(className, alias) ?? TRUE, extra(alias)]);
  return { alias, sql: `FROM ${classTable(className)} AS ${alias} WHERE ${cond.sql}`, params: cond.params };
}

/** A pointer at `t` to one of the rows of the sub-query. */
function pointsInto(ctx: Ctx, t: Target, className: string, where: unknown): SqlFragment {
  if (t.kind === 'column' || (t.kind === 'relation' && t.className !== undefined && t.className !== className)) return FALSE;
  const src = subQuerySource(ctx, className, where);
  const inSub = frag(`${t.at(['objectId'])} IN (SELECT ${src.alias}."objectId" ${src.sql})`, ...src.params);
  return t.kind === 'relation' ? inSub : and([frag(`${t.at(['className'])} = ?`, className), inSub]);
}

/** `$inQuery: {className, where}`: the pointer points to an object the sub-query finds. */
export const $inQuery: FieldOperator = (ctx, field, value) => {
  const { className, where } = subQuerySpec(ctx, value, '$inQuery');
  return anyOf(ctx, field, (t) => pointsInto(ctx, t, className, where));
};

/** `$notInQuery`: the negation of `$inQuery`; a missing pointer matches. */
export const $notInQuery: FieldOperator = (ctx, field, value, ops) => not($inQuery(ctx, field, value, ops));

const typeClass = (typeSql: string) => `CASE ${typeSql} WHEN 'real' THEN 'integer' ELSE ${typeSql} END`;

/**
 * How a value at `t` compares with the `$select` key's values: Pointers by objectId, Dates by ISO
 * string, Files by name, anything else by value and JSON type (so "1" never equals 1).
 */
function selectedBy(ctx: Ctx, t: Target, keyType: FieldTypeName | undefined, key: string[], className: string, where: unknown): SqlFragment {
  const isColumn = key.length === 1 && COLUMN_FIELDS.has(key[0]!);
  const typed = keyType === 'Pointer' || keyType === 'File' || keyType === 'Date' || isColumn;
  const subOf = (column: boolean) =>
    keyType === 'Pointer' ? ['objectId'] : keyType === 'File' ? ['name'] : keyType === 'Date' && !column ? ['iso'] : [];
  const keyExpr = (alias: string) => fieldExpr(alias, [...key, ...subOf(isColumn)]);
  const src = subQuerySource(ctx, className, where, (alias) => frag(`${keyExpr(alias)} IS NOT NULL`));
  const from = src.sql;
  if (typed) return frag(`${t.at(subOf(t.kind === 'column'))} IN (SELECT ${keyExpr(src.alias)} ${from})`, ...src.params);
  const keyTypeSql = typeClass(fieldTypeExpr(src.alias, key));
  return frag(`(${t.at()}, ${typeClass(t.typeAt())}) IN (SELECT ${keyExpr(src.alias)}, ${keyTypeSql} ${from})`, ...src.params);
}

/**
 * `$select: {query: {className, where}, key}`: the value equals `key` of an object the sub-query finds.
 * A `key` protected from the caller is refused as a `where` key would be (119).
 */
export const $select: FieldOperator = (ctx, field, value) => {
  if (!isPlainObject(value) || typeof value.key !== 'string') throw invalidQuery('$select needs {"query": {...}, "key": ...}');
  const { className, where } = subQuerySpec(ctx, value.query, '$select');
  const key = keyPath(value.key);
  ctx.options.access?.checkField(className, value.key, 'query');
  const keyType = key.length === 1 ? (DEFAULT_FIELDS[key[0]!] ?? ctx.options.schema.fields(className)?.[key[0]!])?.type : undefined;
  return anyOf(ctx, field, (t) => (t.kind === 'relation' && keyType !== 'Pointer' ? FALSE : selectedBy(ctx, t, keyType, key, className, where)));
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
  const table = relationTable(owner.className, value.key);
  const related = frag(`${alias}."objectId" IN (SELECT ${join}."relatedId" FROM ${table} AS ${join} WHERE ${join}."owningId" = ?)`, owner.objectId);
  const ownerAlias = ctx.alias('ow');
  const readable = ctx.options.readable?.(owner.className, ownerAlias);
  if (!readable) return related;
  return and([related, frag(`EXISTS (SELECT 1 FROM ${classTable(owner.className)} AS ${ownerAlias} WHERE ${ownerAlias}."objectId" = ? AND ${readable.sql})`, owner.objectId, ...readable.params)]);
}
