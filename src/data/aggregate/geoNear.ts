/**
 * `$geoNear` as MongoDB-backed Parse Server runs it (Parse JS guide, "Aggregate"; MongoDB's manual):
 * the first stage only; `{near, distanceField, key?, spherical?, query?, maxDistance?, minDistance?,
 * distanceMultiplier?, includeLocs?}`. The objects come nearest first, each with its distance in
 * `distanceField`: in meters for a GeoJSON point (`{type: "Point", coordinates: [lng, lat]}`) or a
 * Parse GeoPoint, in radians for a legacy `[lng, lat]` pair, as MongoDB measures them (earth radius
 * 6378.1 km). `maxDistance`/`minDistance` are in the same unit. Parse Server on PostgreSQL ignores the
 * stage (it answers every object, unsorted, without distances).
 *
 * The filter and the order run in SQL (a `$nearSphere` where); only the distance field is computed here.
 */
import { geoDistance } from '../query/functions.js';
import type { FieldType } from '../types.js';
import { matchToWhere } from './match.js';
import { invalid, isPlainObject, PATH, setPath, type Doc } from './values.js';

/** MongoDB's earth radius for spherical distances in meters (its `kRadiusOfEarthInMeters`). */
const EARTH_RADIUS_METERS = 6_378_100;

const OPTIONS = new Set(['near', 'distanceField', 'key', 'spherical', 'query', 'maxDistance', 'minDistance', 'distanceMultiplier', 'includeLocs']);

interface Point {
  latitude: number;
  longitude: number;
  /** Distance units per radian: meters for GeoJSON and GeoPoints, 1 for legacy pairs. */
  scale: number;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function nearPoint(near: unknown): Point {
  let lng: unknown;
  let lat: unknown;
  let scale = EARTH_RADIUS_METERS;
  if (Array.isArray(near)) {
    [lng, lat] = near;
    scale = 1;
    if (near.length !== 2) lng = undefined;
  } else if (isPlainObject(near) && near.type === 'Point' && Array.isArray(near.coordinates) && near.coordinates.length === 2) {
    [lng, lat] = near.coordinates;
  } else if (isPlainObject(near) && near.__type === 'GeoPoint') {
    [lng, lat] = [near.longitude, near.latitude];
  }
  if (!isNumber(lng) || !isNumber(lat)) {
    throw invalid('$geoNear.near needs a GeoJSON point {"type": "Point", "coordinates": [longitude, latitude]}, a [longitude, latitude] pair or a GeoPoint.');
  }
  if (lat < -90 || lat > 90 || lng < -180 || lng > 180) throw invalid('$geoNear.near: latitude must be within [-90, 90] and longitude within [-180, 180].');
  return { latitude: lat, longitude: lng, scale };
}

const optionalNumber = (spec: Record<string, unknown>, name: string): number | undefined => {
  const value = spec[name];
  if (value === undefined) return undefined;
  if (!isNumber(value) || value < 0) throw invalid(`$geoNear.${name} needs a number of at least 0.`);
  return value;
};

const pathOption = (spec: Record<string, unknown>, name: string): string | undefined => {
  const value = spec[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !PATH.test(value) || value.startsWith('_id')) throw invalid(`$geoNear.${name} needs a field name such as "distance".`);
  return value;
};

/** The GeoPoint field to measure: `key`, or the class's only GeoPoint field. */
function keyField(spec: Record<string, unknown>, fields: Readonly<Record<string, FieldType>> | undefined): string {
  if (spec.key !== undefined) {
    if (typeof spec.key !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(spec.key)) throw invalid('$geoNear.key needs the name of a GeoPoint field.');
    return spec.key;
  }
  const geo = Object.entries(fields ?? {}).filter(([, t]) => t.type === 'GeoPoint');
  if (geo.length !== 1) throw invalid('$geoNear needs key: the name of the GeoPoint field to measure.');
  return geo[0]![0];
}

const distanceOf = (value: unknown, p: Point): number | undefined => {
  if (Array.isArray(value)) {
    const all = value.map((v) => distanceOf(v, p)).filter((d): d is number => d !== undefined);
    return all.length ? Math.min(...all) : undefined;
  }
  if (!isPlainObject(value) || value.__type !== 'GeoPoint' || !isNumber(value.latitude) || !isNumber(value.longitude)) return undefined;
  return geoDistance(p.latitude, p.longitude, value.latitude, value.longitude) * p.scale;
};

/** A compiled `$geoNear`: the where that selects and orders the objects, and what adds the distances. */
export interface GeoNear {
  where: Doc;
  finish(docs: Doc[]): Doc[];
}

/**
 * Compiles a `$geoNear` spec for the class whose fields are `fields`.
 * @throws ParseError 102 for an unknown option, a missing `distanceField` or a malformed one.
 */
export function compileGeoNear(spec: unknown, fields: Readonly<Record<string, FieldType>> | undefined): GeoNear {
  if (!isPlainObject(spec)) throw invalid('$geoNear needs an object such as {"near": {"type": "Point", "coordinates": [lng, lat]}, "key": "location", "distanceField": "dist"}.');
  const unknown = Object.keys(spec).find((k) => !OPTIONS.has(k));
  if (unknown) throw invalid(`$geoNear: unknown option ${unknown}; use ${[...OPTIONS].join(', ')}.`);
  const distanceField = pathOption(spec, 'distanceField');
  if (!distanceField) throw invalid('$geoNear needs distanceField: the field to write each distance to.');
  const includeLocs = pathOption(spec, 'includeLocs');
  if (spec.spherical !== undefined && typeof spec.spherical !== 'boolean') throw invalid('$geoNear.spherical needs true or false.');
  const point = nearPoint(spec.near);
  const key = keyField(spec, fields);
  const max = optionalNumber(spec, 'maxDistance');
  const min = optionalNumber(spec, 'minDistance');
  const multiplier = spec.distanceMultiplier === undefined ? 1 : optionalNumber(spec, 'distanceMultiplier')!;
  const near: Doc = { $nearSphere: { __type: 'GeoPoint', latitude: point.latitude, longitude: point.longitude } };
  if (max !== undefined) near.$maxDistanceInRadians = max / point.scale;
  const query = spec.query === undefined ? undefined : matchToWhere(fields, spec.query, '$geoNear.query');
  return {
    where: query ? { $and: [query, { [key]: near }] } : { [key]: near },
    finish: (docs) => {
      const out: Doc[] = [];
      for (const doc of docs) {
        const distance = distanceOf(doc[key], point);
        if (distance === undefined || (min !== undefined && distance < min)) continue;
        setPath(doc, distanceField, distance * multiplier);
        if (includeLocs) setPath(doc, includeLocs, doc[key]);
        out.push(doc);
      }
      return out;
    },
  };
}
