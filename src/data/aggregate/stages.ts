/**
 * The stages of a pipeline: reading them from a request, and compiling each into a function over
 * the documents of the previous stage (`$match`, `$group`, `$project`, `$sort`, `$limit`, `$skip`,
 * `$count`; `$geoNear` is run.ts's, as it must come first).
 */
import type { FieldType } from '../types.js';
import { compileGroup } from './group.js';
import { compileMatch, matchToWhere } from './match.js';
import { compileProject } from './project.js';
import { compare, getPath, invalid, isPlainObject, PATH, pathParts, type Doc } from './values.js';

export const STAGES = ['$match', '$group', '$project', '$sort', '$limit', '$skip', '$count', '$geoNear'] as const;

export interface Stage {
  name: (typeof STAGES)[number];
  spec: unknown;
}

/** A stage compiled: the documents it answers for the documents it gets. */
export type RunStage = (docs: Doc[]) => Doc[];

/** A query-string value is JSON text; the SDK's body carries it decoded. */
export const jsonParam = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

/**
 * The stages of a pipeline: an array of one-key objects, or one object of stages (Parse accepts both).
 * @throws ParseError 102 for another shape, a stage with several keys or an unknown stage.
 */
export function readPipeline(raw: unknown): Stage[] {
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

/** `$sort`'s keys and directions. @throws ParseError 102 unless every direction is 1 or -1. */
export const sortSpec = (spec: unknown): Array<[string, 1 | -1]> => {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid('$sort needs an object such as {"score": -1}.');
  return Object.entries(spec).map(([key, dir]) => {
    if (!PATH.test(key) || (dir !== 1 && dir !== -1)) throw invalid(`$sort: ${key} needs 1 (ascending) or -1 (descending).`);
    return [key, dir];
  });
};

/** `$count`'s output field. @throws ParseError 102 for an empty name, or one with `$` or `.`. */
export const countField = (spec: unknown): string => {
  if (typeof spec !== 'string' || spec === '' || spec.startsWith('$') || spec.includes('.')) throw invalid('$count needs the name of the output field, e.g. {"$count": "total"}.');
  return spec;
};

/** `$count`'s answer: no document at all when nothing was counted (MongoDB's). */
export const countResult = (field: string, n: number): Doc[] => (n > 0 ? [{ [field]: n }] : []);

/** `$limit` (min 1) and `$skip` (min 0), as a safe integer (larger ones are 2^53 - 1). @throws ParseError 102 for anything else. */
export const nonNegative = (name: string, spec: unknown, min: 0 | 1): number => {
  if (typeof spec !== 'number' || !Number.isInteger(spec) || spec < min) throw invalid(`${name} needs an integer of at least ${min}.`);
  // As findParams.ts caps a find's: past 2^53 - 1 every row or none, in terms the databases take.
  return Math.min(spec, Number.MAX_SAFE_INTEGER);
};

function compileSort(spec: unknown): RunStage {
  const keys = sortSpec(spec).map(([key, dir]) => [pathParts(key), dir] as const);
  return (docs) =>
    [...docs].sort((a, b) => {
      for (const [parts, dir] of keys) {
        const c = compare(getPath(a, parts), getPath(b, parts));
        if (c !== 0) return dir * c;
      }
      return 0;
    });
}

/**
 * Compiles one stage that runs over documents in memory; `fields` are the class's, to read `$match`
 * values as matchToWhere does.
 * @throws ParseError 102 for a malformed stage, and for `$geoNear` anywhere (only run.ts takes it, first).
 */
export function compileStage({ name, spec }: Stage, fields: Readonly<Record<string, FieldType>> | undefined): RunStage {
  switch (name) {
    case '$match': {
      const test = compileMatch(matchToWhere(fields, spec));
      return (docs) => docs.filter(test);
    }
    case '$group':
      return compileGroup(spec);
    case '$project': {
      const project = compileProject(spec);
      return (docs) => docs.map(project);
    }
    case '$sort':
      return compileSort(spec);
    case '$limit': {
      const n = nonNegative('$limit', spec, 1);
      return (docs) => docs.slice(0, n);
    }
    case '$skip': {
      const n = nonNegative('$skip', spec, 0);
      return (docs) => docs.slice(n);
    }
    case '$count': {
      const field = countField(spec);
      return (docs) => countResult(field, docs.length);
    }
    case '$geoNear':
      throw invalid('$geoNear is only valid as the first stage in a pipeline.');
  }
}
