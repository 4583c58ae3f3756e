import fc from 'fast-check';
import { graphql, GraphQLError, printSchema, validateSchema, type GraphQLEnumType } from 'graphql';
import { offsetToCursor, toGlobalId } from 'graphql-relay';
import { describe, expect, it } from 'vitest';
import { answerGraphQL } from '../src/data/graphql/execute.js';
import { cursorOf, pageWindow } from '../src/data/graphql/objects.js';
import { toParseWhere } from '../src/data/graphql/where.js';
import { buildSchema } from '../src/data/graphql/schema.js';
import type { GraphQLContext } from '../src/data/graphql/context.js';
import { DEFAULT_FIELDS, type FieldType } from '../src/data/types.js';

const cls = (className: string, fields: Record<string, FieldType>) => ({ className, fields: { ...DEFAULT_FIELDS, ...fields } });

describe('the GraphQL schema built from an app\'s classes', () => {
  const schema = buildSchema([
    cls('_User', { username: { type: 'String' }, password: { type: 'String' }, email: { type: 'String' } }),
    cls('GameScore', { score: { type: 'Number' }, tags: { type: 'Array' }, player: { type: 'Pointer', targetClass: '_User' }, fans: { type: 'Relation', targetClass: '_User' }, title: { type: 'String', required: true } }),
    cls('Person', { name: { type: 'String' } }),
  ]);
  const sdl = printSchema(schema);

  it('names queries, mutations and types as Parse Server does', () => {
    for (const name of ['gameScore(', 'gameScores(', 'user(', 'users(', 'person(', 'people(', 'node(', 'health:', 'viewer:']) expect(sdl).toContain(`  ${name}`);
    for (const name of ['createGameScore(', 'updateGameScore(', 'deleteGameScore(', 'signUp(', 'logIn(', 'logOut(']) expect(sdl).toContain(`  ${name}`);
    for (const type of ['type GameScore implements ParseObject & Node', 'input CreateGameScoreFieldsInput', 'input UserPointerInput', 'input GameScoreWhereInput', 'enum GameScoreOrder', 'type GameScoreConnection', 'union ArrayResult']) expect(sdl).toContain(type);
    // A required field is required on create only; the password is never an output.
    expect(sdl).toMatch(/input CreateGameScoreFieldsInput \{[^}]*title: String!/);
    expect(sdl).toMatch(/input UpdateGameScoreFieldsInput \{[^}]*title: String\n/);
    expect(sdl).not.toMatch(/type User implements[^}]*password/);
    expect(sdl).toContain('score_DESC');
  });

  it('leaves out a class whose names collide instead of failing the whole schema', () => {
    const odd = buildSchema([
      cls('_User', { username: { type: 'String' } }),
      cls('User', { x: { type: 'String' } }),
      cls('Query', {}),
      cls('Health', {}),
      cls('Game', { id: { type: 'String' }, score: { type: 'Number' } }),
      cls('GameConnection', {}),
    ]);
    const text = printSchema(odd);
    expect(text).toMatch(/type User implements[^}]*username: String/);
    expect(text).not.toMatch(/type User implements[^}]*\bx: String/);
    expect(text).not.toContain('health(');
    expect(text).toContain('  games(');
    expect(text).toMatch(/type Game implements[^}]*\bid: ID!/);
    expect(odd.getQueryType()!.getFields().gameConnection).toBeUndefined();
  });

  it('answers health without touching data, and refuses a schema query from a client key', async () => {
    const ctx: GraphQLContext = { master: false, maxLimit: null, call: async () => { throw new Error('no data call expected'); }, confirmResetPassword: async () => { throw new Error('no reset expected'); } };
    expect(await graphql({ schema, source: '{ health }', contextValue: ctx })).toEqual({ data: { health: true } });
    expect(await answerGraphQL(schema, { query: '{ __schema { types { name } } }' }, 'POST', ctx)).toEqual({
      status: 403,
      body: { errors: [{ message: 'Introspection is not allowed', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
    });
    expect((await answerGraphQL(schema, { query: '{ __schema { types { name } } }' }, 'POST', { ...ctx, master: true })).status).toBe(200);
  });

  it('answers what the data API gives wrong alike from graphql-js (a first request) and graphql-jit (the next): a value a scalar cannot show, a null for a non-null field, a failure that is no Parse error', async () => {
    const dates = { createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
    const cases: Array<{ query: string; answer: () => unknown; expected: unknown; logged?: string }> = [
      {
        query: '{ gameScore(id: "abc") { objectId score } }',
        answer: () => ({ objectId: 'abc', ...dates, score: 'lots' }),
        expected: { data: { gameScore: { objectId: 'abc', score: null } }, errors: [{ path: ['gameScore', 'score'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
      },
      {
        query: '{ gameScore(id: "abd") { objectId createdAt } }',
        answer: () => ({ ...dates }),
        // `gameScore` is non-null too, so the null reaches `data`; graphql-js's error wraps an Error, which is logged.
        expected: { data: null, errors: [{ message: 'Internal server error', path: ['gameScore', 'objectId'], extensions: { code: 1 } }] },
        logged: 'Cannot return null for non-nullable field GameScore.objectId.',
      },
      {
        query: '{ gameScore(id: "abe") { objectId } }',
        answer: () => {
          throw new Error('disk on fire');
        },
        expected: { data: null, errors: [{ message: 'Internal server error', path: ['gameScore'], extensions: { code: 1 } }] },
        logged: 'disk on fire',
      },
    ];
    for (const { query, answer, expected, logged } of cases) {
      const internal: unknown[] = [];
      const ctx: GraphQLContext = {
        master: false,
        maxLimit: null,
        call: async () => answer(),
        write: async () => ({ body: answer() }),
        confirmResetPassword: async () => undefined,
      };
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await answerGraphQL(schema, { query }, 'POST', ctx, (error) => internal.push(error)));
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.body).toMatchObject(expected);
        expect(a.body.errors).toHaveLength(1);
        expect(JSON.stringify(a.body)).not.toContain('disk on fire');
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      expect(internal.map((e) => (e as Error).message)).toEqual(logged ? [logged, logged, logged] : []);
    }
  });
});

describe('callCloudCode and the user mutations in the schema', () => {
  const users = cls('_User', { username: { type: 'String' }, password: { type: 'String' }, email: { type: 'String' }, nickname: { type: 'String' } });

  it('offers the user mutations always, and callCloudCode only when the app has functions', () => {
    const none = printSchema(buildSchema([users]));
    for (const name of ['logInWith(', 'resetPassword(', 'confirmResetPassword(', 'sendVerificationEmail(']) expect(none).toContain(`  ${name}`);
    // The fields a logInWith may set: the user's create fields less the ones of a password login and authData.
    expect(none).toMatch(/input UserLoginWithInput \{[^}]*nickname: String/);
    expect(none).not.toMatch(/input UserLoginWithInput \{[^}]*\b(username|password|authData):/);
    expect(none).not.toContain('callCloudCode');
    expect(none).not.toContain('CloudCodeFunction');
    const some = printSchema(buildSchema([users], ['hello', 'sum']));
    expect(some).toContain('  callCloudCode(');
    expect(some).toMatch(/enum CloudCodeFunction \{\s*hello\s*sum\s*\}/);
  });

  it('leaves out a class named like one of their types', () => {
    const names = buildSchema([users, cls('CloudCodeFunction', {}), cls('ResetPasswordInput', {}), cls('UserLoginWithInput', {})], ['hello']).getQueryType()!.getFields();
    expect(names.cloudCodeFunction).toBeUndefined();
    expect(names.resetPasswordInput).toBeUndefined();
    expect(names.userLoginWithInput).toBeUndefined();
  });

  it('builds a valid schema whatever the function names, with exactly those GraphQL can name as enum values', () => {
    const name = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('true', 'false', 'null', '__x', '_ok', 'a.b', 'a-b', '9a', 'hello', 'Sum_2'));
    fc.assert(
      fc.property(fc.array(name, { maxLength: 8 }), (functionNames) => {
        const schema = buildSchema([users], functionNames, { validate: true });
        expect(validateSchema(schema)).toEqual([]);
        const expected = [...new Set(functionNames.filter((n) => /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(n) && !n.startsWith('__') && !['true', 'false', 'null'].includes(n)))];
        const functionEnum = schema.getType('CloudCodeFunction');
        if (expected.length === 0) expect(functionEnum).toBeUndefined();
        else expect((functionEnum as GraphQLEnumType).getValues().map((v) => v.name)).toEqual(expected);
      }),
    );
  });
});

describe('the schema builder makes only valid schemas (so a served schema skips graphql-js\'s check)', () => {
  const FIELD_TYPES = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'GeoPoint', 'File', 'Bytes', 'Polygon', 'Pointer', 'Relation'] as const;
  const name = fc.oneof(
    fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,10}$/),
    fc.constantFrom('User', 'Role', 'Query', 'Mutation', 'Node', 'Class', 'Classes', 'Upload', 'File', 'Viewer', 'id', 'objectId', 'ACL', 'createdAt', 'Health', 'GameScore', 'GameScoreConnection', 'person', 'people'),
  );

  it('validates every schema built from random classes, fields and functions', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 6 }),
        fc.array(fc.tuple(name, fc.constantFrom(...FIELD_TYPES), fc.nat(7), fc.boolean()), { maxLength: 12 }),
        fc.array(name, { maxLength: 4 }),
        (classNames, fieldSpecs, functionNames) => {
          const targets = ['_User', ...classNames];
          // Made afresh each run: the fields below are added to these objects.
          const classes = [cls('_User', { username: { type: 'String' }, password: { type: 'String' }, email: { type: 'String' } }), ...classNames.map((className) => cls(className, {}))];
          for (const [fieldName, type, which, required] of fieldSpecs) {
            const owner = classes[which % classes.length]!;
            const field: FieldType = { type, ...(type === 'Pointer' || type === 'Relation' ? { targetClass: targets[which % targets.length]! } : {}), ...(required ? { required } : {}) };
            (owner.fields as Record<string, FieldType>)[fieldName] = field;
          }
          const schema = buildSchema(classes, functionNames, { validate: true });
          expect(validateSchema(schema).map((e) => e.message)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('a connection\'s page window (Parse Server\'s calculateSkipAndLimit rules)', () => {
  const count = fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined });
  it('never skips or limits below zero, keeps first and before, and refuses negatives with 102', () => {
    fc.assert(
      fc.property(count, count, count, count, count, fc.option(fc.integer({ min: 1, max: 30 }), { nil: null }), (skip, first, after, before, last, maxLimit) => {
        const args = { skip, first, last, after: after === undefined ? undefined : offsetToCursor(after), before: before === undefined ? undefined : offsetToCursor(before) };
        const w = pageWindow(args, maxLimit);
        expect(w.skip ?? 0).toBeGreaterThanOrEqual(0);
        if (w.limit !== undefined) expect(w.limit).toBeGreaterThanOrEqual(0);
        if (first !== undefined) expect(w.limit).toBeLessThanOrEqual(first);
        if (before !== undefined && w.limit !== undefined && w.limit > 0) expect((w.skip ?? 0) + w.limit).toBeLessThanOrEqual(before);
        if (last !== undefined && w.limit !== undefined) expect(w.limit).toBeLessThanOrEqual(maxLimit === null ? last : Math.min(last, maxLimit));
        expect(w.preCount).toBe(last !== undefined && last > 0 && first === undefined && before === undefined && (maxLimit === null || maxLimit > 0));
      }),
    );
    fc.assert(
      fc.property(fc.constantFrom('skip', 'first', 'last'), fc.integer({ max: -1 }), (name, value) => {
        const refused = (() => { try { pageWindow({ [name]: value }, null); } catch (e) { return e; } })();
        expect(refused).toBeInstanceOf(GraphQLError);
        expect((refused as GraphQLError).extensions.code).toBe(102);
      }),
    );
    expect(() => pageWindow({ after: 'not a cursor' }, null)).toThrow('After is not a valid cursor');
  });

  it("writes cursors as graphql-relay's offsetToCursor does", () => {
    fc.assert(fc.property(fc.nat(), (offset) => cursorOf(offset) === offsetToCursor(offset)));
    for (const offset of [0, 9, 10, 99, 100, 2 ** 31]) expect(cursorOf(offset)).toBe(offsetToCursor(offset));
  });
});

describe('where-inputs as Parse where', () => {
  // The GraphQL operator names and the Parse operators they stand for (Parse's GraphQL API guide, "Queries").
  const OPS: Record<string, string> = { equalTo: '$eq', notEqualTo: '$ne', lessThan: '$lt', lessThanOrEqualTo: '$lte', greaterThan: '$gt', greaterThanOrEqualTo: '$gte', in: '$in', notIn: '$nin', exists: '$exists', matchesRegex: '$regex', options: '$options', containedBy: '$containedBy', contains: '$all' };
  const classes = new Map([['Thing', { ...DEFAULT_FIELDS, a: { type: 'String' as const }, n: { type: 'Number' as const }, owner: { type: 'Pointer' as const, targetClass: 'Thing' } }]]);
  const scalar = fc.oneof(fc.string(), fc.double({ noNaN: true }), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 }));
  const constraint = fc.dictionary(fc.constantFrom(...Object.keys(OPS)), scalar, { minKeys: 1 });
  const where: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
    where: fc.record({ a: constraint, n: constraint, OR: fc.array(tie('where'), { maxLength: 2 }) }, { requiredKeys: [] }),
  })).where as fc.Arbitrary<Record<string, unknown>>;
  const expected = (w: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(w).map(([k, v]) =>
        k === 'OR' ? ['$or', (v as Record<string, unknown>[]).map(expected)] : [k, Object.fromEntries(Object.entries(v as object).map(([op, x]) => [OPS[op], x]))],
      ),
    );
  it('renames every operator and combinator and keeps every value', () => {
    fc.assert(
      fc.property(where, (w) => {
        expect(toParseWhere(w, 'Thing', classes)).toEqual(expected(w));
      }),
    );
  });
  it('decodes global ids of the class, and makes pointer constraints subqueries', () => {
    const id = toGlobalId('Thing', 'abc1234567');
    expect(toParseWhere({ id: { equalTo: id, in: [id, 'plain'] } }, 'Thing', classes)).toEqual({ objectId: { $eq: 'abc1234567', $in: ['abc1234567', 'plain'] } });
    expect(toParseWhere({ owner: { have: { a: { equalTo: 'x' } }, exists: true } }, 'Thing', classes)).toEqual({
      owner: { $inQuery: { where: { a: { $eq: 'x' } }, className: 'Thing' }, $exists: true },
    });
    expect(toParseWhere({ meta: { lessThan: { key: 'a.b', value: 3 } } }, 'Thing', classes)).toEqual({ 'meta.a.b': { $lt: 3 } });
  });
});
