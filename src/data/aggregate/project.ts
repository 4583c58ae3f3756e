/**
 * `$project: {field: 1 | 0 | true | false | <expression>, nested: {field: ...}}` (MongoDB's manual):
 * inclusion keeps `objectId` unless `_id: 0`; exclusion (0) does not mix with inclusion or computed
 * fields, except for the id. Nested specs stand for dotted paths (`{a: {b: 1}}` is `{"a.b": 1}`).
 * Parse Server on PostgreSQL keeps only the included columns and drops the id and computed fields;
 * this follows MongoDB, as MongoDB-backed Parse Server answers.
 */
import { compileExpression, type Evaluate } from './expressions.js';
import { deletePath, getPath, invalid, isPlainObject, PATH, pathParts, setPath, type Doc } from './values.js';

/** The spec as `[path, value]` pairs, nested specs flattened. */
function flatten(spec: Record<string, unknown>, prefix: string): Array<[string, unknown]> {
  return Object.entries(spec).flatMap(([key, value]): Array<[string, unknown]> => {
    const path = prefix + key;
    if (isPlainObject(value) && !Object.keys(value).some((k) => k.startsWith('$'))) {
      if (Object.keys(value).length === 0) throw invalid(`$project: ${path} needs at least one field or an expression.`);
      return flatten(value, `${path}.`);
    }
    return [[path, value]];
  });
}

/**
 * Compiles a `$project` spec into a function of one document.
 * @throws ParseError 102 for an empty spec, a bad field name, mixed inclusion and exclusion or a bad expression.
 */
export function compileProject(spec: unknown): (doc: Doc) => Doc {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) throw invalid('$project needs an object such as {"name": 1, "total": "$amount"}.');
  let keepId = true;
  const include: Array<[string, string[]]> = [];
  const exclude: string[] = [];
  const computed: Array<[string, Evaluate]> = [];
  for (const [rawKey, value] of flatten(spec, '')) {
    if (!PATH.test(rawKey)) throw invalid(`$project: ${rawKey} is not a field name.`);
    const key = pathParts(rawKey).join('.');
    const flag = value === 1 || value === true ? 1 : value === 0 || value === false ? 0 : undefined;
    if (key === 'objectId' && flag !== undefined) keepId = flag === 1;
    else if (flag === 1) include.push([key, key.split('.')]);
    else if (flag === 0) exclude.push(key);
    else computed.push([key, compileExpression(value, `$project.${rawKey}`)]);
  }
  if (exclude.length && (include.length || computed.length)) throw invalid('$project cannot mix exclusion (0) with inclusion (1) or computed fields, except for _id.');
  if (exclude.length || (!include.length && !computed.length)) {
    return (doc) => {
      const out = structuredClone(doc);
      for (const key of exclude) deletePath(out, key);
      if (!keepId) delete out.objectId;
      return out;
    };
  }
  return (doc) => {
    const out: Doc = {};
    if (keepId && doc.objectId !== undefined) out.objectId = doc.objectId;
    for (const [key, parts] of include) {
      const value = getPath(doc, parts);
      if (value !== undefined) setPath(out, key, value);
    }
    for (const [key, evaluate] of computed) {
      const value = evaluate(doc);
      if (value !== undefined) setPath(out, key, value);
    }
    return out;
  };
}
