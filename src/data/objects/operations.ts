import { ParseCode, ParseError } from '../errors.js';
import type { FieldType } from '../types.js';
import { encodeNested, encodeValue, isPlainObject, type Json } from '../values.js';

/** A relation change to apply after the row is written: objectIds to add to or remove from a relation field. */
export interface RelationChange {
  field: string;
  targetClass: string;
  add: string[];
  remove: string[];
}

/** What applying a body's fields to an object produced. */
export interface AppliedChanges {
  /** The object's data after the changes. */
  data: Record<string, unknown>;
  /** Types that the schema must know (new keys teach it). */
  types: Record<string, FieldType>;
  relations: RelationChange[];
  /** Values Parse answers back after an update: results of Increment, Add, AddUnique, Remove. */
  computed: Record<string, unknown>;
}

const invalidOp = (field: string, message: string) => new ParseError(ParseCode.INVALID_JSON, `${field}: ${message}`);

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Parse compares array elements that are objects by pointer identity: className and objectId. */
const sameElement = (a: unknown, b: unknown) => {
  if (isPlainObject(a) && isPlainObject(b) && a.__type === 'Pointer' && b.__type === 'Pointer') {
    return a.className === b.className && a.objectId === b.objectId;
  }
  return sameJson(a, b);
};

function pointersOf(field: string, objects: unknown): { className: string; ids: string[] } {
  if (!Array.isArray(objects) || objects.length === 0) throw invalidOp(field, 'relation operations need a non-empty "objects" array of Pointers.');
  let className: string | undefined;
  const ids: string[] = [];
  for (const o of objects) {
    if (!isPlainObject(o) || o.__type !== 'Pointer' || typeof o.objectId !== 'string' || typeof o.className !== 'string') {
      throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: relation objects must be Pointers with className and objectId.`);
    }
    if (className !== undefined && className !== o.className) throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: all related objects must be of one class.`);
    className = o.className;
    ids.push(o.objectId);
  }
  return { className: className!, ids };
}

/** What a non-relation operation leaves in a field: its new value, or DELETED. */
const DELETED = Symbol('deleted');

/**
 * Applies an operation that works on one value (Delete, Increment, Add, AddUnique, Remove) to
 * `current`, the value at `label` (a field or a dotted path inside an Object field).
 * @returns the new value, or DELETED; undefined when `op` is not one of these.
 * @throws ParseError 111 for a wrong operand type.
 */
function applyValueOp(label: string, op: unknown, value: Record<string, unknown>, current: unknown): unknown {
  switch (op) {
    case 'Delete':
      return DELETED;
    case 'Increment': {
      const amount = value.amount ?? 1;
      if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${label}: Increment needs a numeric amount.`);
      if (current !== undefined && current !== null && typeof current !== 'number') {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `${label}: cannot increment a non-number field.`);
      }
      return (typeof current === 'number' ? current : 0) + amount;
    }
    case 'Add':
    case 'AddUnique':
    case 'Remove': {
      if (!Array.isArray(value.objects)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${label}: ${op} needs an "objects" array.`);
      if (current !== undefined && current !== null && !Array.isArray(current)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${label}: ${op} works on Array fields only.`);
      const items = (encodeValue(label, value.objects).stored as Json[]) ?? [];
      const base = Array.isArray(current) ? [...current] : [];
      if (op === 'Add') return [...base, ...items];
      if (op === 'Remove') return base.filter((e) => !items.some((item) => sameElement(e, item)));
      for (const item of items) if (!base.some((e) => sameElement(e, item))) base.push(item);
      return base;
    }
    default:
      return undefined;
  }
}

const unknownOp = (label: string, op: unknown) =>
  invalidOp(label, `unknown operation ${JSON.stringify(op)}; use Delete, Increment, Add, AddUnique, Remove, AddRelation, RemoveRelation or Batch.`);

/**
 * Applies one field's value or `__op` (Parse REST guide, "Updating Objects": Delete, Increment, Add,
 * AddUnique, Remove, AddRelation, RemoveRelation, Batch) to `current`.
 * @throws ParseError 111 for a wrong operand type, 107 for an unknown or malformed operation.
 */
function applyField(field: string, value: unknown, current: unknown, out: AppliedChanges): void {
  if (value === null) {
    out.data[field] = null;
    return;
  }
  if (!isPlainObject(value) || !('__op' in value)) {
    const { type, stored } = encodeValue(field, value);
    out.types[field] = type;
    if (type.type !== 'Relation') out.data[field] = stored;
    return;
  }
  const op = value.__op;
  switch (op) {
    case 'AddRelation':
    case 'RemoveRelation': {
      const { className, ids } = pointersOf(field, value.objects);
      out.types[field] = { type: 'Relation', targetClass: className };
      let change = out.relations.find((r) => r.field === field);
      if (!change) {
        change = { field, targetClass: className, add: [], remove: [] };
        out.relations.push(change);
      }
      if (change.targetClass !== className) throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: all related objects must be of one class.`);
      for (const id of ids) {
        const [from, to] = op === 'AddRelation' ? [change.remove, change.add] : [change.add, change.remove];
        const i = from.indexOf(id);
        if (i >= 0) from.splice(i, 1);
        if (!to.includes(id)) to.push(id);
      }
      return;
    }
    case 'Batch': {
      if (!Array.isArray(value.ops) || value.ops.length === 0) throw invalidOp(field, 'Batch needs a non-empty "ops" array.');
      for (const inner of value.ops) {
        if (!isPlainObject(inner) || inner.__op === 'Batch') throw invalidOp(field, 'Batch ops must be operations other than Batch.');
        applyField(field, inner, out.data[field], out);
      }
      return;
    }
  }
  const next = applyValueOp(field, op, value, current);
  if (next === undefined) throw unknownOp(field, op);
  if (next === DELETED) {
    delete out.data[field];
    return;
  }
  out.types[field] = op === 'Increment' ? { type: 'Number' } : { type: 'Array' };
  out.data[field] = next;
  out.computed[field] = next;
}

/** `value` as an Object field's content to change: a copy, or a new object for a missing or null field. */
function objectAt(key: string, path: string, value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value) || '__type' in value) throw new ParseError(ParseCode.INCORRECT_TYPE, `${key}: ${path} is not an Object, so ${key} cannot update inside it.`);
  return { ...value };
}

/**
 * Applies a dotted key (`objectField.sub.key`, Parse's dot notation) inside an Object field: sets,
 * deletes, increments or changes an array at that path, creating the objects on the way, and leaves
 * every other key of the field as it is (MongoDB's `$set` on a path). The key was checked by
 * schema.ts (checkWriteKey). A result (Increment, Add, ...) is answered nested, as Parse does:
 * `{"objectField": {"sub": {"key": 6}}}`.
 * @throws ParseError 111 when the field or a step of the path holds something other than an object,
 *   or for a relation operation, which only a top-level field can hold; 107 for an unknown operation.
 */
function applyPath(key: string, value: unknown, out: AppliedChanges): void {
  const [field, ...path] = key.split('.') as [string, ...string[]];
  const leaf = path.pop()!;
  const root = objectAt(key, field, out.data[field]);
  let parent = root;
  path.forEach((part, i) => {
    parent = parent[part] = objectAt(key, [field, ...path.slice(0, i + 1)].join('.'), parent[part]);
  });
  out.types[field] = { type: 'Object' };
  out.data[field] = root;
  if (!isPlainObject(value) || !('__op' in value)) {
    parent[leaf] = encodeNested(key, value);
    return;
  }
  if (value.__op === 'AddRelation' || value.__op === 'RemoveRelation' || value.__op === 'Batch') {
    throw new ParseError(ParseCode.INCORRECT_TYPE, `${key}: relations belong in a top-level Relation field, not inside an Object field.`);
  }
  const next = applyValueOp(key, value.__op, value, parent[leaf]);
  if (next === undefined) throw unknownOp(key, value.__op);
  if (next === DELETED) {
    delete parent[leaf];
    return;
  }
  parent[leaf] = next;
  let answer = (out.computed[field] = isPlainObject(out.computed[field]) ? out.computed[field] : {}) as Record<string, unknown>;
  for (const part of path) answer = (answer[part] = isPlainObject(answer[part]) ? answer[part] : {}) as Record<string, unknown>;
  answer[leaf] = next;
}

/**
 * Applies a create or update body's fields (already stripped of objectId, createdAt, updatedAt, ACL,
 * and with keys checked by schema.ts, checkWriteKey) to a copy of `data`, in the body's order: a
 * dotted key applies inside the Object field as the earlier keys left it.
 */
export function applyChanges(data: Record<string, unknown>, body: Record<string, unknown>): AppliedChanges {
  const out: AppliedChanges = { data: { ...data }, types: {}, relations: [], computed: {} };
  for (const [key, value] of Object.entries(body)) {
    if (key.includes('.')) applyPath(key, value, out);
    else applyField(key, value, out.data[key], out);
  }
  return out;
}
