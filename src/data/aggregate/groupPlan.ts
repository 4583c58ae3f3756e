import { fieldPath, type FieldPath } from '../fieldPath.js';
import type { FieldType } from '../types.js';
import { isPlainObject } from './values.js';

/**
 * A `$group` a storage adapter can answer itself (StorageReads.group), instead of the objects being
 * read into memory (aggregate in the adapter). Only shapes whose answer is the same either
 * way qualify: the key is a constant (one group) or a String field; each output counts objects or
 * takes `$sum`, `$avg`, `$min` or `$max` of a Number field, whose values are numbers, null or missing
 * (the schema says so), which these accumulators skip as MongoDB's do.
 */
export interface GroupPlan {
  /** The String field grouped by; undefined groups every object together (`_id: null`, `{}`, `''`). */
  key?: FieldPath;
  outputs: GroupOutput[];
}

export type GroupOutput =
  | { name: string; op: 'count'; times: number }
  | { name: string; op: 'sum' | 'avg' | 'min' | 'max'; field: FieldPath };

const TOP_LEVEL = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isEmptyKey = (v: unknown) => v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);

/** A top-level field of type `type`, from a `$field` reference; undefined otherwise. */
function fieldRef(expr: unknown, fields: Readonly<Record<string, FieldType>> | undefined, type: FieldType['type']): FieldPath | undefined {
  if (typeof expr !== 'string' || !expr.startsWith('$')) return undefined;
  const name = expr.slice(1);
  return TOP_LEVEL.test(name) && Object.hasOwn(fields ?? {}, name) && fields?.[name]?.type === type && !['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(name)
    ? fieldPath([name])
    : undefined;
}

/**
 * The plan of a `$group` spec over a class with `fields`, or undefined when the spec needs the
 * in-memory run (group.ts), which also checks it (so a bad spec is never planned).
 */
export function planGroup(spec: unknown, fields: Readonly<Record<string, FieldType>> | undefined): GroupPlan | undefined {
  if (!isPlainObject(spec) || !('_id' in spec) || 'objectId' in spec) return undefined;
  let key: FieldPath | undefined;
  if (!isEmptyKey(spec._id)) {
    key = fieldRef(spec._id, fields, 'String');
    if (!key) return undefined;
  }
  const outputs: GroupOutput[] = [];
  for (const [name, acc] of Object.entries(spec)) {
    if (name === '_id') continue;
    if (!TOP_LEVEL.test(name) || !isPlainObject(acc) || Object.keys(acc).length !== 1) return undefined;
    const [op, arg] = Object.entries(acc)[0]!;
    if (op === '$count' && isPlainObject(arg) && Object.keys(arg).length === 0) outputs.push({ name, op: 'count', times: 1 });
    else if (op === '$sum' && typeof arg === 'number' && Number.isInteger(arg)) outputs.push({ name, op: 'count', times: arg });
    else if (['$sum', '$avg', '$min', '$max'].includes(op)) {
      const field = fieldRef(arg, fields, 'Number');
      if (!field) return undefined;
      outputs.push({ name, op: op.slice(1) as 'sum' | 'avg' | 'min' | 'max', field });
    } else return undefined;
  }
  return { key, outputs };
}
