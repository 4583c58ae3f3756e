/**
 * Query values in Parse's JSON form and the type-exact comparisons on them: the dialect gives each
 * literal an operand with a type guard (style.md, example 7), so that `$lt: "5"` never matches 4,
 * `$gt: 2` never matches "4" or an array, `true` never matches 1.
 */
import type { Dialect, Operand, SqlFragment, Target } from './dialect.js';
import type { GeoPoint, Literal } from './literals.js';
import type { ParseError } from '../errors.js';
import { FALSE, TRUE, and, frag, invalidQuery, isPlainObject, or } from './sql.js';

export type { GeoPoint, Literal } from './literals.js';

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** An ISO 8601 date as stored (`toISOString`, milliseconds and `Z`); throws 102 when not a date. */
export function normalizeIso(iso: unknown): string {
  const time = typeof iso === 'string' ? Date.parse(iso) : NaN;
  if (Number.isNaN(time)) throw invalidQuery(`Invalid date: ${JSON.stringify(iso)}`);
  return new Date(time).toISOString();
}

/**
 * `{"__type":"GeoPoint","latitude","longitude"}` in range; throws `fail(message)` otherwise (102 by
 * default; the geo operators pass 107, as Parse Server codes a malformed geo value).
 */
export function parseGeoPoint(value: unknown, fail: (message: string) => ParseError = invalidQuery): GeoPoint {
  if (!isPlainObject(value) || value.__type !== 'GeoPoint') throw fail('Expected a GeoPoint');
  const { latitude, longitude } = value;
  if (!isNumber(latitude) || !isNumber(longitude) || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
    throw fail('Invalid GeoPoint: latitude must be within [-90, 90] and longitude within [-180, 180]');
  }
  return { latitude, longitude };
}

/** Reads a query value in Parse JSON form; throws 102 for an unknown `__type` or an operator where a value belongs. */
export function parseLiteral(value: unknown): Literal {
  if (value === null) return { kind: 'null' };
  if (typeof value === 'boolean') return { kind: 'boolean', value };
  if (typeof value === 'string') return { kind: 'string', value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidQuery('Numbers must be finite');
    return { kind: 'number', value };
  }
  if (Array.isArray(value)) return { kind: 'json', json: JSON.stringify(value.map(checkJson)) };
  if (!isPlainObject(value)) throw invalidQuery(`Unsupported query value: ${String(value)}`);
  switch (value.__type) {
    case undefined:
      return { kind: 'json', json: JSON.stringify(checkJson(value)) };
    case 'Date':
      return { kind: 'date', iso: normalizeIso(value.iso) };
    case 'Pointer':
      // Parse Server matches a Pointer without className by objectId (the SDK sends those for relations).
      if ((value.className !== undefined && typeof value.className !== 'string') || typeof value.objectId !== 'string') {
        throw invalidQuery('A Pointer needs an objectId (and a className, if any, as a string)');
      }
      return { kind: 'pointer', className: value.className, objectId: value.objectId };
    case 'File':
      if (typeof value.name !== 'string') throw invalidQuery('A File needs a name');
      return { kind: 'file', name: value.name };
    case 'GeoPoint': {
      const p = parseGeoPoint(value);
      return { kind: 'json', json: JSON.stringify({ __type: 'GeoPoint', latitude: p.latitude, longitude: p.longitude }) };
    }
    case 'Polygon':
      return polygonForms(value)?.[0] ?? { kind: 'json', json: JSON.stringify(checkJson(value)) };
    case 'Bytes':
      return { kind: 'json', json: JSON.stringify(checkJson(value)) };
    default:
      throw invalidQuery(`Unsupported __type in a query value: ${JSON.stringify(value.__type)}`);
  }
}

/**
 * The forms a Polygon value may be stored in, as Literals: the ring closed (objects' values.ts
 * repeats the first vertex on save), from each vertex and in both directions, so that equality finds
 * the same polygon however its path was given, as Parse Server's PostgreSQL `~=` does. A value that is
 * no list of 3 or more number pairs gives undefined (it is compared as given and equals no stored
 * Polygon); rings of more than MAX_RING_FORMS vertices are compared only as given, closed.
 */
export function polygonForms(value: unknown): Literal[] | undefined {
  if (!isPlainObject(value) || value.__type !== 'Polygon') return undefined;
  const { coordinates } = value;
  const isPair = (p: unknown): p is [number, number] => Array.isArray(p) && p.length === 2 && p.every((n) => typeof n === 'number' && Number.isFinite(n));
  if (!Array.isArray(coordinates) || coordinates.length < 3 || !coordinates.every(isPair)) return undefined;
  const ring = coordinates.map(([latitude, longitude]) => [latitude, longitude] as const);
  const [first, last] = [ring[0]!, ring.at(-1)!];
  const open = first[0] === last[0] && first[1] === last[1] ? ring.slice(0, -1) : ring;
  const closed = (vertices: ReadonlyArray<readonly [number, number]>) =>
    JSON.stringify({ __type: 'Polygon', coordinates: [...vertices, vertices[0]!].map(([a, b]) => [a, b]) });
  const forms = new Set([closed(open)]);
  if (open.length <= MAX_RING_FORMS) {
    for (const path of [open, [...open].reverse()]) {
      for (let i = 0; i < path.length; i++) forms.add(closed([...path.slice(i), ...path.slice(0, i)]));
    }
  }
  return [...forms].map((json) => ({ kind: 'json', json }));
}

/** Vertices up to which every rotation and direction of a Polygon is matched (2 forms per vertex). */
const MAX_RING_FORMS = 100;

/** Plain JSON without operator keys (`{"$gt": 1}` is not a value). */
function checkJson(value: unknown): unknown {
  if (Array.isArray(value)) value.forEach(checkJson);
  else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith('$')) throw invalidQuery(`Unexpected operator ${k} inside a value`);
      checkJson(v);
    }
  } else if (value !== null && !['string', 'number', 'boolean'].includes(typeof value)) throw invalidQuery('Invalid JSON value');
  return value;
}

/** A value usable with `$lt`/`$lte`/`$gt`/`$gte`: a number, a string or a Date. */
export function parseRangeLiteral(value: unknown, op: string): Literal {
  const lit = parseLiteral(value);
  if (lit.kind !== 'number' && lit.kind !== 'string' && lit.kind !== 'date') throw invalidQuery(`${op} needs a number, a string or a Date`);
  return lit;
}

/**
 * The operand of a column target: columns hold text in every adapter, objectId compared with strings,
 * createdAt/updatedAt with Dates (or ISO strings). Throws 102 for another literal.
 */
export function columnOperand(t: Target, lit: Literal): Operand {
  const expr = t.at();
  if (t.column === 'objectId') {
    if (lit.kind !== 'string') throw invalidQuery('objectId must be compared with a string');
    return { expr, param: lit.value, placeholder: '?', group: 'string' };
  }
  if (lit.kind === 'date') return { expr, param: lit.iso, placeholder: '?', group: 'date' };
  if (lit.kind === 'string') return { expr, param: normalizeIso(lit.value), placeholder: '?', group: 'date' };
  throw invalidQuery(`${t.column} must be compared with a Date`);
}

/** Equality with a literal on one target. */
export function equals(d: Dialect, t: Target, lit: Literal): SqlFragment {
  if (lit.kind === 'null') return d.isNull(t);
  const o = d.operand(t, lit);
  return o ? and([frag(`${o.expr} = ${o.placeholder}`, o.param), (!o.exact && o.guard) || TRUE]) : FALSE;
}

/** Membership in a list of literals, one `IN (...)` per kind of literal so that indexes still apply. */
export function oneOf(d: Dialect, t: Target, lits: readonly Literal[]): SqlFragment {
  const groups = new Map<string, Operand[]>();
  const nulls: SqlFragment[] = [];
  for (const lit of lits) {
    if (lit.kind === 'null') {
      nulls.splice(0, 1, d.isNull(t));
      continue;
    }
    const o = d.operand(t, lit);
    if (!o) continue;
    const list = groups.get(o.group) ?? [];
    if (!list.some((x) => x.param === o.param)) list.push(o);
    groups.set(o.group, list);
  }
  const parts: SqlFragment[] = [];
  for (const list of groups.values()) {
    const first = list[0]!;
    const test =
      list.length === 1
        ? frag(`${first.expr} = ${first.placeholder}`, first.param)
        : frag(`${first.expr} IN (${list.map((o) => o.placeholder).join(', ')})`, ...list.map((o) => o.param));
    parts.push(and([test, (!first.exact && first.guard) || TRUE]));
  }
  return or([...parts, ...nulls]);
}

/** An ordered comparison (`<`, `<=`, `>`, `>=`) with a number, string or Date of the same type. */
export function compares(d: Dialect, t: Target, op: '<' | '<=' | '>' | '>=', lit: Literal): SqlFragment {
  if (lit.kind === 'null') return FALSE;
  const o = d.operand(t, lit);
  return o ? and([frag(d.compare(o, op), o.param), o.guard ?? TRUE]) : FALSE;
}

/** Whether a whole-value comparison is needed on an array field (null and array/object literals). */
export const needsWhole = (lits: readonly Literal[]) => lits.some((l) => l.kind === 'null' || l.kind === 'json');
