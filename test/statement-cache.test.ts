/**
 * Query shapes compiled once (src/data/query/statementCache.ts): whatever queries came before, the
 * statement the cache gives a query is exactly the one the compiler gives it (same SQL text, same
 * parameters), or the same error; for both dialects. Shown by fast-check over queries of every
 * operator on fields of every type, each checked after other queries of the same shape with other
 * values, and through a real SQLite app: a changed schema is seen.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StatementCache } from '../src/data/query/statementCache.js';
import { compileCount, compileSelect, filterTree, selectTree, type ReadQuery, type StatementTarget } from '../src/data/query/statement.js';
import { sqliteDialect } from '../src/data/storage/sqlite/dialect.js';
import { postgresDialect } from '../src/data/storage/postgres/dialect.js';
import type { QueryAccess } from '../src/data/auth/queryAccess.js';
import { ParseError } from '../src/data/errors.js';
import { DEFAULT_FIELDS, type FieldType } from '../src/data/types.js';

const FIELDS: Record<string, FieldType> = {
  title: { type: 'String' },
  score: { type: 'Number' },
  done: { type: 'Boolean' },
  when: { type: 'Date' },
  tags: { type: 'Array' },
  owner: { type: 'Pointer', targetClass: '_User' },
  meta: { type: 'Object' },
  place: { type: 'GeoPoint' },
  secret: { type: 'String' },
};

/** A schema whose field types can change, and a generation that changes with them. */
function schema() {
  let fields: Record<string, FieldType> = FIELDS;
  let generation = 0;
  return {
    lookup: {
      fields: (className: string) => (className === 'Item' ? { ...DEFAULT_FIELDS, ...fields } : undefined),
      getClass: (className: string) => (className === 'Item' ? { className, fields, classLevelPermissions: {}, indexes: {} } : undefined),
    },
    generation: () => generation,
    change(next: Record<string, FieldType>) {
      fields = next;
      generation++;
    },
  };
}

/** A caller for whom `secret` is protected, and who may not read `_Role`. */
const access = (calls: string[]): QueryAccess => ({
  checkFind: (className) => {
    calls.push(`find ${className}`);
    if (className === '_Role') throw new ParseError(119, 'Permission denied for action find on class _Role.');
  },
  checkField: (className, key, use) => {
    calls.push(`${use} ${className}.${key}`);
    if (key.split('.')[0] === 'secret') throw new ParseError(119, `Permission denied for action ${use} on field secret.`);
  },
  mayGet: () => true,
  scopeWhere: (_className, where) => where,
});

const scalar = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('', ' Probe 0 Q ', '2026-01-01T00:00:00.000Z', 'ABC', ' x '),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 }),
  fc.boolean(),
);
const typed = fc.oneof(
  fc.constant({ __type: 'Date', iso: '2026-01-01T00:00:00.000Z' }),
  fc.constant({ __type: 'Pointer', className: '_User', objectId: 'u1' }),
  fc.constant({ __type: 'GeoPoint', latitude: 1, longitude: 2 }),
);
const value = fc.oneof(scalar, typed, fc.constant(null));
const field = fc.constantFrom(...Object.keys(FIELDS), 'objectId', 'createdAt', 'meta.a', 'tags.0', 'unknown');
const condition = fc.oneof(
  value,
  fc.record({ $eq: value }, { requiredKeys: [] }),
  fc.record({ $ne: value, $lt: scalar, $gte: scalar }, { requiredKeys: [] }),
  fc.record({ $in: fc.array(value, { maxLength: 3 }) }),
  fc.record({ $nin: fc.array(scalar, { maxLength: 3 }) }),
  fc.record({ $all: fc.array(scalar, { maxLength: 3 }) }),
  fc.record({ $exists: fc.boolean() }),
  fc.record({ $regex: fc.constantFrom('^a', 'b+', '(x'), $options: fc.constantFrom('i', '') }, { requiredKeys: ['$regex'] }),
  fc.record({ $inQuery: fc.record({ className: fc.constantFrom('_Role', '_User'), where: fc.constant({}) }) }),
);
const where: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  where: fc.oneof(
    { depthSize: 'small' },
    fc.dictionary(field, condition, { maxKeys: 3 }),
    fc.record({ $or: fc.array(tie('where'), { minLength: 1, maxLength: 2 }) }),
  ),
})).where as fc.Arbitrary<Record<string, unknown>>;
const query: fc.Arbitrary<ReadQuery & { caller: 'master' | 'anonymous' | 'user' }> = fc.record({
  where,
  order: fc.constantFrom(undefined, 'score', '-createdAt,title', 'secret'),
  limit: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
  skip: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
  caller: fc.constantFrom('master', 'anonymous', 'user'),
});

/**
 * The query with its values replaced by values of the same JS type from `pool` (strings by strings,
 * numbers by numbers, booleans by booleans), typed values and keys kept: mostly queries of the same
 * shape with other values, sometimes of another shape (an empty string, another sign).
 */
function vary(node: unknown, pool: Array<string | number | boolean>): unknown {
  if (Array.isArray(node)) return node.map((n) => vary(n, pool));
  if (typeof node === 'object' && node !== null) {
    if ('__type' in node) return node;
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, vary(v, pool)]));
  }
  const at = pool.findIndex((p) => typeof p === typeof node);
  return at < 0 ? node : pool.splice(at, 1)[0];
}

/** The statement a fresh compile gives, or the error it throws. */
function fresh(kind: 'select' | 'count', q: ReadQuery, target: StatementTarget) {
  try {
    return kind === 'select' ? compileSelect(selectTree('Item', q, target), target.dialect) : compileCount(filterTree('Item', q, target), target.dialect);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function cached(cache: StatementCache, kind: 'select' | 'count', q: ReadQuery) {
  try {
    return kind === 'select' ? cache.select('Item', q) : cache.count('Item', q);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const asCaller = (q: ReadQuery & { caller: string }, calls: string[]): ReadQuery => {
  const { caller, ...rest } = q;
  if (caller === 'master') return rest;
  return { ...rest, principals: caller === 'user' ? ['*', 'u1', 'role:staff'] : ['*'], access: access(calls) };
};

describe.each([
  ['SQLite', sqliteDialect],
  ['PostgreSQL', postgresDialect('app_x')],
])('statement cache on %s', (_name, dialect) => {
  it('gives every query the statement (or error) a fresh compile gives it, whatever came before', () => {
    const total = { hits: 0, learned: 0, uncached: 0 };
    fc.assert(
      fc.property(fc.array(query, { minLength: 1, maxLength: 6 }), fc.array(fc.array(scalar, { maxLength: 12 }), { minLength: 3, maxLength: 3 }), fc.constantFrom('select' as const, 'count' as const), (queries, pools, kind) => {
        const s = schema();
        const target = { dialect, schema: s.lookup };
        const cache = new StatementCache(target, s.generation);
        // Each query, then the same queries with other values (mostly the same shapes), then again.
        const variants = pools.map((pool) => queries.map((q) => ({ ...q, where: vary(q.where, [...pool]) as Record<string, unknown> })));
        for (const q of [...queries, ...variants.flat(), ...queries.reverse()]) {
          const calls: string[] = [];
          const expected = fresh(kind, asCaller(q, []), target);
          expect(cached(cache, kind, asCaller(q, calls))).toEqual(expected);
        }
        for (const k of ['hits', 'learned', 'uncached'] as const) total[k] += cache.stats[k];
      }),
      { numRuns: 400 },
    );
    // The property is about hits: most queries after the first of their shape must be answered from the cache.
    expect(total.hits).toBeGreaterThan(total.uncached);
    expect(total.hits).toBeGreaterThan(total.learned);
  });

  it('reuses a shape for other values, replays the caller checks, and forgets shapes when the schema changes', () => {
    const s = schema();
    const target = { dialect, schema: s.lookup };
    const cache = new StatementCache(target, s.generation);
    const first = cache.select('Item', { where: { score: { $gte: 1, $lt: 5 }, title: 'a' }, principals: ['*'], limit: 10, skip: 0 });
    const second = cache.select('Item', { where: { score: { $gte: 7, $lt: 9 }, title: 'b' }, principals: ['*'], limit: 10, skip: 30 });
    expect(second.sql).toBe(first.sql);
    expect(second).toEqual(fresh('select', { where: { score: { $gte: 7, $lt: 9 }, title: 'b' }, principals: ['*'], limit: 10, skip: 30 }, target));
    expect(cache.stats).toMatchObject({ hits: 1, learned: 1 });
    // Another limit is a shape of its own, written into the text (sqlite/dialect.ts and
    // postgres/dialect.ts `limitClause` say why).
    const third = cache.select('Item', { where: { score: { $gte: 7, $lt: 9 }, title: 'b' }, principals: ['*'], limit: 20 });
    expect(third).toEqual(fresh('select', { where: { score: { $gte: 7, $lt: 9 }, title: 'b' }, principals: ['*'], limit: 20 }, target));
    expect(cache.stats).toMatchObject({ hits: 1, learned: 2 });
    expect(first.sql).toMatch(/ LIMIT 10 OFFSET \?$/);
    expect(third.sql).toMatch(/ LIMIT 20 OFFSET \?$/);
    expect(third.params).not.toContain(20);
    // A protected field is refused on a hit too.
    const calls: string[] = [];
    expect(() => cache.select('Item', { where: { secret: 'x' }, principals: ['*'], access: access([]) })).toThrow(/secret/);
    expect(() => cache.select('Item', { where: { secret: 'y' }, principals: ['*'], access: access(calls) })).toThrow(/secret/);
    expect(calls).toContain('query Item.secret');
    // `score` becomes a String: the same where compiles differently, and the cache follows.
    cache.count('Item', { where: { tags: 'x' } });
    s.change({ ...FIELDS, tags: { type: 'String' } });
    const after = cache.count('Item', { where: { tags: 'y' } });
    expect(after).toEqual(fresh('count', { where: { tags: 'y' } }, target));
    expect(after.sql).not.toContain('json_each');
  });
});

describe('the LIMIT of a find', () => {
  it('is written as a safe integer (bound past 1,000 on PostgreSQL), and never text SQL could read otherwise', () => {
    const postgres = postgresDialect('app_x');
    expect(postgres.limitClause(5)).toEqual({ sql: 'LIMIT 5', params: [] });
    expect(postgres.limitClause(1000)).toEqual({ sql: 'LIMIT 1000', params: [] });
    for (const large of [1001, 2 ** 60, 1e300]) expect(postgres.limitClause(large)).toEqual({ sql: 'LIMIT ?', params: [large] });
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER, 2 ** 60, 1e300)), (n) => {
        const { sql, params } = sqliteDialect.limitClause(n);
        expect(params).toEqual([]);
        expect(sql).toMatch(/^LIMIT \d{1,16}$/);
        expect(Number(sql.slice(6))).toBe(Math.min(n, Number.MAX_SAFE_INTEGER));
      }),
    );
    for (const bad of [-1, 1.5, Number.NaN, Infinity, '10; DROP TABLE x' as unknown as number]) expect(() => sqliteDialect.limitClause(bad)).toThrow(/Not a row limit/);
  });
});
