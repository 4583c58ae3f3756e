import { ParseCode, ParseError } from '../errors.js';
import { compileRegex, regexMatches } from '../query/regex.js';

/**
 * Whether one object matches a subscription's `where`, in memory, as Parse Server's LiveQuery tests
 * each saved object (its QueryTools.matchesQuery): the object and the constraints are in Parse's
 * REST encoding (Dates as `{__type: "Date", iso}`, Pointers by className and objectId). The
 * operators are those an object alone can answer; `checkLiveWhere` refuses the others at subscribe.
 */

type Json = Record<string, unknown>;

/** The operators a LiveQuery `where` may use (Parse Server's LiveQuery supports the same set). */
const SUPPORTED = new Set(['$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$regex', '$options', '$all', '$containedBy']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks that a `where` uses only what LiveQuery can match in memory.
 * @throws ParseError 102 (INVALID_QUERY) naming the first operator it cannot, or a malformed part.
 */
export function checkLiveWhere(where: unknown, path = 'where'): void {
  if (!isObject(where)) throw new ParseError(ParseCode.INVALID_QUERY, `${path} must be a JSON object of constraints.`);
  for (const [key, constraint] of Object.entries(where)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(constraint) || constraint.length === 0) throw new ParseError(ParseCode.INVALID_QUERY, `${path}.${key} must be a non-empty array of constraints.`);
      constraint.forEach((part, i) => checkLiveWhere(part, `${path}.${key}[${i}]`));
      continue;
    }
    if (key.startsWith('$')) throw new ParseError(ParseCode.INVALID_QUERY, `LiveQuery does not support ${key} (${path}); subscribe with field constraints, $and, $or or $nor.`);
    if (!isObject(constraint) || constraint.__type !== undefined) continue;
    for (const op of Object.keys(constraint)) {
      if (!op.startsWith('$')) continue;
      if (!SUPPORTED.has(op)) throw new ParseError(ParseCode.INVALID_QUERY, `LiveQuery does not support ${op} (${path}.${key}); it matches each saved object alone, without other objects or geometry.`);
    }
    if ('$regex' in constraint) {
      // The same dialect and linear-time engine as a query's $regex (query/regex.ts): a subscriber's
      // pattern runs against every saved object of the class, on the event loop.
      const { $regex, $options = '' } = constraint;
      if (typeof $regex !== 'string') throw new ParseError(ParseCode.INVALID_QUERY, `${path}.${key}.$regex must be a string.`);
      if (typeof $options !== 'string') throw new ParseError(ParseCode.INVALID_QUERY, `${path}.${key}.$options must be a string of i, m, s and x.`);
      compileRegex($regex, $options, `${path}.${key}.$regex`);
    }
  }
}

/** Whether `object` (REST encoded, with objectId, createdAt and updatedAt) matches `where`. */
export function matchesWhere(object: Json, where: Json): boolean {
  for (const [key, constraint] of Object.entries(where)) {
    if (key === '$and') {
      if (!(constraint as Json[]).every((part) => matchesWhere(object, part))) return false;
    } else if (key === '$or') {
      if (!(constraint as Json[]).some((part) => matchesWhere(object, part))) return false;
    } else if (key === '$nor') {
      if ((constraint as Json[]).some((part) => matchesWhere(object, part))) return false;
    } else if (!matchesField(valueAt(object, key), constraint)) return false;
  }
  return true;
}

/** The value at a dotted key (`address.city`). */
function valueAt(object: Json, key: string): unknown {
  let node: unknown = object;
  for (const part of key.split('.')) {
    if (!isObject(node)) return undefined;
    node = node[part];
  }
  return node;
}

function matchesField(value: unknown, constraint: unknown): boolean {
  if (!isObject(constraint) || constraint.__type !== undefined || !Object.keys(constraint).some((k) => k.startsWith('$'))) return equalsOrContains(value, constraint);
  for (const [op, operand] of Object.entries(constraint)) {
    switch (op) {
      case '$eq':
        if (!equalsOrContains(value, operand)) return false;
        break;
      case '$ne':
        if (equalsOrContains(value, operand)) return false;
        break;
      case '$lt':
      case '$lte':
      case '$gt':
      case '$gte': {
        const order = compare(value, operand);
        if (order === undefined) return false;
        if (op === '$lt' ? order >= 0 : op === '$lte' ? order > 0 : op === '$gt' ? order <= 0 : order < 0) return false;
        break;
      }
      case '$in':
        if (!Array.isArray(operand) || !operand.some((o) => equalsOrContains(value, o))) return false;
        break;
      case '$nin':
        if (Array.isArray(operand) && operand.some((o) => equalsOrContains(value, o))) return false;
        break;
      case '$exists':
        if ((value !== undefined && value !== null) !== Boolean(operand)) return false;
        break;
      case '$regex':
        // checkLiveWhere compiled the pattern and its options at subscribe.
        if (!regexMatches(String(operand), typeof constraint.$options === 'string' ? constraint.$options : '', value)) return false;
        break;
      case '$all':
        if (!Array.isArray(value) || !Array.isArray(operand) || !operand.every((o) => value.some((v) => same(v, o)))) return false;
        break;
      case '$containedBy':
        if (!Array.isArray(value) || !Array.isArray(operand) || !value.every((v) => operand.some((o) => same(v, o)))) return false;
        break;
      default:
        break; // $options goes with $regex
    }
  }
  return true;
}

/** Equality, or for an array field, that the array holds the value (Parse's equality on arrays). */
function equalsOrContains(value: unknown, expected: unknown): boolean {
  if (Array.isArray(value) && !Array.isArray(expected)) return value.some((v) => same(v, expected));
  return same(value, expected);
}

/** A value as compared: Dates by their time, Pointers by class and id, the rest as JSON. */
function comparable(value: unknown): unknown {
  if (isObject(value)) {
    if (value.__type === 'Date' && typeof value.iso === 'string') return { date: Date.parse(value.iso) };
    if (value.__type === 'Pointer' || value.__type === 'Object') return { pointer: `${String(value.className)}$${String(value.objectId)}` };
  }
  return value;
}

function same(a: unknown, b: unknown): boolean {
  if (a === undefined) return b === undefined || b === null;
  return canonical(comparable(a)) === canonical(comparable(b));
}

/** JSON with object keys sorted, so that key order does not matter. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'undefined';
}

/** The order of two numbers, strings or Dates (ISO strings of createdAt/updatedAt count as Dates); undefined across types. */
function compare(value: unknown, operand: unknown): number | undefined {
  const a = comparable(value);
  const b = comparable(operand);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const time = (v: unknown) => (isObject(v) && typeof v.date === 'number' ? v.date : typeof v === 'string' && isIsoDate(v) ? Date.parse(v) : undefined);
  if (isObject(b) && typeof b.date === 'number') {
    const t = time(a);
    return t === undefined ? undefined : t - b.date;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

const isIsoDate = (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s));
