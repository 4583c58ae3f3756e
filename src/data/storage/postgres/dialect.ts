/**
 * The query compiler's SQL for PostgreSQL (query/dialect.ts): JSONB operators over the
 * layout of layout.ts. A field's value is the jsonb at its path, so equality is type-exact by itself
 * (`'1'::jsonb <> '"1"'::jsonb`) and numbers order numerically; strings, Dates (their `iso`), Files
 * and Pointers compare as text `COLLATE "C"`, byte by byte as Mongo does, whatever the database's
 * collation. Indexes are built over these same expressions (adapter.ts, `indexExpression`).
 * Regular expressions become PostgreSQL's (regex.ts); `$text`, distances and polygons are plain SQL.
 */
import type { Dialect, JsonKind, Operand, SqlFragment, Target } from '../../query/dialect.js';
import { foldText, parseTextSearch } from '../../query/pattern.js';
import { FALSE, and, frag } from '../../query/sql.js';
import { columnOperand, type GeoPoint, type Literal } from '../../query/values.js';
import { extendPath, fieldPath, type FieldPath } from '../../fieldPath.js';
import { bytewise, fieldColumnName, jsonAt, pathLiteral, PUBLIC_READ, quoteIdent, textAt, type FieldColumnKind } from './layout.js';
import { postgresRegex } from './regex.js';

/** Limits a find writes into its statement's text (`limitClause`); larger ones are bound. */
const MAX_LITERAL_LIMIT = 1000;

/** A target over a jsonb expression (`base`), reading sub-paths with `#>`/`#>>`. */
function jsonTarget(kind: 'data' | 'element', base: string, path: FieldPath | undefined, fieldColumn?: Target['fieldColumn']): Target {
  const full = (sub: readonly string[]): FieldPath | undefined =>
    path ? extendPath(path, sub) : sub.length ? fieldPath(sub, (key) => new Error(`Not a field path: ${key}`)) : undefined;
  const at = (sub: readonly string[] = []) => {
    const whole = full(sub);
    return whole ? `(${base} #> ${pathLiteral(whole)})` : base;
  };
  const textAt = (sub: readonly string[] = []) => {
    const whole = full(sub);
    return whole ? `(${base} #>> ${pathLiteral(whole)})` : `(${base} #>> '{}')`;
  };
  return {
    kind,
    at,
    textAt,
    numberAt: (sub = []) => `(CASE WHEN jsonb_typeof(${at(sub)}) = 'number' THEN ${at(sub)}::float8 END)`,
    typeAt: (sub = []) => `jsonb_typeof(${at(sub)})`,
    fieldColumn,
  };
}

/** A text column (objectId, createdAt, updatedAt, a relation's relatedId). */
function textTarget(kind: 'column' | 'relation', expr: (sub: readonly string[]) => string, extra: Partial<Target>): Target {
  return {
    kind,
    at: (sub = []) => expr(sub),
    textAt: (sub = []) => expr(sub),
    numberAt: () => 'NULL',
    typeAt: (sub = []) => (expr(sub) === 'NULL' ? 'NULL' : `'string'`),
    ...extra,
  };
}

/** Combining marks of the scripts people write most, dropped for a diacritic-insensitive `$text`. */
const COMBINING_MARKS = '[\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f]';

/** SQL of a string folded as pattern.ts's `foldText` folds it. */
function foldSql(text: string, caseSensitive: boolean, diacriticSensitive: boolean): string {
  const plain = diacriticSensitive ? text : `regexp_replace(normalize(${text}, NFD), '${COMBINING_MARKS}', '', 'g')`;
  return caseSensitive ? plain : `lower(${plain})`;
}

/** Letters and digits of any script, as `$text` splits words (pattern.ts, WORD). */
const NOT_WORD = '[^[:alnum:]]';

/**
 * The Dialect of the tables of one app's schema.
 * @param fieldColumn the typed column (layout.ts) a class table has of a top-level field, if any: the
 *   adapter answers from the columns it saw in the catalog, so that no statement names one that is not there.
 */
export function postgresDialect(schema: string, fieldColumn: (className: string, field: string) => FieldColumnKind | undefined = () => undefined): Dialect {
  const qualified = (table: string) => `${quoteIdent(schema)}.${quoteIdent(table)}`;
  return {
    classTable: (className) => qualified(`cls_${className}`),
    relationTable: (ownerClass, field) => qualified(`_Join:${field}:${ownerClass}`),

    dataTarget: (alias, path, className) => {
      const kind = className !== undefined && path.length === 1 ? fieldColumn(className, path[0]!) : undefined;
      return jsonTarget('data', `${alias}.data`, path, kind && { sql: `${alias}.${quoteIdent(fieldColumnName(path[0]!, kind))}`, kind });
    },
    columnTarget: (alias, column) => textTarget('column', (sub) => (sub.length ? 'NULL' : `${alias}.${quoteIdent(column)}`), { column }),
    elementTarget: (each, base) => jsonTarget('element', `${each}.value`, base),
    relationTarget: (join, className) =>
      textTarget('relation', (sub) => (sub.length === 1 && sub[0] === 'objectId' ? `${join}."relatedId"` : 'NULL'), { className }),

    elements: (alias, path, each) => {
      const array = `(${alias}.data #> ${pathLiteral(path)})`;
      return `jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} END) AS ${each}(value)`;
    },

    typeIs: (typeSql, kinds: readonly JsonKind[]) => (kinds.length === 1 ? `${typeSql} = '${kinds[0]}'` : `${typeSql} IN (${kinds.map((k) => `'${k}'`).join(',')})`),

    operand(t: Target, lit: Exclude<Literal, { kind: 'null' }>): Operand | undefined {
      if (t.kind === 'column') return columnOperand(t, lit);
      if (t.kind === 'relation') {
        if (lit.kind !== 'pointer' || (t.className !== undefined && lit.className !== undefined && t.className !== lit.className)) return undefined;
        return { expr: t.textAt(['objectId']), param: lit.objectId, placeholder: '?', group: 'pointer' };
      }
      const text = (sub: string[], param: string, group: string): Operand => ({
        expr: bytewise(t.textAt(sub)),
        guard: frag(`${t.typeAt(sub)} = 'string'`),
        param,
        placeholder: '?',
        group,
      });
      const json = (kinds: string, param: unknown, group: string): Operand => ({
        expr: t.at(),
        guard: frag(`${t.typeAt()} ${kinds}`),
        param: JSON.stringify(param),
        placeholder: '?::jsonb',
        group,
      });
      // A typed column holds only values of its kind (NULL for any other): compared with no guard,
      // so that an index on it answers alone.
      if (t.fieldColumn?.kind === 'string' && lit.kind === 'string') return { expr: t.fieldColumn.sql, param: lit.value, placeholder: '?', group: 'string', exact: true };
      if (t.fieldColumn?.kind === 'number' && lit.kind === 'number') return { expr: t.fieldColumn.sql, param: lit.value, placeholder: '?::float8', group: 'number:column', exact: true };
      switch (lit.kind) {
        case 'number':
          // jsonb equality is type-exact, and compare() bounds a range to numbers: no guard, so the
          // planner estimates the range from the index's statistics (a guard's 0.5% misleads it).
          return { expr: t.at(), param: JSON.stringify(lit.value), placeholder: '?::jsonb', group: 'number' };
        case 'string':
          return text([], lit.value, 'string');
        case 'boolean':
          return json(`= 'boolean'`, lit.value, String(lit.value));
        case 'date':
          return text(['iso'], lit.iso, 'date');
        case 'file':
          return text(['name'], lit.name, 'file');
        case 'pointer':
          return {
            expr: t.textAt(['objectId']),
            guard: lit.className === undefined ? frag(`${t.textAt(['__type'])} = 'Pointer'`) : frag(`${t.textAt(['className'])} = ?`, lit.className),
            param: lit.objectId,
            placeholder: '?',
            group: lit.className === undefined ? 'pointer' : `pointer:${lit.className}`,
          };
        case 'json':
          return { ...json(`IN ('object','array')`, undefined, 'json'), param: lit.json };
      }
    },

    isNull(t: Target): SqlFragment {
      if (t.kind === 'element') return frag(`${t.typeAt()} = 'null'`);
      if (t.kind === 'data') return frag(`coalesce(${t.typeAt()}, 'null') = 'null'`);
      return FALSE;
    },

    compare: (o, op) => {
      const test = `${o.expr} ${op} ${o.placeholder}`;
      if (o.group !== 'number') return test;
      // JSONB orders strings and null below numbers and booleans, arrays, objects above them; the
      // smallest JSON number a double can hold is above -1e400, and `false` is the least boolean.
      return op === '>' || op === '>=' ? `${test} AND ${o.expr} < 'false'::jsonb` : `${test} AND ${o.expr} >= '-1e400'::jsonb`;
    },

    // Under COLLATE "C", lower() folds only ASCII letters, as the i flag does without the u flag.
    lowerEquals: (t, lowered) => guardText(t, frag(`lower(${bytewise(t.textAt())}) = ?`, lowered)),

    regex: (t, pattern, flags) => guardText(t, frag(`${t.textAt()} ~ ?`, postgresRegex(pattern, flags))),

    textSearch: (t, term, caseSensitive, diacriticSensitive) => {
      const search = parseTextSearch(foldText(term, caseSensitive, diacriticSensitive));
      if (search.words.length === 0 && search.phrases.length === 0) return FALSE;
      const folded = foldSql(t.textAt(), caseSensitive, diacriticSensitive);
      const word = (w: string) => frag(`${folded} ~ ?`, `(^|${NOT_WORD})${w}(${NOT_WORD}|$)`);
      const parts = [
        ...search.words.map(word),
        ...search.excluded.map((w) => {
          const f = word(w);
          return frag(`(${f.sql}) IS NOT TRUE`, ...f.params);
        }),
        ...search.phrases.map((p) => frag(`strpos(${folded}, ?) > 0`, p)),
      ];
      return guardText(t, and(parts));
    },

    distance: (t: Target, p: GeoPoint) => {
      const lat = t.numberAt(['latitude']);
      const lng = t.numberAt(['longitude']);
      return frag(
        `(2 * asin(least(1, sqrt(power(sin(radians(?::float8 - ${lat}) / 2), 2) + cos(radians(${lat})) * cos(radians(?::float8)) * power(sin(radians(?::float8 - ${lng}) / 2), 2)))))`,
        p.latitude,
        p.latitude,
        p.longitude,
      );
    },

    pointInPolygon: (t, ring) =>
      frag(`?::polygon @> point(${t.numberAt(['longitude'])}, ${t.numberAt(['latitude'])})`, ring.map(([lat, lng]) => `(${lng},${lat})`).join(',')),

    polygonHolds: (t, p) => {
      const coords = t.at(['coordinates']);
      const corners = `(SELECT string_agg(format('(%s,%s)', c.value->>1, c.value->>0), ',' ORDER BY c.n) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${coords}) = 'array' THEN ${coords} END) WITH ORDINALITY AS c(value, n))`;
      return frag(`(${corners})::polygon @> point(?::float8, ?::float8)`, p.longitude, p.latitude);
    },

    scalarKey: (t) => (t.kind === 'column' || t.kind === 'relation' ? `to_jsonb(${t.at()})` : t.at()),

    orderTerm: (expr, descending) => `${expr} ${descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`,

    // A typed column sorts as its field's values do (a String field holds strings, a Number field
    // numbers), missing and null alike first, as in Parse Server's typed columns.
    sortKey: (t, sub, textual) =>
      t.kind === 'column' ? t.at() : sub.length === 0 && t.fieldColumn?.kind === (textual ? 'string' : 'number') ? t.fieldColumn!.sql : textual ? bytewise(t.textAt(sub)) : t.at(sub),

    // `_publicRead` (layout.ts) is in every index on fields: a public row found through one is never
    // read for its ACL, so that a count of public rows is an index-only scan.
    readableBy: (alias, principals) => {
      if (principals.length === 0) return frag(`${alias}.acl IS NULL`);
      const others = principals.filter((p) => p !== '*');
      const grants = others.map(() => `jsonb_extract_path_text(${alias}.acl, ?::text, 'read') = 'true'`);
      const open = principals.includes('*') ? `${alias}.${PUBLIC_READ}` : `${alias}.acl IS NULL`;
      return others.length === 0 ? frag(open) : frag(`(${open} OR ${grants.join(' OR ')})`, ...others);
    },

    countAll: 'count(*)::int',

    // Written into the text up to MAX_LITERAL_LIMIT. A named statement's generic plan (database.ts)
    // does not know a bound limit: PostgreSQL assumes a tenth of the rows are wanted, and on a small
    // table reads them all in a seq scan rather than the few an index names (measured at 2,000
    // objects: 0.13 ms against 0.05 ms for an equality matching 100). Apps use few limits, so each
    // makes one more prepared statement; a larger one is bound.
    limitClause: (limit) => (Number.isSafeInteger(limit) && limit >= 0 && limit <= MAX_LITERAL_LIMIT ? frag(`LIMIT ${limit}`) : frag('LIMIT ?', limit)),

    // numeric rather than float8: sums of integers stay exact.
    numberIn: (alias, path) => `(CASE WHEN jsonb_typeof(${jsonAt(alias, path)}) = 'number' THEN (${jsonAt(alias, path)})::numeric END)`,

    groupKey: (alias, path) => (path === undefined ? 'NULL::text' : textAt(alias, path)),

    groupNumber: (expr) => `(${expr})::float8`,
  };
}

/** `test` on a string at `t` (a column always holds text). */
function guardText(t: Target, test: SqlFragment): SqlFragment {
  if (t.kind === 'relation') return FALSE;
  return t.kind === 'column' ? test : and([frag(`${t.typeAt()} = 'string'`), test]);
}
