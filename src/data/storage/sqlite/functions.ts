/**
 * The deterministic SQL functions SQLite's compiled queries call (sqlite/dialect.ts). Registered on
 * every connection that runs compiled SQL.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { geoDistance, pointInPolygon, ringFor } from '../../query/functions.js';
import { textMatches } from '../../query/pattern.js';
import { regexMatches } from '../../query/regex.js';

type Database = BetterSqlite3.Database;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Names of the SQL functions `registerQueryFunctions` installs. */
export const FN = {
  regexp: 'parse_regexp',
  text: 'parse_text',
  distance: 'parse_geo_distance',
  inPolygon: 'parse_geo_in_polygon',
} as const;

/**
 * Registers on a better-sqlite3 connection:
 * - `parse_regexp(pattern, options, value)`: 1 when the string `value` matches, in linear time (query/regex.ts);
 * - `parse_text(value, term, caseSensitive, diacriticSensitive)`: 1 when `value` holds every term word;
 * - `parse_geo_distance(lat1, lng1, lat2, lng2)`: radians, NULL unless all four are numbers;
 * - `parse_geo_in_polygon(lat, lng, ringJson)`: 1 when inside or on the edge, NULL for a bad ring.
 */
export function registerQueryFunctions(db: Database): void {
  const deterministic = { deterministic: true } as const;
  db.function(FN.regexp, deterministic, (pattern: unknown, options: unknown, value: unknown) =>
    typeof pattern === 'string' && typeof options === 'string' && regexMatches(pattern, options, value) ? 1 : 0,
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
