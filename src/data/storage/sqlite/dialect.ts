/**
 * The query compiler's SQL for SQLite (query/dialect.ts): JSON1's `json_extract`/`json_type`/
 * `json_each` over the layout of layout.ts, and the functions of query/functions.ts for what SQLite
 * lacks (regular expressions, `$text`, geo). `json_extract` answers a SQL number, text, 1/0 for
 * booleans and JSON text for arrays and objects, so every comparison is guarded by `json_type`.
 */
import type { Dialect, JsonKind, Operand, SqlFragment, Target } from '../../query/dialect.js';
import { FN } from './functions.js';
import { parseTextSearch } from '../../query/pattern.js';
import { FALSE, and, frag } from '../../query/sql.js';
import { columnOperand, type GeoPoint, type Literal } from '../../query/values.js';
import { extendPath, fieldPath } from '../../fieldPath.js';
import { classTable, fieldExpr, fieldTypeExpr, jsonPath, relationTable } from './layout.js';

/** `json_type` names of each JSON kind. */
const KIND_NAMES: Readonly<Record<JsonKind, readonly string[]>> = {
  object: ['object'],
  array: ['array'],
  string: ['text'],
  number: ['integer', 'real'],
  boolean: ['true', 'false'],
  null: ['null'],
};

const target = (kind: Target['kind'], at: (sub: readonly string[]) => string, typeAt: (sub: readonly string[]) => string, extra: Partial<Target> = {}): Target => ({
  kind,
  at: (sub = []) => at(sub),
  textAt: (sub = []) => at(sub),
  numberAt: (sub = []) => at(sub),
  typeAt: (sub = []) => typeAt(sub),
  ...extra,
});

const typeClass = (typeSql: string) => `CASE ${typeSql} WHEN 'real' THEN 'integer' ELSE ${typeSql} END`;

export const sqliteDialect: Dialect = {
  classTable,
  relationTable,

  dataTarget: (alias, path) =>
    target(
      'data',
      (sub) => fieldExpr(alias, extendPath(path, sub)),
      (sub) => fieldTypeExpr(alias, extendPath(path, sub)),
    ),

  columnTarget: (alias, column) =>
    target(
      'column',
      (sub) => (sub.length ? 'NULL' : fieldExpr(alias, fieldPath([column], (key) => new Error(`Not a column: ${key}`)))),
      (sub) => (sub.length ? 'NULL' : `'text'`),
      { column },
    ),

  elementTarget: (each, base) => {
    const obj = `CASE WHEN ${each}.type = 'object' THEN ${each}.value END`;
    // An element's own sub-path (`['objectId']` of a pointer) when there is no base path.
    const within = (sub: readonly string[]) => (base ? extendPath(base, sub) : fieldPath(sub, (key) => new Error(`Not a field path: ${key}`)));
    return target(
      'element',
      (sub) => (base || sub.length ? `json_extract(${obj}, ${jsonPath(within(sub))})` : `${each}.value`),
      (sub) => (base || sub.length ? `json_type(${obj}, ${jsonPath(within(sub))})` : `${each}.type`),
    );
  },

  relationTarget: (join, className) =>
    target(
      'relation',
      (sub) => (sub.length === 1 && sub[0] === 'objectId' ? `${join}."relatedId"` : 'NULL'),
      (sub) => (sub.length === 1 && sub[0] === 'objectId' ? `'text'` : 'NULL'),
      { className },
    ),

  elements: (alias, path, each) => `json_each(${alias}.data, ${jsonPath(path)}) AS ${each}`,

  typeIs: (typeSql, kinds) => {
    const names = kinds.flatMap((k) => KIND_NAMES[k]);
    return names.length === 1 ? `${typeSql} = '${names[0]}'` : `${typeSql} IN (${names.map((n) => `'${n}'`).join(',')})`;
  },

  operand(t: Target, lit: Exclude<Literal, { kind: 'null' }>): Operand | undefined {
    if (t.kind === 'column') return columnOperand(t, lit);
    if (t.kind === 'relation') {
      if (lit.kind !== 'pointer' || (t.className !== undefined && lit.className !== undefined && t.className !== lit.className)) return undefined;
      return { expr: t.at(['objectId']), param: lit.objectId, placeholder: '?', group: 'pointer' };
    }
    const typed = (sub: string[], types: string, param: unknown, group: string): Operand => {
      // json_extract answers text only for a JSON string, or for an object or array as its JSON text
      // (starting with { or [); a number, boolean or null never equals text. So equality with text
      // that cannot be such JSON implies the string type, and needs no json_type read of the object.
      const exact = typeof param === 'string' && !/^[{[]/.test(param);
      return { expr: t.at(sub), guard: frag(`${t.typeAt(sub)} ${types}`), param, placeholder: '?', group: exact ? `${group}:exact` : group, exact };
    };
    switch (lit.kind) {
      case 'number':
        return typed([], `IN ('integer','real')`, lit.value, 'number');
      case 'string':
        return typed([], `= 'text'`, lit.value, 'string');
      case 'boolean':
        return typed([], lit.value ? `= 'true'` : `= 'false'`, lit.value ? 1 : 0, String(lit.value));
      case 'date':
        return typed(['iso'], `= 'text'`, lit.iso, 'date');
      case 'file':
        return typed(['name'], `= 'text'`, lit.name, 'file');
      case 'pointer':
        return {
          expr: t.at(['objectId']),
          guard: lit.className === undefined ? frag(`${t.at(['__type'])} = 'Pointer'`) : frag(`${t.at(['className'])} = ?`, lit.className),
          param: lit.objectId,
          placeholder: '?',
          group: lit.className === undefined ? 'pointer' : `pointer:${lit.className}`,
        };
      case 'json':
        return { ...typed([], `IN ('object','array')`, lit.json, 'json'), placeholder: 'json(?)' };
    }
  },

  isNull(t: Target): SqlFragment {
    if (t.kind === 'element') return frag(`${t.typeAt()} = 'null'`);
    if (t.kind === 'data') return frag(`${t.at()} IS NULL`);
    return FALSE;
  },

  compare: (o, op) => `${o.expr} ${op} ${o.placeholder}`,

  // SQLite's lower() folds exactly the ASCII letters, as the i flag does without the u flag.
  lowerEquals: (t, lowered) => guardText(t, frag(`lower(${t.at()}) = ?`, lowered)),

  regex: (t, pattern, flags) => guardText(t, frag(`${FN.regexp}(?, ?, ${t.at()})`, pattern, flags)),

  textSearch: (t, term, caseSensitive, diacriticSensitive) => {
    const search = parseTextSearch(term);
    if (search.words.length === 0 && search.phrases.length === 0) return FALSE;
    return guardText(t, frag(`${FN.text}(${t.at()}, ?, ?, ?)`, term, caseSensitive ? 1 : 0, diacriticSensitive ? 1 : 0));
  },

  distance: (t: Target, p: GeoPoint) => frag(`${FN.distance}(${t.at(['latitude'])}, ${t.at(['longitude'])}, ?, ?)`, p.latitude, p.longitude),

  pointInPolygon: (t, ring) => frag(`${FN.inPolygon}(${t.at(['latitude'])}, ${t.at(['longitude'])}, ?)`, JSON.stringify(ring)),

  polygonHolds: (t, p) => frag(`${FN.inPolygon}(?, ?, ${t.at(['coordinates'])})`, p.latitude, p.longitude),

  scalarKey: (t) => `${t.at()}, ${typeClass(t.typeAt())}`,

  orderTerm: (expr, descending) => `${expr} ${descending ? 'DESC' : 'ASC'}`,

  sortKey: (t, sub) => (t.kind === 'column' ? t.at() : t.at(sub)),

  readableBy: (alias, principals) => {
    // publicRead first: it is in every index on fields, so a public row found through one is never read for its ACL (classTables.ts).
    const others = principals.filter((p) => p !== '*');
    if (others.length === 0) return frag(`${alias}.publicRead = 1`);
    return frag(
      `(${alias}.publicRead = 1 OR EXISTS (SELECT 1 FROM json_each(${alias}.acl) AS p WHERE p.key IN (${others.map(() => '?').join(', ')}) AND json_extract(p.value, '$.read') = 1))`,
      ...others,
    );
  },

  countAll: 'count(*)',

  // Written into the text: SQLite (3.53, as better-sqlite3 bundles it) plans with a bound LIMIT's
  // value (select.c, computeLimitRegisters through sqlite3ExprIsInteger), which marks the parameter
  // so that binding it again expires the statement and each run prepares it anew: 20 to 60 µs per
  // find here. A limit past 2^53 - 1 (no safe integer; SQLite refuses a REAL) is all rows anyway.
  limitClause: (limit) => {
    if (!Number.isInteger(limit) || limit < 0) throw new Error(`Not a row limit: ${limit}`);
    return frag(`LIMIT ${Math.min(limit, Number.MAX_SAFE_INTEGER)}`);
  },

  numberIn: (alias, path) => `CASE WHEN ${fieldTypeExpr(alias, path)} IN ('integer', 'real') THEN ${fieldExpr(alias, path)} END`,

  groupKey: (alias, path) => (path === undefined ? 'NULL' : fieldExpr(alias, path)),

  groupNumber: (expr) => expr,
};

/** `test` on a string at `t` (a column always holds text). */
function guardText(t: Target, test: SqlFragment): SqlFragment {
  if (t.kind === 'relation') return FALSE;
  return t.kind === 'column' ? test : and([frag(`${t.typeAt()} = 'text'`), test]);
}
