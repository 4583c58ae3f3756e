/**
 * Query semantics in JavaScript that a database may lack: great-circle distances and
 * point-in-polygon (Parse's `$regex` is regex.ts's). The SQLite adapter registers them as SQL
 * functions (storage/sqlite/functions.ts); aggregation's `$geoNear` uses them directly.
 */

/** Radius of the earth Parse uses to turn kilometres and miles into radians. */
export const EARTH_RADIUS_KM = 6371;
export const EARTH_RADIUS_MILES = 3958.8;

const CACHE_LIMIT = 500;

/** A small memo that forgets everything when full (polygons are few and repeat). */
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

const toRadians = (degrees: number) => (degrees * Math.PI) / 180;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Great-circle distance in radians between two points given in degrees (haversine). */
export function geoDistance(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = toRadians(lat2 - lat1);
  const dLng = toRadians(lng2 - lng1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(lat1)) * Math.cos(toRadians(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(a)));
}

export type Ring = [number, number][];

/** The corners of a polygon given as JSON text (`[[lat, lng], ...]`, three at least), or null; cached. */
export const ringFor = memo((json): Ring | null => {
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
