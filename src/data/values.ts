import { ParseCode, ParseError } from './errors.js';
import { CLASS_NAME, type FieldType, type FieldTypeName } from './types.js';

/**
 * Parse's JSON forms of values (Parse REST guide, "Data Types"): the type a value teaches the schema,
 * and the checks that turn a malformed value into a 111 error instead of storing it.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const incorrect = (field: string, what: string) => new ParseError(ParseCode.INCORRECT_TYPE, `${field}: ${what}`);

/** ISO 8601 date-time, as Parse writes it (`2026-11-21T09:30:00.000Z`); offsets are accepted too. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Normalises a Date's iso to UTC with milliseconds, or throws 111. */
export function normaliseIso(field: string, iso: unknown): string {
  if (typeof iso !== 'string' || !ISO_DATE.test(iso) || Number.isNaN(Date.parse(iso))) {
    throw incorrect(field, `invalid Date; expected {"__type":"Date","iso":"2026-01-31T12:00:00.000Z"}, got iso ${JSON.stringify(iso)}.`);
  }
  return new Date(iso).toISOString();
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Checks a GeoPoint's range (latitude -90..90, longitude -180..180). */
function checkGeoPoint(field: string, v: Record<string, unknown>): void {
  const { latitude, longitude } = v;
  if (!isFiniteNumber(latitude) || !isFiniteNumber(longitude)) throw incorrect(field, 'a GeoPoint needs numeric latitude and longitude.');
  if (latitude < -90 || latitude > 90) throw incorrect(field, `GeoPoint latitude ${latitude} is outside -90 to 90.`);
  if (longitude < -180 || longitude > 180) throw incorrect(field, `GeoPoint longitude ${longitude} is outside -180 to 180.`);
}

/**
 * A Polygon's coordinates as stored: `[latitude, longitude]` pairs (the JS SDK's `Parse.Polygon` order,
 * which the geo queries read too), each in range, the ring closed by repeating the first vertex when
 * the last differs, as Parse Server's PostgreSQL adapter does on save.
 * @throws ParseError 111 without coordinates or for a malformed or out-of-range pair; 107 for fewer
 *   than 3 pairs or fewer than 3 distinct vertices (Parse Server: 107, and a 500 for the latter).
 */
function closedRing(field: string, coordinates: unknown): number[][] {
  if (coordinates === undefined) throw incorrect(field, 'a Polygon needs coordinates: at least 3 [latitude, longitude] pairs.');
  if (!Array.isArray(coordinates) || coordinates.length < 3) {
    throw new ParseError(ParseCode.INVALID_JSON, `${field}: a Polygon needs at least 3 [latitude, longitude] pairs in coordinates.`);
  }
  const ring = coordinates.map((point, i) => {
    if (!Array.isArray(point) || point.length !== 2 || !point.every(isFiniteNumber)) {
      throw incorrect(field, `Polygon point ${i} must be a [latitude, longitude] pair of numbers, got ${JSON.stringify(point)}.`);
    }
    const [latitude, longitude] = point as [number, number];
    if (latitude < -90 || latitude > 90 || longitude < -180 || longitude > 180) {
      throw incorrect(field, `Polygon point ${i} [${latitude}, ${longitude}] is outside latitude -90 to 90 or longitude -180 to 180.`);
    }
    return [latitude, longitude];
  });
  const [first, last] = [ring[0]!, ring[ring.length - 1]!];
  if (first[0] !== last[0] || first[1] !== last[1]) ring.push([...first]);
  if (new Set(ring.map(([lat, lng]) => `${lat},${lng}`)).size < 3) {
    throw new ParseError(ParseCode.INVALID_JSON, `${field}: a Polygon needs at least 3 different vertices.`);
  }
  return ring;
}

/**
 * The schema type a (non-null, non-operation) value teaches, after checking its form, and the value
 * to store (Dates normalised, Files stripped to name and url).
 * @throws ParseError 111 for malformed typed values, 106 for a pointer to a class with a bad name.
 */
export function encodeValue(field: string, value: unknown): { type: FieldType; stored: Json } {
  if (typeof value === 'string') return { type: { type: 'String' }, stored: value };
  if (typeof value === 'boolean') return { type: { type: 'Boolean' }, stored: value };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw incorrect(field, 'numbers must be finite.');
    return { type: { type: 'Number' }, stored: value };
  }
  if (Array.isArray(value)) return { type: { type: 'Array' }, stored: value.map((v, i) => encodeNested(`${field}.${i}`, v)) };
  if (!isPlainObject(value)) throw incorrect(field, `unsupported value ${JSON.stringify(value)}.`);
  switch (value.__type) {
    case undefined:
      return { type: { type: 'Object' }, stored: encodeNested(field, value) };
    case 'Date':
      return { type: { type: 'Date' }, stored: { __type: 'Date', iso: normaliseIso(field, value.iso) } };
    case 'Pointer': {
      const { className, objectId } = value;
      if (typeof className !== 'string' || !CLASS_NAME.test(className.replace(/^_/, ''))) {
        throw incorrect(field, 'a Pointer needs a valid className.');
      }
      if (typeof objectId !== 'string' || objectId === '') throw incorrect(field, 'a Pointer needs an objectId string.');
      return { type: { type: 'Pointer', targetClass: className }, stored: { __type: 'Pointer', className, objectId } };
    }
    case 'Relation': {
      if (typeof value.className !== 'string') throw incorrect(field, 'a Relation needs a className.');
      return { type: { type: 'Relation', targetClass: value.className }, stored: null };
    }
    case 'File': {
      if (typeof value.name !== 'string' || value.name === '') throw incorrect(field, 'a File needs a name.');
      const stored: Record<string, Json> = { __type: 'File', name: value.name };
      if (typeof value.url === 'string') stored.url = value.url;
      return { type: { type: 'File' }, stored };
    }
    case 'GeoPoint':
      checkGeoPoint(field, value);
      return { type: { type: 'GeoPoint' }, stored: { __type: 'GeoPoint', latitude: value.latitude as number, longitude: value.longitude as number } };
    case 'Polygon':
      return { type: { type: 'Polygon' }, stored: { __type: 'Polygon', coordinates: closedRing(field, value.coordinates) } };
    case 'Bytes': {
      if (typeof value.base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value.base64)) throw incorrect(field, 'Bytes need a base64 string.');
      return { type: { type: 'Bytes' }, stored: { __type: 'Bytes', base64: value.base64 } };
    }
    default:
      throw incorrect(field, `unknown __type ${JSON.stringify(value.__type)}.`);
  }
}

/**
 * A value inside an Array or Object field, checked and encoded as stored: typed values are checked,
 * keys may hold neither `$` nor `.` (Parse Server's rule).
 * @throws ParseError 111 for a malformed typed value, 121 for a bad key or a nested operation.
 */
export function encodeNested(path: string, value: unknown): Json {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map((v, i) => encodeNested(`${path}.${i}`, v));
  if (isPlainObject(value)) {
    if (value.__type !== undefined) return encodeValue(path, value).stored;
    if ('__op' in value) throw new ParseError(ParseCode.INVALID_NESTED_KEY, `${path}: operations cannot be nested inside values.`);
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) {
      // Parse Server's rule and text (PostgresStorageAdapter validateKeys, MongoTransform): `$` anywhere in the key.
      if (k.includes('$') || k.includes('.')) throw new ParseError(ParseCode.INVALID_NESTED_KEY, "Nested keys should not contain the '$' or '.' characters");
      out[k] = encodeNested(`${path}.${k}`, v);
    }
    return out;
  }
  return encodeValue(path, value).stored;
}

/**
 * Checks an ACL's form: `{ "<principal>": { "read"?: boolean, "write"?: boolean } }` where a
 * principal is `*`, a user's objectId or `role:<name>`.
 * @throws ParseError 111 for any other shape (malformed values are 111 errors).
 */
export function checkAcl(acl: unknown): Record<string, { read?: boolean; write?: boolean }> {
  if (!isPlainObject(acl)) throw new ParseError(ParseCode.INCORRECT_TYPE, 'ACL must be an object of principals, e.g. {"*":{"read":true}}.');
  const out: Record<string, { read?: boolean; write?: boolean }> = {};
  for (const [principal, perms] of Object.entries(acl)) {
    if (!isPlainObject(perms)) throw new ParseError(ParseCode.INCORRECT_TYPE, `ACL entry "${principal}" must be an object like {"read":true}.`);
    const entry: { read?: boolean; write?: boolean } = {};
    for (const [perm, allowed] of Object.entries(perms)) {
      if ((perm !== 'read' && perm !== 'write') || typeof allowed !== 'boolean') {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `ACL entry "${principal}" may only hold read and write booleans, got ${JSON.stringify(perms)}.`);
      }
      if (allowed) entry[perm] = true;
    }
    if (principal.startsWith('role:') && principal.length === 5) throw new ParseError(ParseCode.INCORRECT_TYPE, 'ACL role entries need a role name.');
    if (entry.read || entry.write) out[principal] = entry;
  }
  return out;
}

/** Whether a stored value has the schema type `expected` (null fits every type). */
export function fitsType(expected: FieldType, actual: FieldType): boolean {
  if (expected.type !== actual.type) return false;
  if ((expected.type === 'Pointer' || expected.type === 'Relation') && expected.targetClass !== actual.targetClass) return false;
  return true;
}

export const describeType = (t: FieldType): string => (t.targetClass ? `${t.type}<${t.targetClass}>` : t.type);

export type { Json, FieldTypeName };
export { isPlainObject };
