/** A query value as values.ts parses it from Parse's JSON form, for the dialects to compare (dialect.ts). */
export type Literal =
  | { kind: 'number'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'date'; iso: string }
  /** Without className (`{"__type":"Pointer","objectId":…}`, or a bare objectId on a Pointer field): any class. */
  | { kind: 'pointer'; className?: string; objectId: string }
  | { kind: 'file'; name: string }
  /** GeoPoint, Polygon, Bytes, plain objects and arrays: compared as whole JSON values. */
  | { kind: 'json'; json: string };

/** A GeoPoint's coordinates in degrees (Parse REST guide, "GeoPoints"). */
export interface GeoPoint {
  latitude: number;
  longitude: number;
}
