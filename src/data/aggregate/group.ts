/**
 * `$group: {_id: <expression>, <field>: {<accumulator>: <expression>}, ...}` (MongoDB's manual), with
 * the key answered as `objectId` as Parse Server answers it: a Pointer key as its objectId, and a
 * missing, null or empty key (`{}`, `''`, `[]`) as null, so that grouping by a constant gives one
 * group `{objectId: null}` (MongoDB-backed Parse Server empties such keys so; on PostgreSQL it does too).
 */
import { compileExpression, type Evaluate } from './expressions.js';
import { canonical, compare, invalid, isPlainObject, type Doc } from './values.js';

interface Accumulator {
  add(value: unknown): void;
  result(): unknown;
}

/** `$min` (sign -1) or `$max` (sign 1) over the values that are neither missing nor null. */
function extreme(sign: 1 | -1): Accumulator {
  let best: unknown;
  return {
    add: (v) => {
      if (v !== undefined && v !== null && (best === undefined || sign * compare(v, best) > 0)) best = v;
    },
    result: () => best ?? null,
  };
}

/** The accumulators, each fed the value of its expression for every object of the group. */
const ACCUMULATORS: Record<string, () => Accumulator> = {
  $sum: () => {
    let total = 0;
    return { add: (v) => typeof v === 'number' && (total += v), result: () => total };
  },
  $avg: () => {
    let total = 0;
    let n = 0;
    return { add: (v) => typeof v === 'number' && ((total += v), n++), result: () => (n ? total / n : null) };
  },
  $min: () => extreme(-1),
  $max: () => extreme(1),
  $first: () => {
    let value: unknown;
    let seen = false;
    return { add: (v) => seen || ((seen = true), (value = v)), result: () => value ?? null };
  },
  $last: () => {
    let value: unknown;
    return { add: (v) => (value = v), result: () => value ?? null };
  },
  $push: () => {
    const values: unknown[] = [];
    return { add: (v) => v !== undefined && values.push(v), result: () => values };
  },
  $addToSet: () => {
    const values = new Map<string, unknown>();
    return { add: (v) => v !== undefined && values.set(canonical(v), v), result: () => [...values.values()] };
  },
  $count: () => {
    let n = 0;
    return { add: () => n++, result: () => n };
  },
};

/** A group key as Parse answers it: a Pointer by its objectId (also inside a compound key); missing is null. */
const groupKey = (value: unknown): unknown => {
  if (isPlainObject(value) && value.__type === 'Pointer') return value.objectId;
  if (isPlainObject(value) && value.__type === undefined) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, groupKey(v)]));
  return value ?? null;
};

/** Parse Server answers an empty key (an empty object, string or array) as null. */
const answeredKey = (key: unknown): unknown =>
  key === '' || (Array.isArray(key) && key.length === 0) || (isPlainObject(key) && Object.keys(key).length === 0) ? null : key;

interface Field {
  name: string;
  op: string;
  arg: Evaluate;
}

/**
 * Compiles a `$group` spec into a function of the documents.
 * @throws ParseError 102 without `_id`, with `objectId` (Parse's rule), for an output name with `$` or
 *   `.`, or a field that is not exactly one known accumulator.
 */
export function compileGroup(spec: unknown): (docs: Doc[]) => Doc[] {
  if (!isPlainObject(spec)) throw invalid('$group needs an object such as {"_id": "$field", "total": {"$sum": "$amount"}}.');
  if ('objectId' in spec) throw invalid("Cannot use 'objectId' in aggregation stage $group; name the group key _id.");
  if (!('_id' in spec)) throw invalid('Invalid parameter for query: group. Missing key _id.');
  const key = compileExpression(spec._id, '$group._id');
  const fields: Field[] = Object.entries(spec)
    .filter(([k]) => k !== '_id')
    .map(([name, acc]) => {
      if (name.startsWith('$') || name.includes('.')) throw invalid(`$group: ${name} cannot be an output field name.`);
      const [op, arg] = isPlainObject(acc) && Object.keys(acc).length === 1 ? Object.entries(acc)[0]! : [];
      if (!op || !ACCUMULATORS[op]) throw invalid(`$group.${name} must be one accumulator: ${Object.keys(ACCUMULATORS).join(', ')}.`);
      if (op === '$count' && !(isPlainObject(arg) && Object.keys(arg).length === 0)) throw invalid(`$group.${name}: $count takes no argument: {"$count": {}}.`);
      return { name, op, arg: compileExpression(arg, `$group.${name}`) };
    });
  return (docs) => {
    const groups = new Map<string, { key: unknown; accs: Accumulator[] }>();
    for (const doc of docs) {
      const value = groupKey(key(doc));
      const id = canonical(value);
      let entry = groups.get(id);
      if (!entry) groups.set(id, (entry = { key: value, accs: fields.map((f) => ACCUMULATORS[f.op]!()) }));
      for (let i = 0; i < fields.length; i++) entry.accs[i]!.add(fields[i]!.arg(doc));
    }
    return [...groups.values()].map((g) => {
      const out: Doc = { objectId: answeredKey(g.key) };
      fields.forEach((f, i) => (out[f.name] = g.accs[i]!.result()));
      return out;
    });
  };
}
