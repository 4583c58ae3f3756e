import type { DataEngine } from '../../engine.js';
import { ParseCode, ParseError } from '../../errors.js';
import { checkClassName } from '../../schema.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

type Doc = Record<string, unknown>;
interface Stage {
  name: (typeof STAGES)[number];
  spec: unknown;
}

const STAGES = ['$match', '$group', '$project', '$sort', '$limit', '$skip', '$count'] as const;

/** Objects an aggregation may read into memory; a leading `$match`, `$limit` or `$count` avoids the limit. */
export const MAX_AGGREGATE_ROWS = 200_000;

/** Parameters besides `distinct`, `where` and `pipeline` that the JS SDK may send; they change nothing here. */
const IGNORED = new Set(['hint', 'explain', 'readPreference', 'rawValues', 'rawFieldNames']);

const invalid = (message: string) => new ParseError(ParseCode.INVALID_QUERY, message);

/** A query-string value is JSON text; the SDK's body carries it decoded. */
const jsonParam = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$/;

/** JSON with sorted keys: equal values give equal text (group keys, `$addToSet`, `distinct`). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));

/** A field path's value; `_id` means `objectId`, and a path through an array maps over it (Mongo's rule). */
function getPath(doc: unknown, path: string): unknown {
  const walk = (value: unknown, parts: string[]): unknown => {
    if (parts.length === 0) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, parts)).filter((v) => v !== undefined);
    if (!isPlainObject(value)) return undefined;
    return walk(value[parts[0]!], parts.slice(1));
  };
  const parts = path.split('.');
  if (parts[0] === '_id') parts[0] = 'objectId';
  return walk(doc, parts);
}

const fieldPath = (ref: string, where: string): string => {
  if (ref.startsWith('$$') || !PATH.test(ref.slice(1))) throw invalid(`${where}: ${JSON.stringify(ref)} is not a field reference such as "$score" or "$address.city".`);
  return ref.slice(1);
};

/** Evaluates an expression: `"$field"`, `{$literal: v}`, an object or array of expressions, or a constant. */
function evaluate(doc: Doc, expr: unknown, where: string): unknown {
  if (typeof expr === 'string' && expr.startsWith('$')) return getPath(doc, fieldPath(expr, where));
  if (Array.isArray(expr)) return expr.map((e) => evaluate(doc, e, where));
  if (isPlainObject(expr)) {
    const keys = Object.keys(expr);
    if (keys.length === 1 && keys[0] === '$literal') return expr.$literal;
    if (keys.some((k) => k.startsWith('$'))) throw invalid(`${where}: expression operator ${keys.find((k) => k.startsWith('$'))} is not supported; use field references ("$field"), $literal and constants.`);
    return Object.fromEntries(keys.map((k) => [k, evaluate(doc, expr[k], where)]).filter(([, v]) => v !== undefined));
  }
  return expr;
}

const isDate = (v: unknown): v is { iso: string } => isPlainObject(v) && v.__type === 'Date' && typeof v.iso === 'string';

/** Mongo's order of types: null < numbers < strings < objects < arrays < booleans < dates. */
const rank = (v: unknown): number =>
  v === undefined || v === null ? 1 : typeof v === 'number' ? 2 : typeof v === 'string' ? 3 : isDate(v) ? 9 : Array.isArray(v) ? 5 : typeof v === 'boolean' ? 8 : 4;

/** Compares two values as Mongo orders them (Dates by instant, other objects by their JSON). */
function compare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return 0;
  if (ra === 2) return (a as number) - (b as number);
  if (ra === 8) return Number(a) - Number(b);
  const [x, y] = ra === 3 ? [a as string, b as string] : ra === 9 ? [(a as { iso: string }).iso, (b as { iso: string }).iso] : [canonical(a), canonical(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

const same = (a: unknown, b: unknown) => canonical(a ?? null) === canonical(b ?? null);

/** Equality as `$match` tests it: a missing field equals null; an array matches when one element does. */
function equals(value: unknown, target: unknown): boolean {
  if (Array.isArray(value) && !Array.isArray(target)) return value.some((v) => same(v, target));
  return same(value, target);
}

const list = (op: string, arg: unknown): unknown[] => {
  if (!Array.isArray(arg)) throw invalid(`$match: ${op} needs an array.`);
  return arg;
};

/** A comparison matches values of the same type only (Mongo's type bracketing); on an array, any element. */
const comparison = (test: (c: number) => boolean) => (value: unknown, arg: unknown) => {
  const one = (v: unknown) => v !== undefined && v !== null && rank(v) === rank(arg) && test(compare(v, arg));
  return Array.isArray(value) && !Array.isArray(arg) ? value.some(one) : one(value);
};

const OPERATORS: Record<string, (value: unknown, arg: unknown, op: string) => boolean> = {
  $eq: (v, a) => equals(v, a),
  $ne: (v, a) => !equals(v, a),
  $gt: comparison((c) => c > 0),
  $gte: comparison((c) => c >= 0),
  $lt: comparison((c) => c < 0),
  $lte: comparison((c) => c <= 0),
  $in: (v, a, op) => list(op, a).some((t) => equals(v, t)),
  $nin: (v, a, op) => !list(op, a).some((t) => equals(v, t)),
  $exists: (v, a) => (v !== undefined) === Boolean(a),
};

function operatorMatches(value: unknown, op: string, arg: unknown): boolean {
  const operator = OPERATORS[op];
  if (!operator) throw invalid(`$match after the first stages supports ${Object.keys(OPERATORS).join(', ')}, $and, $or and $nor; not ${op}.`);
  return operator(value, arg, op);
}

/**
 * `$match` over computed documents (after `$group` or `$project`), where SQL cannot reach. Leading
 * `$match` stages never come here: they are compiled to SQL by the where compiler.
 */
function matches(doc: Doc, cond: unknown): boolean {
  if (!isPlainObject(cond)) throw invalid('$match needs an object of conditions.');
  return Object.entries(cond).every(([key, c]) => {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(c) || c.length === 0) throw invalid(`$match: ${key} needs a non-empty array of conditions.`);
      if (key === '$and') return c.every((sub) => matches(doc, sub));
      const any = c.some((sub) => matches(doc, sub));
      return key === '$or' ? any : !any;
    }
    if (!PATH.test(key)) throw invalid(`$match: ${key} is not a field name.`);
    const value = getPath(doc, key);
    if (isPlainObject(c) && Object.keys(c).length > 0 && Object.keys(c).every((k) => k.startsWith('$'))) {
      return Object.entries(c).every(([op, arg]) => operatorMatches(value, op, arg));
    }
    return equals(value, c);
  });
}

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

/** `$group` accumulators, each fed the value of its expression for every object of the group. */
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
};

/** A group key as Parse answers it: a Pointer groups by its objectId; a missing value is null. */
const groupKey = (value: unknown): unknown => {
  if (isPlainObject(value) && value.__type === 'Pointer') return value.objectId;
  if (isPlainObject(value) && value.__type === undefined) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, groupKey(v)]));
  return value ?? null;
};

/** `$group`: `{_id: <expression>, <field>: {<accumulator>: <expression>}}`; results carry the key as `objectId` (Parse). */
function group(docs: Doc[], spec: unknown): Doc[] {
  if (!isPlainObject(spec)) throw invalid('$group needs an object such as {"_id": "$field", "total": {"$sum": "$amount"}}.');
  if ('objectId' in spec) throw invalid("Cannot use 'objectId' in aggregation stage $group; name the group key _id.");
  if (!('_id' in spec)) throw invalid('Invalid parameter for query: group. Missing key _id.');
  const fields = Object.entries(spec)
    .filter(([k]) => k !== '_id')
    .map(([name, acc]) => {
      if (name.startsWith('$') || name.includes('.')) throw invalid(`$group: ${name} cannot be an output field name.`);
      const [op, arg] = isPlainObject(acc) && Object.keys(acc).length === 1 ? Object.entries(acc)[0]! : [];
      if (!op || !ACCUMULATORS[op]) throw invalid(`$group.${name} must be one accumulator: ${Object.keys(ACCUMULATORS).join(', ')}.`);
      return { name, op, arg };
    });
  const groups = new Map<string, { key: unknown; accs: Accumulator[] }>();
  for (const doc of docs) {
    const key = groupKey(evaluate(doc, spec._id, '$group._id'));
    const id = canonical(key);
    let entry = groups.get(id);
    if (!entry) groups.set(id, (entry = { key, accs: fields.map((f) => ACCUMULATORS[f.op]!()) }));
    fields.forEach((f, i) => entry.accs[i]!.add(evaluate(doc, f.arg, `$group.${f.name}`)));
  }
  return [...groups.values()].map((g) => ({ objectId: g.key, ...Object.fromEntries(fields.map((f, i) => [f.name, g.accs[i]!.result()])) }));
}

function setPath(doc: Doc, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = doc;
  for (const part of parts.slice(0, -1)) at = (isPlainObject(at[part]) ? at[part] : (at[part] = {})) as Doc;
  at[parts.at(-1)!] = value;
}

function deletePath(doc: Doc, path: string): void {
  const parts = path.split('.');
  let at: unknown = doc;
  for (const part of parts.slice(0, -1)) at = isPlainObject(at) ? at[part] : undefined;
  if (isPlainObject(at)) delete at[parts.at(-1)!];
}

/** `$project`: `{field: 1 | 0 | "$other" | {$literal: v}}`; inclusion and exclusion do not mix, except for the id. */
function project(docs: Doc[], spec: unknown): Doc[] {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid('$project needs an object such as {"name": 1, "total": "$amount"}.');
  let keepId = true;
  const include: string[] = [];
  const exclude: string[] = [];
  const computed: Array<[string, unknown]> = [];
  for (const [rawKey, value] of Object.entries(spec)) {
    const key = rawKey === '_id' ? 'objectId' : rawKey;
    if (!PATH.test(key)) throw invalid(`$project: ${rawKey} is not a field name.`);
    const flag = value === 1 || value === true ? 1 : value === 0 || value === false ? 0 : undefined;
    if (key === 'objectId' && flag !== undefined) keepId = flag === 1;
    else if (flag === 1) include.push(key);
    else if (flag === 0) exclude.push(key);
    else computed.push([key, value]);
  }
  if (exclude.length && (include.length || computed.length)) throw invalid('$project cannot mix exclusion (0) with inclusion (1) or computed fields, except for _id.');
  return docs.map((doc) => {
    if (exclude.length || (!include.length && !computed.length)) {
      const out = structuredClone(doc);
      for (const key of exclude) deletePath(out, key);
      if (!keepId) delete out.objectId;
      return out;
    }
    const out: Doc = {};
    if (keepId && doc.objectId !== undefined) out.objectId = doc.objectId;
    for (const key of include) {
      const value = getPath(doc, key);
      if (value !== undefined) setPath(out, key, value);
    }
    for (const [key, expr] of computed) {
      const value = evaluate(doc, expr, `$project.${key}`);
      if (value !== undefined) setPath(out, key, value);
    }
    return out;
  });
}

const sortSpec = (spec: unknown): Array<[string, 1 | -1]> => {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid('$sort needs an object such as {"score": -1}.');
  return Object.entries(spec).map(([key, dir]) => {
    if (!PATH.test(key) || (dir !== 1 && dir !== -1)) throw invalid(`$sort: ${key} needs 1 (ascending) or -1 (descending).`);
    return [key, dir];
  });
};

const count = (spec: unknown, n: number): Doc[] => {
  if (typeof spec !== 'string' || spec === '' || spec.startsWith('$') || spec.includes('.')) throw invalid('$count needs the name of the output field, e.g. {"$count": "total"}.');
  return n > 0 ? [{ [spec]: n }] : [];
};

const nonNegative = (name: string, spec: unknown, min: 0 | 1): number => {
  if (typeof spec !== 'number' || !Number.isInteger(spec) || spec < min) throw invalid(`${name} needs an integer of at least ${min}.`);
  return spec;
};

/** Runs one stage in JavaScript. */
function apply(docs: Doc[], { name, spec }: Stage): Doc[] {
  switch (name) {
    case '$match':
      return docs.filter((d) => matches(d, spec));
    case '$group':
      return group(docs, spec);
    case '$project':
      return project(docs, spec);
    case '$sort': {
      const keys = sortSpec(spec);
      return [...docs].sort((a, b) => {
        for (const [key, dir] of keys) {
          const c = compare(getPath(a, key), getPath(b, key));
          if (c !== 0) return dir * c;
        }
        return 0;
      });
    }
    case '$limit':
      return docs.slice(0, nonNegative('$limit', spec, 1));
    case '$skip':
      return docs.slice(nonNegative('$skip', spec, 0));
    case '$count':
      return count(spec, docs.length);
  }
}

/** The stages of a pipeline: an array of one-key objects, or one object of stages (Parse accepts both). */
function readPipeline(raw: unknown): Stage[] {
  const value = jsonParam(raw);
  const list = Array.isArray(value) ? value : isPlainObject(value) ? Object.entries(value).map(([k, v]) => ({ [k]: v })) : undefined;
  if (!list) throw invalid('pipeline must be a JSON array of stages, e.g. [{"$group": {"_id": "$field"}}].');
  return list.map((stage, i) => {
    if (!isPlainObject(stage)) throw invalid(`pipeline[${i}] must be an object with one stage, e.g. {"$match": {...}}.`);
    const keys = Object.keys(stage);
    if (keys.length !== 1) throw invalid(`Pipeline stages should only have one key but found ${keys.join(', ') || 'none'}.`);
    const name = keys[0]!;
    if (!(STAGES as readonly string[]).includes(name)) throw invalid(`Invalid aggregate stage ${name}: Backyard supports ${STAGES.join(', ')}.`);
    return { name: name as Stage['name'], spec: stage[name] };
  });
}

/**
 * Runs a pipeline. Leading `$match` stages become one `where` that the query compiler turns into
 * SQL; a `$count` right after them is a SQL count; a `$sort` on plain fields and the `$skip` and
 * `$limit` stages after it become ORDER BY, OFFSET and LIMIT. The remaining stages run over the
 * fetched objects (in their API form) in JavaScript.
 * @throws ParseError 102 for a bad stage, or when more than MAX_AGGREGATE_ROWS objects would be read.
 */
export function runPipeline(engine: DataEngine, className: string, stages: Stage[], where: unknown): Doc[] {
  const matchStages: unknown[] = where === undefined ? [] : [where];
  let i = 0;
  for (; stages[i]?.name === '$match'; i++) {
    if (!isPlainObject(stages[i]!.spec)) throw invalid('$match needs an object of conditions.');
    matchStages.push(stages[i]!.spec);
  }
  const filter = matchStages.length === 0 ? {} : matchStages.length === 1 ? matchStages[0] : { $and: matchStages };
  const storage = engine.storage;
  if (stages[i]?.name === '$count' && i === stages.length - 1) return count(stages[i]!.spec, storage.count(className, { where: filter }));

  let order: string | undefined;
  const sort = stages[i]?.name === '$sort' ? sortSpec(stages[i]!.spec) : undefined;
  if (sort?.every(([key]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))) {
    order = sort.map(([key, dir]) => `${dir < 0 ? '-' : ''}${key === '_id' ? 'objectId' : key}`).join(',');
    i++;
  }
  let skip = 0;
  let limit = Infinity;
  for (; stages[i]?.name === '$skip' || stages[i]?.name === '$limit'; i++) {
    const { name, spec } = stages[i]!;
    if (name === '$skip') {
      const n = nonNegative('$skip', spec, 0);
      skip += n;
      limit = Math.max(0, limit - n);
    } else limit = Math.min(limit, nonNegative('$limit', spec, 1));
  }
  if (limit > MAX_AGGREGATE_ROWS) {
    const available = Math.max(0, storage.count(className, { where: filter }) - skip);
    if (available > MAX_AGGREGATE_ROWS) {
      throw invalid(`This aggregation would read ${available} objects; at most ${MAX_AGGREGATE_ROWS}. Narrow it with a leading $match or $limit.`);
    }
    limit = available;
  }
  // Without a $sort, objects come in creation order (Mongo's natural order, for $first and $last).
  const rows = limit === 0 ? [] : storage.find(className, { where: filter, order: order ?? 'createdAt', skip, limit });
  return stages.slice(i).reduce((docs, stage) => apply(docs, stage), rows.map((r) => engine.toJson(className, r)));
}

/**
 * The distinct values of a field (`distinct=<field>`, with an optional `where`): missing and null
 * values are left out and array elements count one by one (Mongo's `distinct`).
 */
function distinctValues(engine: DataEngine, className: string, field: string, where: unknown): unknown[] {
  if (!PATH.test(field)) throw invalid(`distinct: ${field} is not a field name.`);
  const docs = runPipeline(engine, className, [], where);
  const seen = new Map<string, unknown>();
  for (const doc of docs) {
    const value = getPath(doc, field);
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null) seen.set(canonical(v), v);
  }
  return [...seen.values()];
}

/**
 * `GET /aggregate/<ClassName>` (Parse REST guide, "Aggregate"; master key only): `distinct=<field>`
 * with an optional `where` answers `{results: [values]}`; `pipeline` (a JSON array of `$match`,
 * `$group`, `$project`, `$sort`, `$limit`, `$skip`, `$count` stages, in the query string or the
 * SDK's body, or stages as top-level parameters) answers `{results: [documents]}`. `$group` results
 * carry the group key as `objectId`, as Parse Server answers them. A `where` beside a pipeline acts
 * as a leading `$match`. An unknown class answers no results.
 * @throws ParseError 102 for unknown stages, operators and parameters; 103 for a bad class name.
 */
export function aggregateRoutes(router: DataRouter): void {
  router.on('GET', '/aggregate/:className', (req, { className }) => {
    requireMaster(req);
    checkClassName(className!);
    const { distinct, where, pipeline, ...rest } = req.query;
    const stageParams: Doc = {};
    for (const [key, value] of Object.entries(rest)) {
      if (key.startsWith('$')) stageParams[key] = jsonParam(value);
      else if (!IGNORED.has(key)) throw invalid(`Invalid parameter for query: ${key}. Use distinct, where or pipeline.`);
    }
    const filter = where === undefined ? undefined : jsonParam(where);
    if (filter !== undefined && !isPlainObject(filter)) throw invalid('where must be a JSON object.');
    if (distinct !== undefined) {
      const field = jsonParam(distinct);
      if (typeof field !== 'string') throw invalid('distinct needs a field name.');
      return ok({ results: distinctValues(req.engine, className!, field, filter) });
    }
    if (pipeline === undefined && Object.keys(stageParams).length === 0) throw invalid('aggregate needs distinct=<field> or a pipeline of stages.');
    const stages = readPipeline(pipeline ?? stageParams);
    if (!req.engine.schema.has(className!)) {
      stages.forEach((s) => apply([], s)); // still answers 102 for malformed stages
      return ok({ results: [] });
    }
    return ok({ results: runPipeline(req.engine, className!, stages, filter) });
  });
}
