/**
 * `$match`. Its conditions first go through `matchToWhere`, which reads them as MongoDB-backed Parse
 * Server does (its `_parseAggregateArgs`): `_id` names `objectId`, a string given for a Date field is
 * that date (a JS `Date` in a pipeline reaches the server as its ISO string) and a string given for a
 * Pointer field is the objectId of its target class. Leading `$match` stages then run in SQL through
 * the where compiler; later ones (over `$group` or `$project` output) through `compileMatch`.
 */
import type { FieldType } from '../types.js';
import { compare, equals, invalid, isPlainObject, PATH, getPath, pathParts, rank, type Doc } from './values.js';

type Fields = Readonly<Record<string, FieldType>> | undefined;

const LOGICAL = new Set(['$and', '$or', '$nor']);
/** Operators whose argument is a value (or a list of values) of the field. */
const VALUE_OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A value of a Date or Pointer field as given in a condition, in Parse's JSON form. */
function typedValue(type: FieldType, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (type.type === 'Date' && ISO_DATE.test(value) && !Number.isNaN(Date.parse(value))) return { __type: 'Date', iso: new Date(value).toISOString() };
  if (type.type === 'Pointer' && type.targetClass) return { __type: 'Pointer', className: type.targetClass, objectId: value };
  return value;
}

/** A field's condition with its values typed: the bare value, or the values under `$eq`, `$in`, `$gt`... */
function typedCondition(type: FieldType, cond: unknown): unknown {
  const typed = (v: unknown) => (Array.isArray(v) ? v.map((x) => typedValue(type, x)) : typedValue(type, v));
  if (!isPlainObject(cond) || !Object.keys(cond).some((k) => k.startsWith('$'))) return typedValue(type, cond);
  return Object.fromEntries(Object.entries(cond).map(([op, arg]) => [op, VALUE_OPERATORS.has(op) ? typed(arg) : arg]));
}

/**
 * A `$match` (or `$geoNear.query`) as a Parse `where` of the class whose fields are `fields`.
 * @throws ParseError 102 when the conditions are not an object.
 */
export function matchToWhere(fields: Fields, cond: unknown, where = '$match'): Doc {
  if (!isPlainObject(cond)) throw invalid(`${where} needs an object of conditions.`);
  const out: Doc = {};
  const also: Doc[] = [];
  for (const [key, value] of Object.entries(cond)) {
    if (LOGICAL.has(key)) {
      out[key] = Array.isArray(value) ? value.map((sub) => matchToWhere(fields, sub, where)) : value;
      continue;
    }
    const name = key === '_id' ? 'objectId' : key;
    const type = fields?.[name];
    const typed = type && (type.type === 'Date' || type.type === 'Pointer') ? typedCondition(type, value) : value;
    if (name in out) also.push({ [name]: typed });
    else out[name] = typed;
  }
  return also.length ? { $and: [out, ...also] } : out;
}

type Test = (doc: Doc) => boolean;

const list = (op: string, arg: unknown): unknown[] => {
  if (!Array.isArray(arg)) throw invalid(`$match: ${op} needs an array.`);
  return arg;
};

/** A comparison matches values of the same type only (Mongo's type bracketing); on an array, any element. */
const comparison = (test: (c: number) => boolean) => (arg: unknown) => (value: unknown) => {
  const one = (v: unknown) => v !== undefined && v !== null && rank(v) === rank(arg) && test(compare(v, arg));
  return Array.isArray(value) && !Array.isArray(arg) ? value.some(one) : one(value);
};

const OPERATORS: Record<string, (arg: unknown, op: string) => (value: unknown) => boolean> = {
  $eq: (a) => (v) => equals(v, a),
  $ne: (a) => (v) => !equals(v, a),
  $gt: comparison((c) => c > 0),
  $gte: comparison((c) => c >= 0),
  $lt: comparison((c) => c < 0),
  $lte: comparison((c) => c <= 0),
  $in: (a, op) => {
    const targets = list(op, a);
    return (v) => targets.some((t) => equals(v, t));
  },
  $nin: (a, op) => {
    const targets = list(op, a);
    return (v) => !targets.some((t) => equals(v, t));
  },
  $exists: (a) => (v) => (v !== undefined) === Boolean(a),
};

function compileField(key: string, cond: unknown): Test {
  if (!PATH.test(key)) throw invalid(`$match: ${key} is not a field name.`);
  const parts = pathParts(key);
  if (isPlainObject(cond) && Object.keys(cond).length > 0 && Object.keys(cond).every((k) => k.startsWith('$'))) {
    const tests = Object.entries(cond).map(([op, arg]) => {
      const operator = OPERATORS[op];
      if (!operator) throw invalid(`$match after the first stages supports ${Object.keys(OPERATORS).join(', ')}, $and, $or and $nor; not ${op}.`);
      return operator(arg, op);
    });
    return (doc) => {
      const value = getPath(doc, parts);
      return tests.every((t) => t(value));
    };
  }
  return (doc) => equals(getPath(doc, parts), cond);
}

/**
 * Compiles a `$match` (already through matchToWhere) over computed documents, where SQL cannot reach:
 * equality (a missing field equals null; an array matches when one element does), `$eq`, `$ne`, `$gt`,
 * `$gte`, `$lt`, `$lte`, `$in`, `$nin`, `$exists`, `$and`, `$or`, `$nor`.
 * @throws ParseError 102 for another operator or a malformed condition.
 */
export function compileMatch(cond: unknown): Test {
  if (!isPlainObject(cond)) throw invalid('$match needs an object of conditions.');
  const tests = Object.entries(cond).map(([key, c]): Test => {
    if (!LOGICAL.has(key)) return compileField(key, c);
    if (!Array.isArray(c) || c.length === 0) throw invalid(`$match: ${key} needs a non-empty array of conditions.`);
    const subs = c.map(compileMatch);
    if (key === '$and') return (doc) => subs.every((s) => s(doc));
    if (key === '$or') return (doc) => subs.some((s) => s(doc));
    return (doc) => !subs.some((s) => s(doc));
  });
  return (doc) => tests.every((t) => t(doc));
}
