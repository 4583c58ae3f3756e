import { postgresQueryDb, sqliteQueryDb, type QueryDb } from './helpers/queryDb.js';
import { onPostgres } from './helpers/storage.js';
import { indexExpression } from '../src/data/storage/postgres/adapter.js';
import Database from 'better-sqlite3';
import { Query } from 'mingo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ParseError } from '../src/data/errors.js';
import { compileOrder, compileWhere, nearSphereOrder, type CompileOptions } from '../src/data/query/compile.js';
import { geoDistance, pointInPolygon } from '../src/data/query/functions.js';
import { readPattern } from '../src/data/query/regexSyntax.js';
import type { FieldType, SchemaLookup } from '../src/data/types.js';

// ---------- fixtures: Parse JSON values ----------
type Row = Record<string, unknown> & { objectId: string };
const ptr = (objectId: string, className = 'Owner') => ({ __type: 'Pointer', className, objectId });
const date = (s: string) => ({ __type: 'Date', iso: new Date(s).toISOString() });
const geo = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });
const file = (name: string) => ({ __type: 'File', name, url: `http://files/${name}` });
const square = (lat: number, lng: number, size: number) => ({
  __type: 'Polygon',
  coordinates: [[lat, lng], [lat + size, lng], [lat + size, lng + size], [lat, lng + size]],
});
const PARIS = geo(48.8566, 2.3522);
const LONDON = geo(51.5074, -0.1278);
const BERLIN = geo(52.52, 13.405);
const NEW_YORK = geo(40.7128, -74.006);
const TOKYO = geo(35.6762, 139.6503);
const FIJI = geo(-17.7134, 178.065);
const SAMOA = geo(-13.759, -172.1046);

const SCHEMA: Record<string, Record<string, FieldType>> = {
  T: {
    score: { type: 'Number' },
    name: { type: 'String' },
    done: { type: 'Boolean' },
    tags: { type: 'Array' },
    meta: { type: 'Object' },
    when: { type: 'Date' },
    owner: { type: 'Pointer', targetClass: 'Owner' },
    loc: { type: 'GeoPoint' },
    area: { type: 'Polygon' },
    doc: { type: 'File' },
    title: { type: 'String' },
    likes: { type: 'Relation', targetClass: 'Owner' },
  },
  Owner: { name: { type: 'String' }, age: { type: 'Number' }, city: { type: 'String' }, boss: { type: 'Pointer', targetClass: 'Owner' } },
};
const schema: SchemaLookup = { fields: (c) => SCHEMA[c] };

// `mixed` is not in the schema and holds values of every scalar type.
const T_ROWS: Row[] = [
  { objectId: 'r01', score: 5, name: 'alice', done: true, tags: ['a', 'b'], meta: { city: 'Paris', n: 1 }, when: date('2024-01-01'), owner: ptr('o1'), loc: PARIS, title: 'The quick brown fox', mixed: 1, doc: file('a.txt'), area: square(0, 0, 10) },
  { objectId: 'r02', score: '5', name: 'Bob', done: false, tags: ['b', 2], meta: { city: 'London', n: 2 }, when: date('2024-02-01'), owner: ptr('o2'), loc: LONDON, title: 'Quick thinking', mixed: true, doc: file('b.txt'), area: square(20, 20, 5) },
  { objectId: 'r03', score: 4, name: 'carol', tags: [1, 2, 3], meta: { city: 'Paris', n: 3, zip: '75001' }, when: date('2023-06-15'), owner: ptr('o1'), loc: BERLIN, title: 'brown bread', mixed: '1' },
  { objectId: 'r04', score: null, name: 'dave', done: true, tags: [], meta: {}, when: null, loc: NEW_YORK, title: 'Café au lait', mixed: 0, owner: null },
  { objectId: 'r05', name: 'Eve', tags: ['a', null], meta: { city: 'paris' }, mixed: false, loc: TOKYO, title: 'cafe noir', owner: ptr('o3') },
  { objectId: 'r06', score: 10, name: 'frank', done: false, tags: ['c', 'a', 'b'], owner: ptr('o3'), mixed: null, loc: FIJI, title: 'QUICK Brown' },
  { objectId: 'r07', score: 2.5, name: 'alice smith', tags: [true, 'true', 1], mixed: { a: 1 }, loc: SAMOA, owner: ptr('o4') },
  { objectId: 'r08', score: -1, name: 'Zed', tags: [['a', 'b'], 'x'], mixed: 'abc', title: 'the fox and the hound' },
  { objectId: 'r09', score: 0, name: '', tags: ['A'], mixed: 2.5, done: null },
  { objectId: 'r10', score: '10', name: 'Álvaro', tags: [{ k: 1 }, { k: 2 }], mixed: '4' },
  { objectId: 'r11', score: 1e6, name: 'x\ny', tags: [5, '5'], mixed: 4 },
  { objectId: 'r12', score: 35, name: 'Bob', tags: ['b'], when: date('2024-03-01T12:00:00Z') },
  { objectId: 'r13', score: '35', name: 'bob', tags: ['B'], owner: ptr('o2') },
  { objectId: 'r14', score: 28, name: 'carol', meta: { city: 'Berlin', n: 2.0 }, owner: ptr('x1', 'Other') },
  { objectId: 'r15', score: '41', name: 'alicea', tags: ['a', 'a'], meta: { city: null } },
  { objectId: 'r16', score: 3, tags: null, meta: { n: '3' }, done: true },
  { objectId: 'r17', score: 7, name: 'a.c', tags: ['a.c'], title: '' },
  { objectId: 'r18', score: 8, name: 'a\nc', meta: { nested: { deep: 1 } } },
];
T_ROWS.forEach((r, i) => {
  r.createdAt = new Date(Date.UTC(2024, 0, 1 + i)).toISOString();
  r.updatedAt = new Date(Date.UTC(2024, 5, 30 - i)).toISOString();
});
const ALL = T_ROWS.map((r) => r.objectId);

const OWNER_ROWS: Row[] = [
  { objectId: 'o1', name: 'alice', age: 35, city: 'Paris', boss: ptr('o2') },
  { objectId: 'o2', name: 'Bob', age: 28, city: 'London' },
  { objectId: 'o3', name: 'carol', age: 41, city: 'Berlin', _acl: { 'role:x': { read: true } } },
  { objectId: 'o4', name: 'zed', age: '41', city: 'Tokyo' },
];
const LIKES: [string, string][] = [['r01', 'o1'], ['r01', 'o2'], ['r02', 'o2'], ['r03', 'o3']];

// ---------- database: SQLite in memory, or PostgreSQL in the PostgreSQL run ----------
let qdb: QueryDb;
let options: CompileOptions;
beforeAll(async () => {
  qdb = onPostgres ? await postgresQueryDb() : sqliteQueryDb();
  options = { dialect: qdb.dialect, schema };
  for (const cls of ['T', 'Owner']) await qdb.createClass(cls);
  await qdb.createRelation('T', 'likes');
  const insert = (cls: string, row: Row) => {
    const { objectId, createdAt = '2024-01-01T00:00:00.000Z', updatedAt = createdAt, _acl, ...data } = row;
    return qdb.insert(cls, [objectId, createdAt, updatedAt, JSON.stringify(data), _acl ? JSON.stringify(_acl) : null]);
  };
  for (const r of T_ROWS) await insert('T', r);
  for (const r of OWNER_ROWS) await insert('Owner', r);
  for (const [o, r] of LIKES) await qdb.relate('T', 'likes', o, r);
});
afterAll(() => qdb.close());

/** objectIds of the rows `where` selects, in objectId order. */
const run = async (where: unknown, opts: CompileOptions = options, className = 'T', alias = 't'): Promise<string[]> => {
  const { sql, params } = compileWhere(className, alias, where, opts);
  return qdb.ids(`SELECT "objectId" FROM ${opts.dialect.classTable(className)} AS ${alias} WHERE ${sql} ORDER BY "objectId"`, params);
};

// ---------- mingo as the oracle: Parse forms translated to plain values ----------
const plain = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o.__type === 'Date') return o.iso;
    if (o.__type === 'Pointer') return o.objectId;
    if (o.__type === 'File') return o.name;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, plain(x)]));
  }
  return v;
};
const oracle = (where: Record<string, unknown>): string[] => {
  const query = new Query(plain(where) as Record<string, unknown>);
  return T_ROWS.filter((r) => query.test(plain(r) as Record<string, unknown>)).map((r) => r.objectId);
};

describe('compileWhere agrees with mingo', () => {
  const d = date('2024-01-15');
  const cases: Record<string, unknown>[] = [
    {},
    { score: 5 },
    { score: { $eq: 5 } },
    { score: '5' },
    { score: 2.5 },
    { score: { $lt: '5' } },
    { score: { $lt: 5 } },
    { score: { $gt: 2 } },
    { score: { $gte: 2, $lt: 10 } },
    { score: { $lte: 0 } },
    { score: { $gt: '1' } },
    { name: { $gt: 'b' } },
    { name: { $lte: 'Bob' } },
    { name: 'Bob' },
    { name: '' },
    { done: true },
    { done: false },
    { done: { $ne: true } },
    { done: null },
    { mixed: 1 },
    { mixed: true },
    { mixed: 0 },
    { mixed: false },
    { mixed: '1' },
    { mixed: { $gt: 2 } },
    { mixed: { $lt: 'b' } },
    { mixed: { $in: [1, '4', false] } },
    { mixed: null },
    { mixed: { a: 1 } },
    { score: { $ne: 5 } },
    { score: null },
    { score: { $ne: null } },
    { score: { $exists: true } },
    { score: { $exists: false } },
    { done: { $exists: false } },
    { score: { $in: [1, 5, '5', null] } },
    { score: { $in: [] } },
    { score: { $nin: [5, 10] } },
    { score: { $nin: [] } },
    { name: { $in: ['alice', 'Bob', 'nobody'] } },
    { tags: 'a' },
    { tags: 1 },
    { tags: 'true' },
    { tags: true },
    { tags: 2 },
    { tags: { $eq: 'b' } },
    { tags: { $in: ['a', 2] } },
    { tags: { $nin: ['a'] } },
    { tags: { $ne: 'a' } },
    { tags: { $all: ['a', 'b'] } },
    { tags: { $all: ['a'] } },
    { tags: { $all: [] } },
    { tags: { $gt: 3 } },
    { tags: { $gte: 'b' } },
    { tags: null },
    { tags: { $ne: null } },
    { tags: ['a', 'b'] },
    { tags: [] },
    { tags: { k: 2 } },
    { tags: { $regex: '^[Ac]' } },
    { name: { $regex: '^bob$', $options: 'i' } },
    { name: { $regex: '^A\\.C$', $options: 'i' } },
    { name: { $regex: '^ALICE$', $options: 'i' } },
    { name: { $regex: '^álvaro$', $options: 'i' } },
    { mixed: { $regex: '^ABC$', $options: 'i' } },
    { score: { $regex: '^5$', $options: 'i' } },
    { name: { $regex: '^bob\\$', $options: 'i' } },
    { tags: { $exists: true } },
    { 'meta.city': 'Paris' },
    { 'meta.city': null },
    { 'meta.n': { $gte: 2 } },
    { 'meta.n': 3 },
    { 'meta.nested.deep': 1 },
    { 'meta.zip': { $exists: true } },
    { meta: { city: 'Paris', n: 1 } },
    { meta: {} },
    { when: { $lt: d } },
    { when: { $gte: d } },
    { when: date('2024-02-01') },
    { when: null },
    { when: { $in: [date('2024-01-01'), date('2023-06-15')] } },
    { createdAt: { $gte: d } },
    { createdAt: { $lt: d, $gt: date('2024-01-03') } },
    { updatedAt: { $lte: date('2024-06-20') } },
    { createdAt: date(T_ROWS[2]!.createdAt as string) },
    { objectId: 'r03' },
    { objectId: { $in: ['r01', 'r05', 'nope'] } },
    { objectId: { $nin: ['r01'] } },
    { objectId: { $gt: 'r15' } },
    { owner: ptr('o1') },
    { owner: { $in: [ptr('o1'), ptr('o3')] } },
    { owner: { $ne: ptr('o1') } },
    { owner: { $nin: [ptr('o1'), ptr('o2')] } },
    { owner: { $exists: true } },
    { owner: null },
    { doc: file('a.txt') },
    { doc: { $in: [file('a.txt'), file('b.txt')] } },
    { name: { $regex: '^al' } },
    { name: { $regex: '^AL', $options: 'i' } },
    { name: { $regex: 'o' } },
    { name: { $regex: '^a.c$' } },
    { name: { $regex: '^a.c$', $options: 's' } },
    { name: { $regex: '^y', $options: 'm' } },
    { name: { $regex: 'b', $options: 'im' } },
    { mixed: { $regex: '1' } },
    { $or: [{ score: 5 }, { name: 'Bob' }] },
    { $or: [{ score: { $gt: 5 } }, { tags: 'a' }], done: { $ne: false } },
    { $and: [{ score: { $gt: 0 } }, { score: { $lt: 8 } }] },
    { $nor: [{ score: 5 }, { tags: 'a' }] },
    { $nor: [{ done: true }] },
    { $or: [{ $and: [{ score: { $gte: 4 } }, { done: true }] }, { $nor: [{ name: { $exists: true } }] }] },
  ];
  it.each(cases.map((c) => [JSON.stringify(c), c] as const))('%s', async (_label, where) => {
    expect(await run(where)).toEqual(oracle(where));
  });

  it('covers every kind of row (the fixtures are not trivially empty)', async () => {
    expect((await run({ score: { $gt: 2 } })).length).toBeGreaterThan(3);
    expect(oracle({ tags: 'a' })).toEqual(['r01', 'r05', 'r06', 'r15']);
  });
});

describe('type-exact rules (style.md, example 7)', () => {
  it('a string bound never matches a number, nor a number a string, boolean or array', async () => {
    expect(await run({ score: { $lt: '5' } })).toEqual(['r10', 'r13', 'r15']);
    expect(await run({ mixed: { $gt: 2 } })).toEqual(['r09', 'r11']);
    expect(await run({ mixed: true })).toEqual(['r02']);
    expect(await run({ mixed: 1 })).toEqual(['r01']);
  });
  it('a field outside the schema that holds an array is compared as a whole, not element by element (differs from Mongo)', async () => {
    expect(await run({ tags: { $gt: 3 } })).toEqual(['r11']); // Array field: element-wise
    expect(await run({ meta: { $gt: 0 } })).toEqual([]); // objects never compare with numbers
    expect(await run({ 'meta.city': { $gte: 'P' } })).toEqual(['r01', 'r03', 'r05']);
  });
  it('equality with text needs no type guard unless the text could be the JSON of an object or array', async () => {
    // What the unguarded equality rests on, asked of SQLite itself: json_extract answers the JSON
    // text of an object or array, and a number, boolean or null never equals text.
    const db = new Database(':memory:');
    try {
      const equal = (json: string, text: string) => db.prepare(`SELECT json_extract(?, '$.v') = ? AS eq`).get(json, text) as { eq: number | null };
      expect(equal('{"v":{"a":1}}', '{"a":1}').eq).toBe(1);
      expect(equal('{"v":[1]}', '[1]').eq).toBe(1);
      expect(equal('{"v":7}', '7').eq).toBe(0);
      expect(equal('{"v":1.5}', '1.5').eq).toBe(0);
      expect(equal('{"v":true}', '1').eq).toBe(0);
      expect(equal('{"v":null}', 'null').eq).toBeNull();
    } finally {
      db.close();
    }
    expect(await run({ 'meta.city': 'Paris' })).toEqual(oracle({ 'meta.city': 'Paris' }));
    expect(await run({ mixed: '1' })).toEqual(['r03']);
    expect(await run({ tags: { $in: ['a', '[]'] } })).toEqual(oracle({ tags: { $in: ['a', '[]'] } }));
    expect(await run({ meta: '{}' })).toEqual([]);
  });
  it('binds every value; quotes in values change nothing', async () => {
    const evil = "x' OR '1'='1";
    const frag = compileWhere('T', 't', { name: evil }, options);
    expect(frag.sql).not.toContain(evil);
    expect(frag.params).toEqual([evil]);
    expect(await run({ name: evil })).toEqual([]);
  });
});

describe.skipIf(onPostgres)('exact SQL (style.md, example 6)', () => {
  const score = `json_extract(t.data, '$."score"')`;
  const scoreType = `json_type(t.data, '$."score"')`;
  it.each([
    [{}, 'TRUE', []],
    [{ score: 5 }, `${score} = ? AND ${scoreType} IN ('integer','real')`, [5]],
    // The two bounds' type guard is written once.
    [{ score: { $gte: 1, $lt: 10 } }, `${score} >= ? AND ${scoreType} IN ('integer','real') AND ${score} < ?`, [1, 10]],
    [{ name: { $ne: 'x' } }, `(json_extract(t.data, '$."name"') = ?) IS NOT TRUE`, ['x']],
    // Text that could be the JSON of an object or array keeps its guard; other text needs none (dialect.ts).
    [{ name: '{"a":1}' }, `json_extract(t.data, '$."name"') = ? AND json_type(t.data, '$."name"') = 'text'`, ['{"a":1}']],
    [{ name: { $in: ['x', '[1]'] } }, `json_extract(t.data, '$."name"') = ? OR (json_extract(t.data, '$."name"') = ? AND json_type(t.data, '$."name"') = 'text')`, ['x', '[1]']],
    [{ done: true }, `json_extract(t.data, '$."done"') = ? AND json_type(t.data, '$."done"') = 'true'`, [1]],
    [{ tags: 'a' }, `EXISTS (SELECT 1 FROM json_each(t.data, '$."tags"') AS je1 WHERE je1.value = ?)`, ['a']],
    [{ score: { $exists: false } }, `${scoreType} IS NULL`, []],
    [{ createdAt: { $gt: { __type: 'Date', iso: '2024-01-01T00:00:00Z' } } }, `t."createdAt" > ?`, ['2024-01-01T00:00:00.000Z']],
    [{ when: { $lt: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' } } }, `json_extract(t.data, '$."when"."iso"') < ? AND json_type(t.data, '$."when"."iso"') = 'text'`, ['2024-01-01T00:00:00.000Z']],
    [{ 'meta.city': 'Paris' }, `json_extract(t.data, '$."meta"."city"') = ?`, ['Paris']],
    [{ $or: [{ score: 1 }, { name: { $exists: true } }] }, `(${score} = ? AND ${scoreType} IN ('integer','real')) OR json_type(t.data, '$."name"') IS NOT NULL`, [1]],
    [{ name: { $regex: '^a', $options: 'i' } }, `json_type(t.data, '$."name"') = 'text' AND parse_regexp(?, ?, json_extract(t.data, '$."name"'))`, ['^a', 'i']],
    [{ likes: ptr('o1') }, `t."objectId" IN (SELECT rl1."owningId" FROM "_Join:likes:T" AS rl1 WHERE rl1."relatedId" = ?)`, ['o1']],
  ])('%j', (where, sql, params) => {
    expect(compileWhere('T', 't', where, options)).toEqual({ sql, params });
  });
  it('$relatedTo and $inQuery', async () => {
    expect(compileWhere('Owner', 'o', { $relatedTo: { object: ptr('r01', 'T'), key: 'likes' } }, options)).toEqual({
      sql: `o."objectId" IN (SELECT rl1."relatedId" FROM "_Join:likes:T" AS rl1 WHERE rl1."owningId" = ?)`,
      params: ['r01'],
    });
    const readable = (_c: string, alias: string) => ({ sql: `${alias}.acl IS NULL`, params: [] });
    expect(compileWhere('T', 't', { owner: { $inQuery: { className: 'Owner', where: { age: 35 } } } }, { ...options, readable })).toEqual({
      sql:
        `json_extract(t.data, '$."owner"."className"') = ? AND json_extract(t.data, '$."owner"."objectId"') IN (SELECT sq1."objectId" FROM "cls_Owner" AS sq1 ` +
        `WHERE json_extract(sq1.data, '$."age"') = ? AND json_type(sq1.data, '$."age"') IN ('integer','real') AND sq1.acl IS NULL)`,
      params: ['Owner', 35],
    });
  });
});

describe('operators mingo lacks (hand-computed)', () => {
  const readable = (_c: string, alias: string) => ({ sql: `${alias}.acl IS NULL`, params: [] });
  it('$containedBy: an array whose elements are all in the list', async () => {
    expect(await run({ tags: { $containedBy: ['a', 'b'] } })).toEqual(['r01', 'r04', 'r12', 'r15']);
    expect(await run({ tags: { $containedBy: ['a', 'b', 'c'] } })).toEqual(['r01', 'r04', 'r06', 'r12', 'r15']);
    expect(await run({ tags: { $containedBy: [1, 2, 3, 'b'] } })).toEqual(['r02', 'r03', 'r04', 'r12']);
    expect(await run({ tags: { $containedBy: [] } })).toEqual(['r04']);
  });
  it('$regex on an Array field looks at elements, not into nested arrays (Mongo; mingo descends)', async () => {
    expect(await run({ tags: { $regex: '^b' } })).toEqual(['r01', 'r02', 'r06', 'r12']);
  });
  it('$regex with x, \\Q...\\E (SDK startsWith/endsWith/contains) and $all with $regex', async () => {
    expect(await run({ name: { $regex: '^ a l  # letters\n i', $options: 'x' } })).toEqual(['r01', 'r07', 'r15']);
    expect(await run({ name: { $regex: '^\\Qa.c\\E' } })).toEqual(['r17']);
    expect(await run({ name: { $regex: '\\Q.c\\E$' } })).toEqual(['r17']);
    expect(await run({ tags: { $all: [{ $regex: '^\\Qa\\E' }, { $regex: '^b' }] } })).toEqual(['r01', 'r06']);
    expect(readPattern('a [ #]b # c\nd', 'x').re2).toBe('a[ #]bd');
  });
  it('$text: every term, case- and diacritic-insensitive by default', async () => {
    const text = (term: string, extra: Record<string, unknown> = {}) => run({ title: { $text: { $search: { $term: term, ...extra } } } });
    expect(await text('quick brown')).toEqual(['r01', 'r06']);
    expect(await text('quick')).toEqual(['r01', 'r02', 'r06']);
    expect(await text('Quick', { $caseSensitive: true })).toEqual(['r02']);
    expect(await text('cafe')).toEqual(['r04', 'r05']);
    expect(await text('café', { $diacriticSensitive: true })).toEqual(['r04']);
    expect(await text('fox -hound')).toEqual(['r01']);
    expect(await text('"brown bread"')).toEqual(['r03']);
    expect(await text('   ')).toEqual([]);
  });
  it('$inQuery / $notInQuery, restricted by readable', async () => {
    const older = { className: 'Owner', where: { age: { $gt: 30 } } };
    expect(await run({ owner: { $inQuery: older } })).toEqual(['r01', 'r03', 'r05', 'r06']);
    expect(await run({ owner: { $inQuery: older } }, { ...options, readable })).toEqual(['r01', 'r03']);
    expect(await run({ owner: { $notInQuery: older } }, { ...options, readable })).toEqual(ALL.filter((id) => !['r01', 'r03'].includes(id)));
    expect(await run({ likes: { $inQuery: { className: 'Owner', where: { city: 'London' } } } })).toEqual(['r01', 'r02']);
    expect(await run({ owner: { $inQuery: { className: 'Owner', where: { $relatedTo: { object: ptr('r01', 'T'), key: 'likes' } } } } })).toEqual([
      'r01',
      'r02',
      'r03',
      'r13',
    ]);
    // A sub-query of a class that does not exist finds nothing, as Parse Server answers.
    const nowhere = { className: 'Nope', where: {} };
    expect(await run({ owner: { $inQuery: nowhere } })).toEqual([]);
    expect(await run({ owner: { $notInQuery: nowhere } })).toEqual(ALL);
    expect(await run({ title: { $select: { query: nowhere, key: 'x' } } })).toEqual([]);
    expect(await run({ title: { $dontSelect: { query: nowhere, key: 'x' } } })).toEqual(ALL);
  });
  it('$select / $dontSelect compare by value and type, pointers by objectId', async () => {
    const names = { query: { className: 'Owner', where: { age: { $gte: 28 } } }, key: 'name' };
    expect(await run({ name: { $select: names } })).toEqual(['r01', 'r02', 'r03', 'r12', 'r14']);
    expect(await run({ name: { $dontSelect: names } })).toEqual(ALL.filter((id) => !['r01', 'r02', 'r03', 'r12', 'r14'].includes(id)));
    const ages = { query: { className: 'Owner', where: {} }, key: 'age' };
    expect(await run({ score: { $select: ages } })).toEqual(['r12', 'r14', 'r15']); // 35, 28, "41"; "35" does not equal 35
    expect(await run({ score: { $select: ages } }, { ...options, readable })).toEqual(['r12', 'r14', 'r15']);
    const bosses = { query: { className: 'Owner', where: { name: 'alice' } }, key: 'boss' };
    expect(await run({ owner: { $select: bosses } })).toEqual(['r02', 'r13']);
    expect(await run({ objectId: { $select: { query: { className: 'Owner', where: {} }, key: 'objectId' } } })).toEqual([]);
  });
  it('$relatedTo and queries on Relation fields', async () => {
    expect(await run({ $relatedTo: { object: ptr('r01', 'T'), key: 'likes' } }, options, 'Owner', 'o')).toEqual(['o1', 'o2']);
    expect(await run({ $relatedTo: { object: ptr('r01', 'T'), key: 'likes' }, age: { $lt: 30 } }, options, 'Owner', 'o')).toEqual(['o2']);
    expect(await run({ $relatedTo: { object: ptr('r01', 'T'), key: 'score' } }, options, 'Owner', 'o')).toEqual([]);
    expect(await run({ likes: ptr('o2') })).toEqual(['r01', 'r02']);
    expect(await run({ likes: { $in: [ptr('o1'), ptr('o3')] } })).toEqual(['r01', 'r03']);
    expect(await run({ likes: { $ne: ptr('o2') } })).toEqual(ALL.filter((id) => !['r01', 'r02'].includes(id)));
    expect(await run({ likes: ptr('o2', 'Other') })).toEqual([]);
  });
});

describe('geo', () => {
  const km = (p: { latitude: number; longitude: number }, q: { latitude: number; longitude: number }) =>
    geoDistance(p.latitude, p.longitude, q.latitude, q.longitude) * 6371;
  it('distances are great-circle radians', async () => {
    expect(km(PARIS, LONDON)).toBeCloseTo(343.5, 0);
    expect(km(PARIS, BERLIN)).toBeCloseTo(877.5, 0);
  });
  it('$nearSphere with each unit of max distance, sorted by nearSphereOrder', async () => {
    const near = (extra: Record<string, unknown>) => run({ loc: { $nearSphere: PARIS, ...extra } });
    expect(await near({ $maxDistanceInKilometers: 500 })).toEqual(['r01', 'r02']);
    expect(await near({ $maxDistanceInKilometers: 1000 })).toEqual(['r01', 'r02', 'r03']);
    expect(await near({ $maxDistanceInMiles: 500 })).toEqual(['r01', 'r02']);
    expect(await near({ $maxDistanceInMiles: 600 })).toEqual(['r01', 'r02', 'r03']);
    expect(await near({ $maxDistanceInRadians: 0.1 })).toEqual(['r01', 'r02']);
    expect(await near({ $maxDistance: 0.01 })).toEqual(['r01']);
    expect(await near({})).toEqual(['r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07']);
    const where = { loc: { $nearSphere: BERLIN } };
    const cond = compileWhere('T', 't', where, options);
    const order = nearSphereOrder('T', 't', where, options)!;
    const ids = await qdb.ids(`SELECT "objectId" FROM ${options.dialect.classTable('T')} AS t WHERE ${cond.sql} ORDER BY ${order.sql}`, [...cond.params, ...order.params]);
    // expected order from the spherical law of cosines, independent of the haversine under test
    const rad = (d: number) => (d * Math.PI) / 180;
    const cosines = (p: { latitude: number; longitude: number }) =>
      Math.acos(
        Math.sin(rad(p.latitude)) * Math.sin(rad(BERLIN.latitude)) +
          Math.cos(rad(p.latitude)) * Math.cos(rad(BERLIN.latitude)) * Math.cos(rad(p.longitude - BERLIN.longitude)),
      );
    const located = T_ROWS.filter((r) => r.loc).sort((a, b) => cosines(a.loc as typeof BERLIN) - cosines(b.loc as typeof BERLIN));
    expect(ids).toEqual(located.map((r) => r.objectId));
    expect(ids.slice(0, 3)).toEqual(['r03', 'r01', 'r02']);
    expect(nearSphereOrder('T', 't', { $and: [{ loc: { $nearSphere: BERLIN } }] }, options)).toEqual(order);
    expect(nearSphereOrder('T', 't', { score: 1 }, options)).toBeUndefined();
  });
  it('$within $box, also across the antimeridian', async () => {
    expect(await run({ loc: { $within: { $box: [geo(45, -5), geo(55, 15)] } } })).toEqual(['r01', 'r02', 'r03']);
    expect(await run({ loc: { $within: { $box: [geo(-20, 170), geo(-10, -170)] } } })).toEqual(['r06', 'r07']);
  });
  it('$geoWithin $polygon (GeoPoints, [lng, lat] pairs or a Polygon) and $centerSphere (GeoPoint or [lng, lat])', async () => {
    const europe = [geo(40, -10), geo(60, -10), geo(60, 20), geo(40, 20)];
    expect(await run({ loc: { $geoWithin: { $polygon: europe } } })).toEqual(['r01', 'r02', 'r03']);
    const europePairs = europe.map((p) => [p.longitude, p.latitude]);
    expect(await run({ loc: { $geoWithin: { $polygon: europePairs } } })).toEqual(['r01', 'r02', 'r03']);
    const triangle = { __type: 'Polygon', coordinates: [[45, -5], [55, -5], [45, 10]] };
    expect(await run({ loc: { $geoWithin: { $polygon: triangle } } })).toEqual(['r01', 'r02']);
    expect(await run({ loc: { $geoWithin: { $centerSphere: [PARIS, 0.1] } } })).toEqual(['r01', 'r02']);
    expect(await run({ loc: { $geoWithin: { $centerSphere: [[13.405, 52.52], 0.01] } } })).toEqual(['r03']);
  });
  it('$geoIntersects $point on a Polygon field, edges included', async () => {
    expect(await run({ area: { $geoIntersects: { $point: geo(5, 5) } } })).toEqual(['r01']);
    expect(await run({ area: { $geoIntersects: { $point: geo(0, 5) } } })).toEqual(['r01']);
    expect(await run({ area: { $geoIntersects: { $point: geo(22, 24) } } })).toEqual(['r02']);
    expect(await run({ area: { $geoIntersects: { $point: geo(15, 15) } } })).toEqual([]);
    expect(pointInPolygon(5, 5, [[0, 0], [10, 0], [0, 10]])).toBe(true);
    expect(pointInPolygon(6, 6, [[0, 0], [10, 0], [0, 10]])).toBe(false);
  });
});

describe('compileOrder', () => {
  it('maps keys to expressions, Dates by ISO string, and rejects bad names with 105', async () => {
    if (onPostgres) {
      expect(compileOrder('T', 't', 'score,-createdAt', options)).toBe(`(t.data #> '{"score"}') ASC NULLS FIRST, t."createdAt" DESC NULLS LAST`);
      expect(compileOrder('T', 't', '-when,owner,meta.city', options)).toBe(
        `((t.data #>> '{"when","iso"}') COLLATE "C") DESC NULLS LAST, ((t.data #>> '{"owner","objectId"}') COLLATE "C") ASC NULLS FIRST, (t.data #> '{"meta","city"}') ASC NULLS FIRST`,
      );
    } else {
      expect(compileOrder('T', 't', 'score,-createdAt', options)).toBe(`json_extract(t.data, '$."score"') ASC, t."createdAt" DESC`);
      expect(compileOrder('T', 't', '-when,owner,meta.city', options)).toBe(
        `json_extract(t.data, '$."when"."iso"') DESC, json_extract(t.data, '$."owner"."objectId"') ASC, json_extract(t.data, '$."meta"."city"') ASC`,
      );
    }
    expect(compileOrder('T', 't', '', options)).toBe('');
    expect(compileOrder('T', 't', '$score', options)).toBe('');
    for (const bad of ['-', 'a-b', '_rperm', 'score;drop', 'a..b', '--score']) {
      expect(() => compileOrder('T', 't', bad, options)).toThrow(expect.objectContaining({ code: 105 }));
    }
  });
  it('sorts rows', async () => {
    const ids = await qdb.ids(
      `SELECT "objectId" FROM ${options.dialect.classTable('T')} AS t WHERE ${compileWhere('T', 't', { when: { $exists: true } }, options).sql} ORDER BY ${compileOrder('T', 't', '-when', options)}`,
      [],
    );
    expect(ids).toEqual(['r12', 'r02', 'r01', 'r03', 'r04']);
  });
});

describe('errors are ParseErrors with code 102, 105 or 107 (malformed operator values, as Parse Server)', () => {
  const P = geo(1, 2);
  const deep = Array.from({ length: 30 }).reduce<Record<string, unknown>>((w) => ({ $and: [w] }), { score: 1 });
  const cases: [unknown, number][] = [
    [{ score: { $foo: 1 } }, 102],
    [{ $foo: 1 }, 105],
    [{ score: { $in: 3 } }, 107],
    [{ score: { $nin: 'a' } }, 107],
    [{ score: { $all: {} } }, 107],
    [{ score: { $containedBy: 1 } }, 107],
    [{ name: { $regex: 5 } }, 102],
    [{ name: { $regex: '(' } }, 102],
    [{ name: { $regex: 'a', $options: 'q' } }, 102],
    [{ name: { $options: 'i' } }, 102],
    [{ score: { $gt: true } }, 102],
    [{ score: { $lt: null } }, 102],
    [{ score: { $lt: [1] } }, 102],
    [{ score: { $gt: 1, plain: 2 } }, 102],
    [{ score: { $in: [{ $gt: 1 }] } }, 102],
    [{ when: { __type: 'Date', iso: 'not a date' } }, 102],
    [{ owner: { __type: 'Pointer', className: 'Owner' } }, 102],
    [{ x: { __type: 'Weird' } }, 102],
    [{ objectId: 5 }, 102],
    [{ createdAt: 5 }, 102],
    [{ createdAt: { $gt: 'yesterday' } }, 102],
    [{ loc: { $nearSphere: { __type: 'GeoPoint', latitude: 91, longitude: 0 } } }, 107],
    [{ loc: { $nearSphere: [1, 2] } }, 107],
    [{ loc: { $nearSphere: P, $maxDistanceInKilometers: -1 } }, 107],
    [{ loc: { $nearSphere: P, $maxDistance: 1, $maxDistanceInMiles: 2 } }, 102],
    [{ loc: { $maxDistance: 1 } }, 102],
    [{ loc: { $within: { $box: [P] } } }, 107],
    [{ loc: { $within: { $box: [geo(10, 0), geo(0, 10)] } } }, 107],
    [{ loc: { $within: { $polygon: [P, P, P] } } }, 107],
    [{ loc: { $geoWithin: { $polygon: [P, P] } } }, 107],
    [{ loc: { $geoWithin: { $polygon: [[1, 2], [3, 4], [5, 'x']] } } }, 107],
    [{ loc: { $geoWithin: { $polygon: [[1, 2], [3, 4], [200, 6]] } } }, 107],
    [{ loc: { $geoWithin: { $polygon: { __type: 'Polygon', coordinates: [[1, 2], [3, 4]] } } } }, 107],
    [{ loc: { $geoWithin: { $centerSphere: [P, -1] } } }, 107],
    [{ loc: { $geoWithin: { $centerSphere: P } } }, 107],
    [{ loc: { $geoWithin: {} } }, 107],
    [{ area: { $geoIntersects: { $point: 'here' } } }, 107],
    [{ title: { $text: { $search: {} } } }, 107],
    [{ title: { $text: { $search: { $term: 'a', $caseSensitive: 'yes' } } } }, 107],
    [{ title: { $text: 'a' } }, 107],
    [{ $or: [] }, 102],
    [{ $or: {} }, 102],
    [{ $and: [1] }, 102],
    [{ $nor: 'x' }, 102],
    [{ owner: { $inQuery: { className: 'bad name', where: {} } } }, 102],
    [{ owner: { $inQuery: { className: 'Owner', where: [] } } }, 102],
    [{ owner: { $inQuery: { className: 'Owner', where: { age: { $bad: 1 } } } } }, 102],
    [{ name: { $select: { query: { className: 'Owner', where: {} } } } }, 102],
    [{ name: { $select: { query: { className: 'Owner' }, key: 'bad-key' } } }, 105],
    [{ $relatedTo: { object: 'r01', key: 'likes' } }, 102],
    [{ $relatedTo: { object: ptr('x', 'Nope'), key: 'likes' } }, 102],
    [{ $relatedTo: { object: ptr('r01', 'T'), key: 'bad-key' } }, 105],
    [deep, 102],
    [[], 102],
    ['score=1', 102],
    [{ 'bad-key': 1 }, 105],
    [{ _rperm: 1 }, 105],
    [{ 'a..b': 1 }, 105],
    [{ 'meta.$x': 1 }, 105],
    [{ "name'); DROP TABLE x; --": 1 }, 105],
  ];
  it.each(cases.map(([w, code]) => [JSON.stringify(w).slice(0, 80), w, code] as const))('%s → %i', (_label, where, code) => {
    let error: unknown;
    try {
      compileWhere('T', 't', where, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ParseError);
    expect((error as ParseError).code).toBe(code);
  });
  it('fields the schema does not know are fine, and match nothing for equality', async () => {
    expect(await run({ unknownField: 1 })).toEqual([]);
    expect(await run({ unknownField: { $exists: false } })).toEqual(ALL);
    expect(() => compileWhere('Nope', 'n', { a: 1 }, options)).not.toThrow();
  });
});

describe.skipIf(onPostgres)('indexes are used (style.md, example 8)', () => {
  const plan = (where: unknown) => {
    const { sql, params } = compileWhere('T', 't', where, options);
    return qdb.plan(`SELECT objectId FROM "cls_T" AS t WHERE ${sql}`, params);
  };
  beforeAll(async () => {
    await qdb.exec(`CREATE INDEX i ON "cls_T"(json_extract(data, '$."score"'))`);
    await qdb.exec(`CREATE INDEX i_when ON "cls_T"(json_extract(data, '$."when"."iso"'))`);
    await qdb.exec(`CREATE INDEX i_created ON "cls_T"(createdAt)`);
    await qdb.exec(`CREATE INDEX i_name_lower ON "cls_T"(lower(json_extract(data, '$."name"')))`);
  });
  it.each([
    [{ score: 5 }, 'INDEX i '],
    [{ score: { $gt: 3 } }, 'INDEX i '],
    [{ score: { $gte: 3, $lt: 9 } }, 'INDEX i '],
    [{ score: { $in: [1, 2, 3] } }, 'INDEX i '],
    [{ when: { $gte: date('2024-01-01') } }, 'INDEX i_when'],
    [{ createdAt: { $lt: date('2024-01-05') } }, 'INDEX i_created'],
    // A case-insensitive exact match (how a username is checked to be free) uses an index on lower(field).
    [{ name: { $regex: '^B\\.o-b$', $options: 'i' } }, 'INDEX i_name_lower'],
  ])('%j searches, not scans', async (where, index) => {
    const detail = await plan(where);
    expect(detail).toMatch(/SEARCH t USING INDEX/);
    expect(detail).toContain(index);
    expect(detail).not.toMatch(/SCAN/);
  });
  it('results are the same with the index', async () => {
    expect(await run({ score: { $gt: 2 } })).toEqual(oracle({ score: { $gt: 2 } }));
    for (const where of [{ name: { $regex: '^bob$', $options: 'i' } }, { name: { $regex: '^A\\.C$', $options: 'i' } }]) expect(await run(where)).toEqual(oracle(where));
  });
});

describe.skipIf(!onPostgres)('PostgreSQL indexes are used (the adapter builds them over the expressions the dialect compares)', () => {
  const plan = async (where: unknown) => {
    const { sql, params } = compileWhere('T', 't', where, options);
    // 18 rows are read faster without an index; forbid the sequential scan to see whether one can serve.
    await qdb.exec('SET enable_seqscan = off');
    return qdb.plan(`SELECT "objectId" FROM ${options.dialect.classTable('T')} AS t WHERE ${sql}`, params);
  };
  beforeAll(async () => {
    const table = options.dialect.classTable('T');
    await qdb.exec(`CREATE INDEX i_score ON ${table} (${indexExpression(['score'], 'Number')})`);
    await qdb.exec(`CREATE INDEX i_name ON ${table} (${indexExpression(['name'], 'String')})`);
    await qdb.exec(`CREATE INDEX i_when ON ${table} (${indexExpression(['when'], 'Date')})`);
    await qdb.exec(`CREATE INDEX i_owner ON ${table} (${indexExpression(['owner'], 'Pointer')})`);
    await qdb.exec(`CREATE INDEX i_created ON ${table} (${indexExpression(['createdAt'], 'Date')})`);
    await qdb.exec(`CREATE INDEX i_name_lower ON ${table} (lower(${indexExpression(['name'], 'String')}))`);
  });
  it.each([
    [{ score: 5 }, 'i_score'],
    [{ score: { $gte: 3, $lt: 9 } }, 'i_score'],
    [{ score: { $in: [1, 2, 3] } }, 'i_score'],
    [{ name: 'Bob' }, 'i_name'],
    [{ name: { $gt: 'a' } }, 'i_name'],
    [{ when: { $gte: date('2024-01-01') } }, 'i_when'],
    [{ owner: ptr('o1') }, 'i_owner'],
    [{ createdAt: { $lt: date('2024-01-05') } }, 'i_created'],
    [{ name: { $regex: '^B\\.o-b$', $options: 'i' } }, 'i_name_lower'],
  ])('%j searches an index', async (where, index) => {
    const detail = await plan(where);
    expect(detail).toMatch(new RegExp(`Index (Only )?Scan using ${index} |Bitmap Index Scan on ${index}`));
    expect(detail).not.toMatch(/Seq Scan/);
  });
  it('results are the same with the indexes', async () => {
    for (const where of [{ score: { $gt: 2 } }, { name: { $regex: '^bob$', $options: 'i' } }, { name: { $gte: 'a' } }]) expect(await run(where)).toEqual(oracle(where));
    await qdb.exec('SET enable_seqscan = on');
  });
});
