import { graphql, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
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

  it('answers health without touching data, and refuses a schema query from a client key', async () => {
    const ctx: GraphQLContext = { master: false, maxLimit: null, call: async () => { throw new Error('no data call expected'); } };
    expect(await graphql({ schema, source: '{ health }', contextValue: ctx })).toEqual({ data: { health: true } });
  });
});
