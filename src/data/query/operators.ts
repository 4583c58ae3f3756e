/**
 * Field operators of Parse's query language other than geo and sub-queries, one small function each:
 * `$eq $ne $lt $lte $gt $gte $in $nin $exists $all $containedBy $regex $options $text`.
 * Semantics are Mongo's (Parse Server's reference backend), checked against mingo in test/query.test.ts.
 */
import type { SqlFragment, Target } from './dialect.js';
import { compileRegex } from './regex.js';
import { REGEX_OPTIONS } from './regexSyntax.js';
import { isRelativeTime, relativeDate } from './relativeTime.js';
import { FALSE, TRUE, and, anyOf, frag, invalidJson, invalidQuery, isColumn, isPlainObject, not, throughArray, type Ctx, type FieldRef } from './sql.js';
import { compares, equals, needsWhole, oneOf, parseLiteral, parseRangeLiteral, polygonForms, type Literal } from './values.js';

/** One operator of a field's operator object; `ops` is that whole object (for `$options`, `$maxDistance`...). */
export type FieldOperator = (ctx: Ctx, field: FieldRef, value: unknown, ops: Readonly<Record<string, unknown>>) => SqlFragment;

/** The list of `$in`/`$nin`/`$all`; anything else answers 107 "bad $in value", as Parse Server does. */
const listOf = (value: unknown, op: string): unknown[] => {
  if (!Array.isArray(value)) throw invalidJson(`bad ${op} value`);
  return value;
};

/**
 * A value compared with `field`: on a Pointer field a bare string is the objectId of the pointer
 * (Parse Server matches `equalTo('child', id)` and `containedIn('child', [id])` so).
 */
const literalFor = (field: FieldRef, value: unknown): Literal =>
  field.type === 'Pointer' && typeof value === 'string' ? { kind: 'pointer', objectId: value } : parseLiteral(value);

/** Parse Server's 107 for `$relativeTime` outside the four range operators. */
function refuseRelativeTime(value: unknown): void {
  if (isRelativeTime(value)) throw invalidJson('$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators');
}

/**
 * `{"f": v}` / `$eq`: equal, or on an Array field, contains (or equals the whole array). A Polygon
 * equals the same ring from any vertex, in either direction (values.ts polygonForms).
 */
export const $eq: FieldOperator = (ctx, field, value) => {
  refuseRelativeTime(value);
  const forms = polygonForms(value);
  if (forms) return anyOf(ctx, field, (t) => oneOf(ctx.options.dialect, t, forms), needsWhole(forms));
  const lit = literalFor(field, value);
  return anyOf(ctx, field, (t) => equals(ctx.options.dialect, t, lit), needsWhole([lit]));
};

/** `$ne`: the negation of `$eq`; a missing field matches. */
export const $ne: FieldOperator = (ctx, field, value, ops) => not($eq(ctx, field, value, ops));

/** A Date `{"$relativeTime": ...}` names, on a field that holds Dates (or that the schema does not know). */
function relativeLiteral(field: FieldRef, value: Record<string, unknown>): Literal {
  if (field.type !== undefined && field.type !== 'Date') throw invalidJson('$relativeTime can only be used with Date field');
  return { kind: 'date', iso: relativeDate(value) };
}

const range =
  (op: '<' | '<=' | '>' | '>=', name: string): FieldOperator =>
  (ctx, field, value) => {
    const lit = isRelativeTime(value) ? relativeLiteral(field, value) : parseRangeLiteral(value, name);
    return anyOf(ctx, field, (t) => compares(ctx.options.dialect, t, op, lit));
  };

export const $lt = range('<', '$lt');
export const $lte = range('<=', '$lte');
export const $gt = range('>', '$gt');
export const $gte = range('>=', '$gte');

/** `$in`: equal to one of the values (on an Array field: contains one of them). */
export const $in: FieldOperator = (ctx, field, value) => {
  const lits = listOf(value, '$in').map((v) => literalFor(field, v));
  return anyOf(ctx, field, (t) => oneOf(ctx.options.dialect, t, lits), needsWhole(lits));
};

/** `$nin`: the negation of `$in`; a missing field matches. */
export const $nin: FieldOperator = (ctx, field, value, ops) => {
  listOf(value, '$nin');
  return not($in(ctx, field, value, ops));
};

/**
 * `$exists`: the key is present (a JSON null counts as present, as in Mongo); through an Array field
 * (`sender.group`), present in some element. Any truthy value means true, as Parse Server and Mongo
 * read it (`{"$exists": 1}`, `"yes"`); a falsy one, false.
 */
export const $exists: FieldOperator = (ctx, field, raw) => {
  refuseRelativeTime(raw);
  const value = Boolean(raw);
  if (isColumn(field)) return value ? TRUE : FALSE;
  if (throughArray(field)) {
    const some = anyOf(ctx, field, (t) => frag(`${t.typeAt()} IS NOT NULL`));
    return value ? some : not(some);
  }
  return frag(`${ctx.options.dialect.dataTarget(field.alias, field.path).typeAt()} ${value ? 'IS NOT NULL' : 'IS NULL'}`);
};

/**
 * A `$regex` (with its `$options`) checked now, in the dialect both databases run (regexSyntax.ts),
 * so that a bad pattern answers 102 naming the field rather than failing in SQL; compiling it here
 * also fills the cache SQLite's `parse_regexp` reads.
 */
function regexArgs(field: FieldRef, pattern: unknown, options: unknown): [string, string] {
  const name = field.path.join('.');
  if (typeof pattern !== 'string') throw invalidQuery(`$regex of ${name} needs a string`);
  const flags = options === undefined ? '' : options;
  if (typeof flags !== 'string' || !REGEX_OPTIONS.test(flags)) throw invalidQuery(`$options of ${name} may hold only i, m, s and x`);
  compileRegex(pattern, flags, `$regex of ${name}`);
  return [pattern, flags];
}

/**
 * The text a pattern `^literal$` matches and nothing else, when every character between the anchors
 * is plain or backslash-escaped punctuation; undefined for any other pattern.
 */
export function exactLiteral(pattern: string): string | undefined {
  if (pattern.length < 2 || !pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  const body = pattern.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\') {
      const next = body[i + 1];
      // \d, \w, \Q ... are classes or commands, not literals; a trailing \ escaped the final $.
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return undefined;
      out += next;
      i++;
    } else if ('^$.*+?()[]{}|'.includes(c)) {
      return undefined;
    } else {
      out += c;
    }
  }
  return out;
}

const ASCII = /^[\x00-\x7f]*$/;

const matchesRegex = (ctx: Ctx, t: Target, [pattern, flags]: [string, string]): SqlFragment => {
  if (t.kind === 'relation') return FALSE;
  // A case-insensitive exact match of ASCII text (how the users service checks that a username or
  // email is free) as `lower(field) = ?`, so an index on lower(field) serves it instead of a regex
  // over every row. Same answers: without the u flag, the i flag folds only ASCII letters onto ASCII
  // letters, and so does each dialect's lowerEquals.
  const literal = flags === 'i' ? exactLiteral(pattern) : undefined;
  if (literal !== undefined && ASCII.test(literal)) return ctx.options.dialect.lowerEquals(t, literal.toLowerCase());
  return ctx.options.dialect.regex(t, pattern, flags);
};

/** `$regex` + `$options`: a string matching the pattern (on an Array field: any string element). */
export const $regex: FieldOperator = (ctx, field, value, ops) => {
  const args = regexArgs(field, value, ops.$options);
  return anyOf(ctx, field, (t) => matchesRegex(ctx, t, args));
};

/** `$options` is read by `$regex` and is an error on its own. */
export const $options: FieldOperator = (_ctx, _field, _value, ops) => {
  if (!('$regex' in ops)) throw invalidQuery('$options needs $regex');
  return TRUE;
};

/**
 * An element of `$all`: a value, or `{"$regex": ...}` as the SDKs send for `containsAllStartingWith`.
 * Any other operator object matches nothing, as Parse Server answers.
 */
function allElement(ctx: Ctx, field: FieldRef, value: unknown): SqlFragment {
  if (isPlainObject(value) && Object.keys(value).some((k) => k.startsWith('$'))) {
    if (!('$regex' in value) || Object.keys(value).some((k) => k !== '$regex' && k !== '$options')) return FALSE;
    const args = regexArgs(field, value.$regex, value.$options);
    return anyOf(ctx, field, (t) => matchesRegex(ctx, t, args));
  }
  const lit = literalFor(field, value);
  return anyOf(ctx, field, (t) => equals(ctx.options.dialect, t, lit), needsWhole([lit]));
}

/** A `{"$regex": ...}` element, as the SDKs send for `containsAllStartingWith`. */
const isRegexElement = (value: unknown): boolean => isPlainObject(value) && typeof value.$regex === 'string';

/**
 * `$all`: the array holds every value; an empty list matches nothing (Mongo). Regexes may not be
 * mixed with other values: 107 with Parse Server's text (the list shown as JavaScript joins it).
 * Parse Server on PostgreSQL also refuses a `^\Q…\E` regex beside another regex; Backyard matches
 * each (docs/parse-differences.md).
 */
export const $all: FieldOperator = (ctx, field, value) => {
  const values = listOf(value, '$all');
  if (values.length === 0) return FALSE;
  if (values.some(isRegexElement) && !values.every(isRegexElement)) throw invalidJson(`All $all values must be of regex type or none: ${String(values)}`);
  return and(values.map((v) => allElement(ctx, field, v)));
};

/** `$containedBy`: the field is an array whose every element is one of the values ([] qualifies). */
export const $containedBy: FieldOperator = (ctx, field, value) => {
  if (!Array.isArray(value)) throw invalidJson('bad $containedBy: should be an array');
  const lits: Literal[] = value.map(parseLiteral);
  if (isColumn(field) || field.type === 'Relation') return FALSE;
  const d = ctx.options.dialect;
  const each = ctx.alias('je');
  const outside = not(oneOf(d, d.elementTarget(each), lits));
  return and([
    frag(d.typeIs(d.dataTarget(field.alias, field.path).typeAt(), ['array'])),
    frag(`NOT EXISTS (SELECT 1 FROM ${d.elements(field.alias, field.path, each)} WHERE ${outside.sql})`, ...outside.params),
  ]);
};

/**
 * `$text: {$search: {$term, $caseSensitive?, $diacriticSensitive?, $language?}}`: every term word
 * present. A malformed `$text` answers 107, as Parse Server does.
 */
export const $text: FieldOperator = (ctx, field, value) => {
  const search = isPlainObject(value) ? value.$search : undefined;
  if (!isPlainObject(value) || Object.keys(value).some((k) => k !== '$search') || !isPlainObject(search)) {
    throw invalidJson('bad $text: $search, should be an object such as {"$search": {"$term": ...}}');
  }
  const { $term, $caseSensitive = false, $diacriticSensitive = false, $language = 'none' } = search;
  const known = ['$term', '$caseSensitive', '$diacriticSensitive', '$language'];
  const unknown = Object.keys(search).find((k) => !known.includes(k));
  if (unknown !== undefined) throw invalidJson(`bad $text: unknown option ${unknown} in $search`);
  if (typeof $term !== 'string') throw invalidJson('bad $text: $term, should be a string');
  if (typeof $caseSensitive !== 'boolean' || typeof $diacriticSensitive !== 'boolean' || typeof $language !== 'string') {
    throw invalidJson('bad $text: $caseSensitive and $diacriticSensitive should be booleans, $language a string');
  }
  return anyOf(ctx, field, (t) => (t.kind === 'relation' ? FALSE : ctx.options.dialect.textSearch(t, $term, $caseSensitive, $diacriticSensitive)));
};

export const COMPARISON_OPERATORS = { $eq, $ne, $lt, $lte, $gt, $gte, $in, $nin, $exists, $all, $containedBy, $regex, $options, $text };
