/**
 * Geo operators of Parse's query language (REST guide, "Geo Queries"): `$nearSphere` with
 * `$maxDistance`/`$maxDistanceInRadians`/`$maxDistanceInKilometers`/`$maxDistanceInMiles`,
 * `$within: {$box: [southwest, northeast]}`, `$geoWithin: {$polygon}` / `{$centerSphere}` on GeoPoint
 * fields and `$geoIntersects: {$point}` on Polygon fields. Distances are great-circle radians (earth
 * radius 6371 km, 3958.8 mi); polygons are planar in degrees, edges included. A malformed geo value
 * answers 107, as Parse Server codes them ("bad $geoWithin value; ..."); a misplaced operator 102.
 */
import type { Dialect, SqlFragment, Target } from './dialect.js';
import { EARTH_RADIUS_KM, EARTH_RADIUS_MILES } from './functions.js';
import type { FieldOperator } from './operators.js';
import { FALSE, TRUE, and, anyOf, frag, invalidJson, invalidQuery, isPlainObject } from './sql.js';
import { parseGeoPoint, type GeoPoint } from './values.js';

/** A GeoPoint of a geo operator; 107 when malformed or out of range. */
const geoPoint = (value: unknown): GeoPoint => parseGeoPoint(value, invalidJson);

const MAX_DISTANCE: Record<string, number> = {
  $maxDistance: 1,
  $maxDistanceInRadians: 1,
  $maxDistanceInKilometers: EARTH_RADIUS_KM,
  $maxDistanceInMiles: EARTH_RADIUS_MILES,
};

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A target that holds a GeoPoint (other values, and relations, never match). */
const isGeoPoint = (t: Target): SqlFragment => (t.kind === 'data' || t.kind === 'element' ? frag(`${t.textAt(['__type'])} = 'GeoPoint'`) : FALSE);

/** SQL distance in radians from the GeoPoint at `t` to `p`. */
export const distanceTo = (d: Dialect, t: Target, p: GeoPoint): SqlFragment => d.distance(t, p);

/** The radius of a `$nearSphere` in radians, or undefined; throws 102 for two radii or a bad one. */
function maxDistance(ops: Readonly<Record<string, unknown>>): number | undefined {
  const given = Object.keys(MAX_DISTANCE).filter((k) => k in ops);
  if (given.length > 1) throw invalidQuery(`Give only one of ${given.join(', ')}`);
  if (given.length === 0) return undefined;
  const value = ops[given[0]!];
  if (!isNumber(value) || value < 0) throw invalidJson(`${given[0]} needs a number ≥ 0`);
  return value / MAX_DISTANCE[given[0]!]!;
}

/** `$nearSphere: GeoPoint` (+ a max distance): a GeoPoint within the radius; sorting is nearSphereOrder's. */
export const $nearSphere: FieldOperator = (ctx, field, value, ops) => {
  const point = geoPoint(value);
  const max = maxDistance(ops);
  return anyOf(ctx, field, (t) => {
    if (max === undefined) return isGeoPoint(t);
    const d = distanceTo(ctx.options.dialect, t, point);
    return and([isGeoPoint(t), frag(`${d.sql} <= ?`, ...d.params, max)]);
  });
};

/** `$maxDistance...` are read by `$nearSphere` and are an error on their own. */
export const $maxDistance: FieldOperator = (_ctx, _field, _value, ops) => {
  if (!('$nearSphere' in ops)) throw invalidQuery('$maxDistance needs $nearSphere');
  maxDistance(ops);
  return TRUE;
};

/** The single key of a geo operator's object, e.g. `$box` of `{$box: [...]}`. */
function onlyKey(value: unknown, op: string, allowed: readonly string[]): [string, unknown] {
  const entries = isPlainObject(value) ? Object.entries(value) : [];
  if (entries.length !== 1 || !allowed.includes(entries[0]![0])) throw invalidJson(`bad ${op} value; it needs one of ${allowed.join(', ')}`);
  return entries[0]!;
}

/** `$within: {$box: [southwest, northeast]}`; a box whose west edge is east of its east edge wraps the antimeridian. */
export const $within: FieldOperator = (ctx, field, value) => {
  const [, box] = onlyKey(value, '$within', ['$box']);
  if (!Array.isArray(box) || box.length !== 2) throw invalidJson('bad $within value; $box needs [southwest, northeast]');
  const [sw, ne] = box.map(geoPoint) as [GeoPoint, GeoPoint];
  if (sw.latitude > ne.latitude) throw invalidJson('bad $within value; the southwest corner of $box must be south of the northeast corner');
  return anyOf(ctx, field, (t) => {
    const lat = t.numberAt(['latitude']);
    const lng = t.numberAt(['longitude']);
    const lngTest =
      sw.longitude <= ne.longitude
        ? frag(`${lng} BETWEEN ? AND ?`, sw.longitude, ne.longitude)
        : frag(`(${lng} >= ? OR ${lng} <= ?)`, sw.longitude, ne.longitude);
    return and([isGeoPoint(t), frag(`${lat} BETWEEN ? AND ?`, sw.latitude, ne.latitude), lngTest]);
  });
};

/**
 * Corners `[lat, lng]` of `$polygon`: a Parse Polygon (its coordinates are `[latitude, longitude]`), or at
 * least three GeoPoints or Mongo-style `[longitude, latitude]` pairs (as Parse Server reads them).
 */
function polygonCorners(value: unknown): [number, number][] {
  if (isPlainObject(value) && value.__type === 'Polygon') {
    const coords = value.coordinates;
    const ok = Array.isArray(coords) && coords.every((c) => Array.isArray(c) && c.length === 2 && isNumber(c[0]) && isNumber(c[1]));
    if (!ok || coords.length < 3) throw invalidJson('bad $geoWithin value; Polygon.coordinates should hold at least three [latitude, longitude] corners');
    return coords.map((c) => {
      const p = geoPoint({ __type: 'GeoPoint', latitude: c[0], longitude: c[1] });
      return [p.latitude, p.longitude];
    });
  }
  if (!Array.isArray(value)) throw invalidJson('bad $geoWithin value; $polygon should be a Polygon or an array of GeoPoints');
  if (value.length < 3) throw invalidJson('bad $geoWithin value; $polygon should hold at least three GeoPoints');
  return value.map((v) => {
    const p = pointOrPair(v);
    return [p.latitude, p.longitude];
  });
}

/** A GeoPoint or a Mongo-style `[longitude, latitude]` pair (the SDK's `withinRadians` sends those). */
function pointOrPair(value: unknown): GeoPoint {
  if (Array.isArray(value) && value.length === 2) return geoPoint({ __type: 'GeoPoint', latitude: value[1], longitude: value[0] });
  return geoPoint(value);
}

/** `$geoWithin: {$polygon: ...}` (inside or on the edge) or `{$centerSphere: [center, radians]}`. */
export const $geoWithin: FieldOperator = (ctx, field, value) => {
  const [key, shape] = onlyKey(value, '$geoWithin', ['$polygon', '$centerSphere']);
  if (key === '$polygon') {
    const ring = polygonCorners(shape);
    return anyOf(ctx, field, (t) => and([isGeoPoint(t), ctx.options.dialect.pointInPolygon(t, ring)]));
  }
  if (!Array.isArray(shape) || shape.length !== 2 || !isNumber(shape[1]) || shape[1] < 0) {
    throw invalidJson('bad $geoWithin value; $centerSphere needs [center, radius in radians ≥ 0]');
  }
  const center = pointOrPair(shape[0]);
  const radius = shape[1];
  return anyOf(ctx, field, (t) => {
    const d = distanceTo(ctx.options.dialect, t, center);
    return and([isGeoPoint(t), frag(`${d.sql} <= ?`, ...d.params, radius)]);
  });
};

/** `$geoIntersects: {$point: GeoPoint}` on a Polygon field: the polygon contains the point (edges included). */
export const $geoIntersects: FieldOperator = (ctx, field, value) => {
  const [, point] = onlyKey(value, '$geoIntersects', ['$point']);
  const p = geoPoint(point);
  return anyOf(ctx, field, (t) => {
    if (t.kind !== 'data' && t.kind !== 'element') return FALSE;
    return and([frag(`${t.textAt(['__type'])} = 'Polygon'`), ctx.options.dialect.polygonHolds(t, p)]);
  });
};

export const GEO_OPERATORS = {
  $nearSphere,
  $maxDistance,
  $maxDistanceInRadians: $maxDistance,
  $maxDistanceInKilometers: $maxDistance,
  $maxDistanceInMiles: $maxDistance,
  $within,
  $geoWithin,
  $geoIntersects,
};
