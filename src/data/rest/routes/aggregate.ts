import { jsonParam, readPipeline } from '../../aggregate/stages.js';
import { invalid, isPlainObject, type Doc } from '../../aggregate/values.js';
import { checkClassName } from '../../schema.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

/** Parameters besides `distinct`, `where` and `pipeline` that the JS SDK may send; they change nothing here. */
const IGNORED = new Set(['hint', 'explain', 'readPreference', 'rawValues', 'rawFieldNames']);

/**
 * `GET /aggregate/<ClassName>` (Parse REST guide, "Aggregate"; master key only): `distinct=<field>`
 * with an optional `where` answers `{results: [values]}`; `pipeline` (a JSON array of `$match`,
 * `$group`, `$project`, `$sort`, `$limit`, `$skip`, `$count` and a first `$geoNear`, in the query
 * string or the SDK's body, or stages as top-level parameters) answers `{results: [documents]}` with
 * MongoDB's semantics as MongoDB-backed Parse Server answers (src/data/aggregate/). A `where` beside a
 * pipeline acts as a leading `$match`. An unknown class answers no results.
 * @throws ParseError 102 for unknown stages, operators and parameters; 103 for a bad class name.
 */
export function aggregateRoutes(router: DataRouter): void {
  router.on('GET', '/aggregate/:className', async (req, { className }) => {
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
      return ok({ results: await req.services.aggregate.distinct(className!, field, filter) });
    }
    if (pipeline === undefined && Object.keys(stageParams).length === 0) throw invalid('aggregate needs distinct=<field> or a pipeline of stages.');
    return ok({ results: await req.services.aggregate.run(className!, readPipeline(pipeline ?? stageParams), filter) });
  });
}
