import { fromGlobalId } from 'graphql-relay';
import type { FieldType } from '../types.js';

/** Each class's fields with their types, the default fields included (Schema.fields). */
export type ClassFields = ReadonlyMap<string, Readonly<Record<string, FieldType>>>;

/** GraphQL where-input operator names and the Parse query operators they stand for (parse-server src/GraphQL/transformers/query.js). */
const OPERATORS: Record<string, string> = {
  equalTo: '$eq',
  notEqualTo: '$ne',
  lessThan: '$lt',
  lessThanOrEqualTo: '$lte',
  greaterThan: '$gt',
  greaterThanOrEqualTo: '$gte',
  in: '$in',
  notIn: '$nin',
  exists: '$exists',
  inQueryKey: '$select',
  notInQueryKey: '$dontSelect',
  containedBy: '$containedBy',
  contains: '$all',
  matchesRegex: '$regex',
  options: '$options',
  text: '$text',
  nearSphere: '$nearSphere',
  maxDistance: '$maxDistance',
  maxDistanceInRadians: '$maxDistanceInRadians',
  maxDistanceInMiles: '$maxDistanceInMiles',
  maxDistanceInKilometers: '$maxDistanceInKilometers',
  within: '$within',
  geoWithin: '$geoWithin',
  geoIntersects: '$geoIntersects',
};
const COMBINATORS: Record<string, string> = { OR: '$or', AND: '$and', NOR: '$nor' };

type Input = Record<string, any>;

const geoPoint = (p: Input) => ({ __type: 'GeoPoint', latitude: p.latitude, longitude: p.longitude });

/** A global id of `className` (`base64("GameScore:<objectId>")`) as its objectId; any other text as it is. */
export function objectIdOf(id: string, className: string): string {
  const global = fromGlobalId(id);
  return global.type === className && global.id ? global.id : id;
}

/** One operator's value in Parse's form (geo inputs become GeoPoints, a text search gets its `$` names). */
function operand(op: string, value: any, classes: ClassFields): unknown {
  if (value === null || typeof value !== 'object') return value;
  switch (op) {
    case 'nearSphere':
      return geoPoint(value);
    case 'within':
      return value.box ? { $box: [geoPoint(value.box.bottomLeft), geoPoint(value.box.upperRight)] } : value;
    case 'geoWithin':
      if (value.polygon) return { $polygon: value.polygon.map(geoPoint) };
      if (value.centerSphere) return { $centerSphere: [geoPoint(value.centerSphere.center), value.centerSphere.distance] };
      return value;
    case 'geoIntersects':
      return value.point ? { $point: geoPoint(value.point) } : value;
    case 'text': {
      const search: Input = value.search ?? {};
      const out: Input = {};
      for (const [k, v] of Object.entries(search)) if (v !== undefined) out[`$${k}`] = v;
      return { $search: out };
    }
    case 'inQueryKey':
    case 'notInQueryKey': {
      const query = value.query ?? {};
      return { key: value.key, query: { className: query.className, where: toParseWhere(query.where ?? {}, query.className, classes) } };
    }
    default:
      return value;
  }
}

/**
 * A `<Class>WhereInput` value as the Parse `where` the data API takes: `OR`/`AND`/`NOR` become
 * `$or`/`$and`/`$nor`, operator names their `$` forms, `id` is `objectId` (global ids decoded), a
 * pointer's `have`/`haveNot` become `$inQuery`/`$notInQuery` on the target class, an Object field's
 * `{key, value}` operands become a constraint on `field.key`. What the input does not know passes
 * as it is, for the data API to refuse with its own error.
 * Rules from parse-server src/GraphQL/transformers/query.js.
 */
export function toParseWhere(input: Input, className: string, classes: ClassFields): Record<string, unknown> {
  const fields = classes.get(className) ?? {};
  const where: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (COMBINATORS[name] && Array.isArray(value)) {
      where[COMBINATORS[name]] = value.map((item: Input) => toParseWhere(item ?? {}, className, classes));
      continue;
    }
    const field = name === 'id' ? 'objectId' : name;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      where[field] = value;
      continue;
    }
    const type = fields[field];
    if (type && (type.type === 'Pointer' || type.type === 'Relation') && type.targetClass) {
      Object.assign(where, pointerConstraint(field, value, type, classes, where[field] as Input | undefined));
      continue;
    }
    const constraint: Input = { ...(where[field] as Input | undefined) };
    for (const [op, raw] of Object.entries(value as Input)) {
      if (raw === undefined) continue;
      const parseOp = OPERATORS[op] ?? op;
      let v = raw;
      if (field === 'objectId') v = typeof raw === 'string' ? objectIdOf(raw, className) : Array.isArray(raw) ? raw.map((id) => (typeof id === 'string' ? objectIdOf(id, className) : id)) : raw;
      // An Object field compared at a key: `{equalTo: {key: 'a.b', value: 1}}` is `{"field.a.b": {$eq: 1}}`.
      if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.key === 'string' && 'value' in v && !['inQueryKey', 'notInQueryKey'].includes(op)) {
        const path = `${field}.${v.key}`;
        where[path] = { ...(where[path] as Input | undefined), [parseOp]: v.value };
        continue;
      }
      constraint[parseOp] = operand(op, v, classes);
    }
    if (Object.keys(constraint).length) where[field] = constraint;
  }
  return where;
}

/** A pointer's or relation's `{have, haveNot, exists}` as Parse constraints on `field`. */
function pointerConstraint(field: string, value: Input, type: FieldType, classes: ClassFields, existing: Input | undefined): Record<string, unknown> {
  const target = type.targetClass!;
  const constraint: Input = { ...existing };
  if (value.have) constraint.$inQuery = { where: toParseWhere(value.have, target, classes), className: target };
  if (value.haveNot) constraint.$notInQuery = { where: toParseWhere(value.haveNot, target, classes), className: target };
  if (typeof value.exists === 'boolean') {
    if (type.type === 'Pointer') constraint.$exists = value.exists;
    else constraint[value.exists ? '$inQuery' : '$notInQuery'] = { where: { objectId: { $exists: true } }, className: target };
  }
  return { [field]: constraint };
}
