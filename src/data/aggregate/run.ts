/**
 * Runs an aggregation over a class. As much as SQL can do runs there (through the where compiler and
 * the storage adapter): leading `$match` stages or a first `$geoNear` as the `where`, a `$count` right
 * after them as a count, a `$sort` on plain fields and the `$skip`/`$limit` after it as ORDER BY, OFFSET
 * and LIMIT, or a `$group` of a shape the database answers alike (groupPlan.ts) as the storage's own
 * GROUP BY (StorageReads.group). The stages after those run over the fetched objects (or groups),
 * compiled once (stages.ts).
 */
import type { DataStore } from '../store.js';
import { compileGeoNear, type GeoNear } from './geoNear.js';
import { planGroup } from './groupPlan.js';
import { matchToWhere } from './match.js';
import { compileStage, countField, countResult, nonNegative, sortSpec, type Stage } from './stages.js';
import { canonical, fromStageDoc, getPath, invalid, PATH, toStageDoc, type Doc } from './values.js';

/** Objects an aggregation may read into memory; a leading `$match`, `$limit` or `$count` avoids the limit. */
export const MAX_AGGREGATE_ROWS = 200_000;

const TOP_LEVEL = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The part of a pipeline that SQL answers: the where, and an order, skip and limit. */
interface SqlPart {
  filter: unknown;
  geo?: GeoNear;
  order?: string;
  skip: number;
  limit: number;
  /** `$count`'s field when the pipeline is only matches and a count. */
  count?: string;
  /** Index of the first stage left to run in memory. */
  rest: number;
}

const and = (conditions: unknown[]): unknown => (conditions.length === 0 ? {} : conditions.length === 1 ? conditions[0] : { $and: conditions });

function sqlPart(store: DataStore, className: string, stages: Stage[], where: unknown): SqlPart {
  const fields = store.schema.fields(className);
  const conditions: unknown[] = where === undefined ? [] : [where];
  let i = 0;
  let geo: GeoNear | undefined;
  if (stages[0]?.name === '$geoNear') {
    geo = compileGeoNear(stages[0].spec, fields);
    conditions.push(geo.where);
    i = 1;
  } else {
    for (; stages[i]?.name === '$match'; i++) conditions.push(matchToWhere(fields, stages[i]!.spec));
  }
  const part: SqlPart = { filter: and(conditions), geo, skip: 0, limit: Infinity, rest: i };
  if (geo) return part; // $geoNear's distance order comes first; later stages run in memory
  if (stages[i]?.name === '$count' && i === stages.length - 1) return { ...part, count: countField(stages[i]!.spec), rest: stages.length };
  const sort = stages[i]?.name === '$sort' ? sortSpec(stages[i]!.spec) : undefined;
  if (sort?.every(([key]) => TOP_LEVEL.test(key))) {
    part.order = sort.map(([key, dir]) => `${dir < 0 ? '-' : ''}${key === '_id' ? 'objectId' : key}`).join(',');
    i++;
  }
  for (; stages[i]?.name === '$skip' || stages[i]?.name === '$limit'; i++) {
    const { name, spec } = stages[i]!;
    if (name === '$skip') {
      const n = nonNegative('$skip', spec, 0);
      part.skip = Math.min(part.skip + n, Number.MAX_SAFE_INTEGER);
      part.limit = Math.max(0, part.limit - n);
    } else part.limit = Math.min(part.limit, nonNegative('$limit', spec, 1));
  }
  part.rest = i;
  return part;
}

/** The objects the SQL part selects, in API form. @throws ParseError 102 past MAX_AGGREGATE_ROWS. */
async function readObjects(store: DataStore, className: string, part: SqlPart): Promise<Doc[]> {
  let limit = part.limit;
  if (limit > MAX_AGGREGATE_ROWS) {
    const available = Math.max(0, (await store.countRows(className, part.filter as Record<string, unknown>)) - part.skip);
    if (available > MAX_AGGREGATE_ROWS) {
      throw invalid(`This aggregation would read ${available} objects; at most ${MAX_AGGREGATE_ROWS}. Narrow it with a leading $match or $limit.`);
    }
    limit = available;
  }
  if (limit === 0) return [];
  // Without a $sort, objects come in creation order (Mongo's natural order, for $first and $last);
  // after $geoNear, nearest first (the adapter's $nearSphere order applies when no order is given).
  const order = part.order ?? (part.geo ? undefined : 'createdAt');
  return (await store.rows(className, { where: part.filter, order, skip: part.skip, limit })).map((r) => store.toJson(className, r));
}

/**
 * Runs a pipeline (stages.ts's `readPipeline`) over `className`; `where` (a Parse where) acts as a
 * leading `$match`. Every stage is checked before anything is read; an unknown class answers [].
 * @throws ParseError 102 for a bad stage, or when more than MAX_AGGREGATE_ROWS objects would be read.
 */
export async function runPipeline(store: DataStore, className: string, stages: Stage[], where: unknown): Promise<Doc[]> {
  const part = sqlPart(store, className, stages, where);
  const fields = store.schema.fields(className);
  const rest = stages.slice(part.rest).map((s) => compileStage(s, fields));
  if (!store.schema.has(className)) return [];
  if (part.count !== undefined) return countResult(part.count, await store.countRows(className, part.filter as Record<string, unknown>));
  // A $group straight after the where, of a shape the database answers alike (groupPlan.ts), runs there.
  const group = !part.geo && part.order === undefined && part.skip === 0 && part.limit === Infinity && stages[part.rest]?.name === '$group' ? planGroup(stages[part.rest]!.spec, fields) : undefined;
  if (group) {
    let grouped: Doc[] = await store.groupRows(className, part.filter, group);
    if (rest.length === 1) return grouped;
    grouped = grouped.map(toStageDoc);
    for (const run of rest.slice(1)) grouped = run(grouped);
    return grouped.map(fromStageDoc);
  }
  let docs = await readObjects(store, className, part);
  if (rest.length === 0 && !part.geo) return docs;
  docs = docs.map(toStageDoc);
  if (part.geo) docs = part.geo.finish(docs);
  for (const run of rest) docs = run(docs);
  return docs.map(fromStageDoc);
}

/**
 * The distinct values of a field (`distinct=<field>`, with an optional `where`): missing and null
 * values are left out and array elements count one by one (Mongo's `distinct`).
 * @throws ParseError 102 for a bad field name or where.
 */
export async function distinctValues(store: DataStore, className: string, field: string, where: unknown): Promise<unknown[]> {
  if (!PATH.test(field)) throw invalid(`distinct: ${field} is not a field name.`);
  if (!store.schema.has(className)) return [];
  const docs = await readObjects(store, className, { filter: where ?? {}, skip: 0, limit: Infinity, rest: 0 });
  const seen = new Map<string, unknown>();
  for (const doc of docs) {
    const value = getPath(doc, field);
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null) seen.set(canonical(v), v);
  }
  return [...seen.values()];
}
