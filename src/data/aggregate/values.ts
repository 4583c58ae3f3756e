/**
 * Values as the aggregation stages see them: objects in Parse's JSON form (Dates as
 * `{__type: "Date", iso}`, Pointers as `{__type: "Pointer", className, objectId}`), compared and
 * ordered as MongoDB orders BSON values, since MongoDB-backed Parse Server is what the pipeline mimics.
 */
import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';

export type Doc = Record<string, unknown>;
export { isPlainObject };

/** The error of every malformed stage, operator or operand (Parse's INVALID_QUERY, 102). */
export const invalid = (message: string) => new ParseError(ParseCode.INVALID_QUERY, message);

/** A field path: names joined by dots (`address.city`); `_id` stands for `objectId`. */
export const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

export interface DateValue {
  __type: 'Date';
  iso: string;
}

/** Whether a value is a Date in Parse's JSON form. */
export const isDate = (v: unknown): v is DateValue => isPlainObject(v) && v.__type === 'Date' && typeof v.iso === 'string';
/** The Date (Parse's JSON form) of an instant in ms since the epoch. */
export const dateValue = (ms: number): DateValue => ({ __type: 'Date', iso: new Date(ms).toISOString() });

/** JSON with sorted keys: equal values give equal text (group keys, `$addToSet`, `distinct`). */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));

/** Names a pipeline may use for the columns, as MongoDB-backed Parse Server stores them. */
const STORED_NAMES: Record<string, string> = { _id: 'objectId', _created_at: 'createdAt', _updated_at: 'updatedAt' };

/**
 * A field path's parts, with a leading `_id`, `_created_at` or `_updated_at` read as `objectId`,
 * `createdAt` or `updatedAt` (the names Parse answers with; Parse Server takes both in a pipeline).
 */
export const pathParts = (path: string): string[] => {
  const parts = path.split('.');
  parts[0] = STORED_NAMES[parts[0]!] ?? parts[0]!;
  return parts;
};

/** A field path's value; a path through an array maps over its elements (Mongo's rule). */
export function getPath(doc: unknown, path: string | readonly string[]): unknown {
  const walk = (value: unknown, parts: readonly string[], at: number): unknown => {
    if (at === parts.length) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, parts, at)).filter((v) => v !== undefined);
    if (!isPlainObject(value)) return undefined;
    return walk(value[parts[at]!], parts, at + 1);
  };
  return walk(doc, typeof path === 'string' ? pathParts(path) : path, 0);
}

/** Sets a dotted path's value, creating the objects on the way (a non-object there is replaced). */
export function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = doc;
  for (const part of parts.slice(0, -1)) at = (isPlainObject(at[part]) ? at[part] : (at[part] = {})) as Doc;
  at[parts.at(-1)!] = value;
}

/** Removes a dotted path's field when the objects on the way exist. */
export function deletePath(doc: Doc, path: string): void {
  const parts = path.split('.');
  let at: unknown = doc;
  for (const part of parts.slice(0, -1)) at = isPlainObject(at) ? at[part] : undefined;
  if (isPlainObject(at)) delete at[parts.at(-1)!];
}

/** Mongo's order of types: null < numbers < strings < objects < arrays < booleans < dates. */
export const rank = (v: unknown): number =>
  v === undefined || v === null ? 1 : typeof v === 'number' ? 2 : typeof v === 'string' ? 3 : isDate(v) ? 9 : Array.isArray(v) ? 5 : typeof v === 'boolean' ? 8 : 4;

/** Compares two values as Mongo orders them (Dates by instant, other objects by their JSON). */
export function compare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return 0;
  if (ra === 2) return (a as number) - (b as number);
  if (ra === 8) return Number(a) - Number(b);
  const [x, y] = ra === 3 ? [a as string, b as string] : ra === 9 ? [(a as DateValue).iso, (b as DateValue).iso] : [canonical(a), canonical(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether two values are equal as Mongo compares them, a missing value being null. */
export const same = (a: unknown, b: unknown) => canonical(a ?? null) === canonical(b ?? null);

/** The name of a value's type in messages, as Mongo names BSON types. */
export const typeName = (v: unknown): string =>
  v === null || v === undefined ? 'missing' : Array.isArray(v) ? 'array' : isDate(v) ? 'date' : typeof v === 'number' ? 'double' : typeof v === 'object' ? 'object' : typeof v;

/** The columns createdAt and updatedAt are dates inside a pipeline (Mongo's `_created_at`), ISO strings outside. */
const DATE_COLUMNS = ['createdAt', 'updatedAt'] as const;

/** An object as the stages see it: createdAt and updatedAt as Dates, so that date operators and comparisons take them. */
export function toStageDoc(object: Doc): Doc {
  for (const key of DATE_COLUMNS) if (typeof object[key] === 'string') object[key] = { __type: 'Date', iso: object[key] };
  return object;
}

/** A result as Parse answers it: top-level createdAt and updatedAt as ISO strings again. */
export function fromStageDoc(doc: Doc): Doc {
  for (const key of DATE_COLUMNS) if (isDate(doc[key])) doc[key] = (doc[key] as DateValue).iso;
  return doc;
}

/** Equality as `$match` tests it: a missing field equals null; an array matches when one element does. */
export function equals(value: unknown, target: unknown): boolean {
  if (Array.isArray(value) && !Array.isArray(target)) return value.some((v) => same(v, target));
  return same(value, target);
}
