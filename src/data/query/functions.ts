/**
 * The deterministic SQL functions the compiled queries call (names in `FN`, sql.ts). Register them on
 * every connection that runs compiled SQL.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { FN } from './sql.js';
import { textMatches, toRegExp } from './pattern.js';

type Database = BetterSqlite3.Database;

/** Radius of the earth Parse uses to turn kilometres and miles into radians. */
export const EARTH_RADIUS_KM = 6371;
export const EARTH_RADIUS_MILES = 3958.8;

const CACHE_LIMIT = 500;

/** A small memo that forgets everything when full (patterns and polygons are few and repeat). */
function memo<T>(make: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      value = make(key);
      cache.set(key, value);
    }
    return value;
  };
}

const regexFor = memo((key) => {
  const cut = key.indexOf('/');
  return toRegExp(key.slice(cut + 1), key.slice(0, cut));
});

/** Whether `value` (a string) matches a Parse `$regex` with `$options` (i, m, s, x). */
export function regexpMatches(pattern: string, options: string, value: unknown): boolean {
  return typeof value === 'string' && regexFor(`${options}/${pattern}`).test(value);
}

const toRadians = (degrees: number) => (degrees * Math.PI) / 180;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Great-circle distance in radians between two points given in degrees (haversine). */
export function geoDistance(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = toRadians(lat2 - lat1);
  const dLng = toRadians(lng2 - lng1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(lat1)) * Math.cos(toRadians(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(a)));
}

type Ring = [number, number][];

const ringFor = memo((json): Ring | null => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length < 3) return null;
  const ok = parsed.every((p) => Array.isArray(p) && p.length === 2 && isNumber(p[0]) && isNumber(p[1]));
  return ok ? (parsed as Ring) : null;
});

/**
 * Whether a point lies in a polygon of `[latitude, longitude]` corners (Parse's Polygon form), edges
 * included; planar in degrees, as Mongo's legacy `$polygon`.
 */
export function pointInPolygon(lat: number, lng: number, ring: Ring): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [yi, xi] = ring[i]!;
    const [yj, xj] = ring[j]!;
    const cross = (xj - xi) * (lat - yi) - (yj - yi) * (lng - xi);
    const onEdge = Math.abs(cross) < 1e-12 && lng >= Math.min(xi, xj) && lng <= Math.max(xi, xj) && lat >= Math.min(yi, yj) && lat <= Math.max(yi, yj);
    if (onEdge) return true;
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * Registers on a better-sqlite3 connection:
 * - `parse_regexp(pattern, options, value)`: 1 when the string `value` matches (compiled RegExps cached);
 * - `parse_text(value, term, caseSensitive, diacriticSensitive)`: 1 when `value` holds every term word;
 * - `parse_geo_distance(lat1, lng1, lat2, lng2)`: radians, NULL unless all four are numbers;
 * - `parse_geo_in_polygon(lat, lng, ringJson)`: 1 when inside or on the edge, NULL for a bad ring.
 */
export function registerQueryFunctions(db: Database): void {
  const deterministic = { deterministic: true } as const;
  db.function(FN.regexp, deterministic, (pattern: unknown, options: unknown, value: unknown) =>
    typeof pattern === 'string' && typeof options === 'string' && regexpMatches(pattern, options, value) ? 1 : 0,
  );
  db.function(FN.text, deterministic, (value: unknown, term: unknown, caseSensitive: unknown, diacriticSensitive: unknown) =>
    typeof term === 'string' && textMatches(value, term, caseSensitive === 1, diacriticSensitive === 1) ? 1 : 0,
  );
  db.function(FN.distance, deterministic, (lat1: unknown, lng1: unknown, lat2: unknown, lng2: unknown) =>
    isNumber(lat1) && isNumber(lng1) && isNumber(lat2) && isNumber(lng2) ? geoDistance(lat1, lng1, lat2, lng2) : null,
  );
  db.function(FN.inPolygon, deterministic, (lat: unknown, lng: unknown, ring: unknown) => {
    const corners = typeof ring === 'string' ? ringFor(ring) : null;
    if (!corners || !isNumber(lat) || !isNumber(lng)) return null;
    return pointInPolygon(lat, lng, corners) ? 1 : 0;
  });
}
