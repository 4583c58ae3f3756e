import { ParseCode, ParseError } from '../errors.js';
import type { FieldType } from '../types.js';
import { encodeValue, isPlainObject, type Json } from '../values.js';

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
    if (type.type === 'Relation') {
      out.types[field] = type;
      return;
    }
    out.types[field] = type;
    out.data[field] = stored;
    return;
  }
  const op = value.__op;
  switch (op) {
    case 'Delete':
      delete out.data[field];
      return;
    case 'Increment': {
      const amount = value.amount ?? 1;
      if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: Increment needs a numeric amount.`);
      if (current !== undefined && current !== null && typeof current !== 'number') {
        throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: cannot increment a non-number field.`);
      }
      const next = (typeof current === 'number' ? current : 0) + amount;
      out.types[field] = { type: 'Number' };
      out.data[field] = next;
      out.computed[field] = next;
      return;
    }
    case 'Add':
    case 'AddUnique':
    case 'Remove': {
      if (!Array.isArray(value.objects)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: ${op} needs an "objects" array.`);
      if (current !== undefined && current !== null && !Array.isArray(current)) throw new ParseError(ParseCode.INCORRECT_TYPE, `${field}: ${op} works on Array fields only.`);
      const items = (encodeValue(field, value.objects).stored as Json[]) ?? [];
      const base = Array.isArray(current) ? [...current] : [];
      let next: unknown[];
      if (op === 'Add') next = [...base, ...items];
      else if (op === 'AddUnique') {
        next = base;
        for (const item of items) if (!next.some((e) => sameElement(e, item))) next.push(item);
      } else next = base.filter((e) => !items.some((item) => sameElement(e, item)));
      out.types[field] = { type: 'Array' };
      out.data[field] = next;
      out.computed[field] = next;
      return;
    }
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
    default:
      throw invalidOp(field, `unknown operation ${JSON.stringify(op)}; use Delete, Increment, Add, AddUnique, Remove, AddRelation, RemoveRelation or Batch.`);
  }
}

/**
 * Applies a create or update body's fields (already stripped of objectId, createdAt, updatedAt, ACL)
 * to a copy of `data`.
 */
export function applyChanges(data: Record<string, unknown>, body: Record<string, unknown>): AppliedChanges {
  const out: AppliedChanges = { data: { ...data }, types: {}, relations: [], computed: {} };
  for (const [field, value] of Object.entries(body)) applyField(field, value, data[field], out);
  return out;
}
