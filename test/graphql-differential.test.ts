import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromGlobalId } from 'graphql-relay';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpCaseApi, mask, type CaseApi } from './differential/harness.js';
import { startOracle, type Oracle } from './differential/oracle.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// The same GraphQL documents to Parse Server 9's GraphQL API (on PostgreSQL) and to a Backend App's
// `/graphql`, on classes seeded alike through REST; answers are compared after masking objectIds
// (global ids are decoded first, so `id` compares as class + masked objectId), dates and tokens.
// Errors compare by HTTP status, `extensions.code` and `path` (texts differ: docs/parse-differences.md).

/** A mail a side sent: to whom, and its text. */
interface SentMail {
  to: string;
  text: string;
}

/** One side: its GraphQL endpoint, its REST API (for seeding) and its keys. */
interface Side {
  rest: CaseApi;
  /** The text of the newest mail to `to`, waited for (polled with a deadline): mails are sent after the answer. */
  mailTo(to: string): Promise<string>;
  graphql: (document: string, options?: { variables?: unknown; master?: boolean; sessionToken?: string; headers?: Record<string, string>; method?: 'GET' }) => Promise<{ status: number; body: any }>;
  /** A GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec): its fields in the order given, a string as it is, anything else as JSON. */
  multipart: (parts: MultipartPart[], options?: { master?: boolean; sessionToken?: string }) => Promise<{ status: number; body: any }>;
  /** Downloads a file by its URL: status, content type and text. */
  download: (url: string) => Promise<{ status: number; type: string | null; text: string }>;
}

type MultipartPart = { field: string; value: unknown } | { field: string; file: { name: string; type: string; content: string } };

/** An answer's body as text when it is no JSON (Parse Server's multipart refusals are Express's HTML pages). */
async function answerOf(response: Response): Promise<{ status: number; body: any }> {
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

function side(
  name: 'parse' | 'backyard',
  restURL: string,
  graphqlURL: string,
  keys: { appId: string; restKey: string; masterKey: string },
  suffix: string,
  mails: () => Promise<SentMail[]>,
): Side {
  return {
    rest: httpCaseApi(name, restURL, keys, suffix),
    mailTo: async (to) => {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const found = (await mails()).filter((m) => m.to === to);
        if (found.length) return found[found.length - 1]!.text;
      }
      throw new Error(`${name}: no mail to ${to} within 15 s`);
    },
    graphql: async (document, options = {}) => {
      const headers: Record<string, string> = { 'X-Parse-Application-Id': keys.appId, 'content-type': 'application/json', ...options.headers };
      if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
      else if (!options.headers) headers['X-Parse-REST-API-Key'] = keys.restKey;
      if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
      const url = options.method === 'GET' ? `${graphqlURL}?${new URLSearchParams({ query: document })}` : graphqlURL;
      const response = await fetch(url, { method: options.method ?? 'POST', headers, body: options.method === 'GET' ? undefined : JSON.stringify({ query: document, variables: options.variables }) });
      return answerOf(response);
    },
    multipart: async (parts, options = {}) => {
      const headers: Record<string, string> = { 'X-Parse-Application-Id': keys.appId };
      if (options.master) headers['X-Parse-Master-Key'] = keys.masterKey;
      else headers['X-Parse-REST-API-Key'] = keys.restKey;
      if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
      const form = new FormData();
      for (const part of parts) {
        if ('file' in part) form.append(part.field, new Blob([part.file.content], { type: part.file.type }), part.file.name);
        else form.append(part.field, typeof part.value === 'string' ? part.value : JSON.stringify(part.value));
      }
      return answerOf(await fetch(graphqlURL, { method: 'POST', headers, body: form }));
    },
    download: async (url) => {
      const response = await fetch(url);
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    },
  };
}

/** A stored file's name and URL as compared: the random prefix masked, the URL as whether it downloads that name. */
function fileShape(info: { name?: unknown; url?: unknown } | null | undefined): unknown {
  if (!info || typeof info.name !== 'string' || typeof info.url !== 'string') return info;
  return { name: info.name.replace(/^[0-9a-f]{32}_/, '<hex>_'), url: info.url.endsWith(`/${info.name}`) ? '<url of name>' : info.url };
}

/** An answer with each `schemaFields` list in name order: Parse Server on PostgreSQL lists a class's fields in its jsonb's key order. */
function sortedSchemaFields(answer: { status: number; body: any }): { status: number; body: any } {
  const walk = (v: any): any => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, k === 'schemaFields' && Array.isArray(x) ? [...x].sort((a: any, b: any) => String(a.name).localeCompare(String(b.name))) : walk(x)]),
      );
    }
    return v;
  };
  return { status: answer.status, body: walk(answer.body) };
}

/**
 * An answer as compared: errors reduced to `{code, path}`, Relay global ids (`id`, ACL `userId`)
 * decoded to `{globalId: className, objectId}` so that `mask` masks their objectIds.
 */
function normalize(answer: { status: number; body: any }): unknown {
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if ((key === 'id' || key === 'userId') && typeof v === 'string') {
      const { type, id } = fromGlobalId(v);
      if (type && id) return { globalId: type, objectId: id };
    }
    return v;
  };
  const body = answer.body;
  if (!body || typeof body !== 'object') return { status: answer.status, body };
  const out: Record<string, unknown> = { status: answer.status };
  if ('data' in body) out.data = walk(body.data);
  if (Array.isArray(body.errors)) out.errors = body.errors.map((e: any) => ({ code: e.extensions?.code, path: e.path }));
  if (!('data' in body) && !('errors' in body)) out.body = body;
  return out;
}

interface GraphQLCase {
  name: string;
  run(s: Side, cls: (base: string) => string): Promise<unknown[]>;
}

/** Seeds `GameScore_<suffix>` (and its pointer target `Player_<suffix>`) through REST, the same on both sides. */
async function seed(s: Side, cls: (base: string) => string) {
  const Player = cls('Player');
  const GameScore = cls('GameScore');
  await s.rest.call('POST', `/schemas/${Player}`, { master: true, body: { className: Player, fields: { name: { type: 'String' } } } });
  await s.rest.call('POST', `/schemas/${GameScore}`, {
    master: true,
    body: {
      className: GameScore,
      fields: {
        playerName: { type: 'String' },
        score: { type: 'Number' },
        cheatMode: { type: 'Boolean' },
        playedAt: { type: 'Date' },
        meta: { type: 'Object' },
        tags: { type: 'Array' },
        player: { type: 'Pointer', targetClass: Player },
        place: { type: 'GeoPoint' },
      },
    },
  });
  const players: string[] = [];
  for (const name of ['Ann', 'Bob']) players.push((await s.rest.call('POST', `/classes/${Player}`, { body: { name } })).body.objectId);
  const rows = [
    { playerName: 'Ann', score: 10, cheatMode: false, playedAt: '2026-01-01T10:00:00.000Z', meta: { level: 1 }, tags: ['a', 'b'], player: 0, place: [10, 20] },
    { playerName: 'Bob', score: 20, cheatMode: true, playedAt: '2026-01-02T10:00:00.000Z', meta: { level: 2 }, tags: ['b'], player: 1, place: [11, 21] },
    { playerName: 'Cid', score: 30, cheatMode: false, playedAt: '2026-01-03T10:00:00.000Z', meta: { level: 3 }, tags: [], player: 0, place: [12, 22] },
    { playerName: 'dan', score: 40, playedAt: '2026-01-04T10:00:00.000Z', meta: { level: 4 } },
    { playerName: 'Eve', score: 50, cheatMode: true },
  ];
  const ids: string[] = [];
  for (const row of rows) {
    const body: Record<string, unknown> = { ...row, playedAt: row.playedAt && { __type: 'Date', iso: row.playedAt } };
    if (row.player !== undefined) body.player = { __type: 'Pointer', className: Player, objectId: players[row.player] };
    if (row.place) body.place = { __type: 'GeoPoint', latitude: row.place[0], longitude: row.place[1] };
    if (!row.playedAt) delete body.playedAt;
    const created = await s.rest.call('POST', `/classes/${GameScore}`, { body });
    ids.push(created.body.objectId);
  }
  return { Player, GameScore, ids, players };
}

/** `gameScore_ab12cd34` for `GameScore_ab12cd34`: Parse's query name of a class. */
const lower = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

const FIELDS = 'id objectId playerName score cheatMode playedAt meta createdAt updatedAt';

const cases: GraphQLCase[] = [
  {
    name: 'health',
    run: async (s) => [await s.graphql('{ health }')],
  },
  {
    name: 'get by objectId and by global id, with a pointer, an array, a geo point and the ACL',
    run: async (s, cls) => {
      const { GameScore, ids } = await seed(s, cls);
      const q = lower(GameScore);
      const doc = (id: string) => `{ ${q}(id: "${id}") { ${FIELDS} tags { ... on Element { value } } place { latitude longitude } player { id objectId name } ACL { public { read write } users { userId } roles { roleName } } } }`;
      const globalId = Buffer.from(`${GameScore}:${ids[0]}`).toString('base64');
      return [await s.graphql(doc(ids[0]!)), await s.graphql(doc(globalId)), await s.graphql(doc('nope123456'))];
    },
  },
  {
    name: 'find: count, order and the where operators of each type',
    run: async (s, cls) => {
      const { GameScore, players } = await seed(s, cls);
      const q = `${lower(GameScore)}s`;
      const find = (where: string, order = 'order: [score_ASC]') => s.graphql(`{ ${q}(where: ${where}, ${order}) { count edges { node { playerName score } } } }`);
      return [
        await find('{}'),
        await find('{}', 'order: [score_DESC]'),
        // Objects that lack the first key are left out: where missing values sort is each database's (docs/parse-differences.md).
        await find('{ cheatMode: { exists: true } }', 'order: [cheatMode_ASC, playerName_DESC]'),
        await find('{ playerName: { equalTo: "Bob" } }'),
        await find('{ playerName: { notEqualTo: "Bob" } }'),
        await find('{ score: { lessThan: 30 } }'),
        await find('{ score: { lessThanOrEqualTo: 30, greaterThan: 10 } }'),
        await find('{ score: { greaterThanOrEqualTo: 40 } }'),
        await find('{ score: { in: [10, 50] } }'),
        await find('{ score: { notIn: [10, 50] } }'),
        await find('{ cheatMode: { exists: false } }'),
        await find('{ cheatMode: { equalTo: true } }'),
        await find('{ playerName: { matchesRegex: "^d" } }'),
        await find('{ playerName: { matchesRegex: "^D", options: "i" } }'),
        await find('{ playedAt: { greaterThan: "2026-01-02T10:00:00.000Z" } }'),
        await find('{ meta: { equalTo: { key: "level", value: 2 } } }'),
        await find('{ tags: { contains: ["b"] } }'),
        await find('{ OR: [{ score: { equalTo: 10 } }, { score: { equalTo: 40 } }] }'),
        await find('{ AND: [{ score: { greaterThan: 10 } }, { score: { lessThan: 40 } }] }'),
        await find('{ NOR: [{ score: { greaterThan: 10 } }] }'),
        await find(`{ player: { have: { name: { equalTo: "Ann" } } } }`),
        await find(`{ player: { exists: true, haveNot: { objectId: { equalTo: "${players[0]}" } } } }`),
        await find('{ player: { exists: true } }'),
        await find('{ score: { equalTo: "ten" } }'),
      ];
    },
  },
  {
    name: 'pagination: first, after, last, before, skip and pageInfo',
    run: async (s, cls) => {
      const { GameScore } = await seed(s, cls);
      const q = `${lower(GameScore)}s`;
      const page = (args: string) => s.graphql(`{ ${q}(order: [score_ASC], ${args}) { count edges { cursor node { score } } pageInfo { hasPreviousPage hasNextPage startCursor endCursor } } }`);
      const first = await page('first: 2');
      const after = first.body?.data?.[q]?.pageInfo?.endCursor ?? 'x';
      return [
        first,
        await page(`first: 2, after: "${after}"`),
        await page('last: 2'),
        await page('first: 4, last: 2'),
        await page(`before: "${Buffer.from('arrayconnection:2').toString('base64')}"`),
        await page('skip: 3'),
        await page('skip: 1, first: 1'),
        await page('first: 0'),
        await page('skip: -1'),
        await page('first: -1'),
        await page('after: "not a cursor"'),
        await s.graphql(`{ ${q} { count } }`),
      ];
    },
  },
  {
    name: 'create, update and delete mutations',
    run: async (s, cls) => {
      const { GameScore, Player, players } = await seed(s, cls);
      const name = GameScore;
      const q = lower(GameScore);
      const created = await s.graphql(
        `mutation Create($fields: Create${name}FieldsInput) { create${name}(input: { fields: $fields, clientMutationId: "c1" }) { clientMutationId ${q} { ${FIELDS} tags { ... on Element { value } } player { objectId name } place { latitude longitude } ACL { public { read write } } } } }`,
        {
          variables: {
            fields: {
              playerName: 'Zed',
              score: 7,
              cheatMode: true,
              playedAt: '2026-02-01T00:00:00.000Z',
              meta: { nested: { a: 1 } },
              tags: ['x', 1, true],
              player: { link: players[1] },
              place: { latitude: 1, longitude: 2 },
              ACL: { public: { read: true, write: true } },
            },
          },
        },
      );
      const id = created.body?.data?.[`create${name}`]?.[q]?.objectId ?? 'missing';
      const linked = await s.graphql(
        `mutation { create${name}(input: { fields: { playerName: "New", player: { createAndLink: { name: "Neo" } } } }) { ${q} { objectId player { name } } } }`,
      );
      const onlyId = await s.graphql(`mutation { create${name}(input: {}) { ${q} { id } } }`);
      const updated = await s.graphql(`mutation { update${name}(input: { id: "${id}", fields: { score: 8, cheatMode: null } }) { ${q} { objectId score cheatMode playerName updatedAt } } }`);
      const read = await s.graphql(`{ ${q}(id: "${id}") { score cheatMode } }`);
      const deleted = await s.graphql(`mutation { delete${name}(input: { id: "${id}", clientMutationId: "d1" }) { clientMutationId ${q} { objectId playerName } } }`);
      const gone = await s.graphql(`{ ${q}(id: "${id}") { objectId } }`);
      const badPointer = await s.graphql(`mutation { create${name}(input: { fields: { player: { link: "${players[0]}", createAndLink: { name: "x" } } } }) { ${q} { objectId } } }`);
      const wrongType = await s.graphql(`mutation { create${name}(input: { fields: { score: "high" } }) { ${q} { objectId } } }`);
      const updateMissing = await s.graphql(`mutation { update${name}(input: { id: "nope123456", fields: { score: 1 } }) { ${q} { objectId } } }`);
      const players2 = await s.rest.call('GET', `/classes/${Player}`, { query: { where: { name: 'Neo' }, count: 1, limit: 0 } });
      return [created, linked, onlyId, updated, read, deleted, gone, badPointer, wrongType, updateMissing, players2];
    },
  },
  {
    name: 'permissions: CLPs, ACLs, master key and a bad key',
    run: async (s, cls) => {
      const Secret = cls('Secret');
      await s.rest.call('POST', `/schemas/${Secret}`, {
        master: true,
        body: { className: Secret, fields: { v: { type: 'String' } }, classLevelPermissions: { find: {}, get: {}, count: {}, create: {}, update: {}, delete: {}, addField: {}, protectedFields: {} } },
      });
      const made = await s.rest.call('POST', `/classes/${Secret}`, { master: true, body: { v: 'x' } });
      const Private = cls('Private');
      await s.rest.call('POST', `/schemas/${Private}`, { master: true, body: { className: Private, fields: { v: { type: 'String' } } } });
      const hidden = await s.rest.call('POST', `/classes/${Private}`, { body: { v: 'h', ACL: {} } });
      const writeOnly = await s.rest.call('POST', `/classes/${Private}`, { body: { v: 'o', ACL: { '*': { write: true } } } });
      const q = lower(Secret);
      const p = lower(Private);
      return [
        await s.graphql(`{ ${q}s { count edges { node { v } } } }`),
        await s.graphql(`{ ${q}(id: "${made.body.objectId}") { v } }`),
        await s.graphql(`mutation { create${Secret}(input: { fields: { v: "y" } }) { ${q} { objectId } } }`),
        // With a where: Parse Server on PostgreSQL counts a whole class by the planner's estimate.
        await s.graphql(`{ ${q}s(where: { v: { exists: true } }) { count edges { node { v } } } }`, { master: true }),
        await s.graphql(`{ ${p}s { count } ${p}(id: "${hidden.body.objectId}") { v } }`),
        await s.graphql(`{ ${p}(id: "${hidden.body.objectId}") { v } }`, { master: true }),
        await s.graphql('{ health }', { headers: { 'X-Parse-REST-API-Key': 'wrong' } }),
        await s.graphql('{ health }', { headers: { 'X-Parse-Master-Key': 'wrong' } }),
        // An object its creator may not read: any selected field, even one the write answers (objectId),
        // reads the object back, which is refused (101) after the write is done.
        await s.graphql(`mutation { create${Private}(input: { fields: { v: "w", ACL: { public: { read: false, write: true } } } }) { ${p} { id objectId createdAt updatedAt } } }`),
        await s.graphql(`mutation { create${Private}(input: { fields: { v: "r", ACL: { public: { read: false, write: true } } } }) { ${p} { objectId v } } }`),
        await s.graphql(`mutation { update${Private}(input: { id: "${writeOnly.body.objectId}", fields: { v: "u" } }) { ${p} { id objectId updatedAt } } }`),
        await s.graphql(`mutation { update${Private}(input: { id: "${writeOnly.body.objectId}", fields: { v: "u2" } }) { ${p} { objectId createdAt } } }`),
        await s.rest.call('GET', `/classes/${Private}`, { master: true, query: { where: { v: { $in: ['w', 'r', 'u2'] } }, order: 'v', keys: 'v' } }),
      ];
    },
  },
  {
    name: 'protected fields, and a required field',
    run: async (s, cls) => {
      const Card = cls('Card');
      await s.rest.call('POST', `/schemas/${Card}`, {
        master: true,
        body: {
          className: Card,
          fields: { owner: { type: 'String' }, secret: { type: 'String' }, title: { type: 'String', required: true } },
          classLevelPermissions: { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: {}, protectedFields: { '*': ['secret'] } },
        },
      });
      const q = lower(Card);
      const made = await s.graphql(`mutation { create${Card}(input: { fields: { owner: "o", secret: "s", title: "t" } }) { ${q} { objectId owner secret title } } }`);
      const missing = await s.graphql(`mutation { create${Card}(input: { fields: { owner: "o" } }) { ${q} { objectId } } }`);
      return [
        made,
        missing,
        await s.graphql(`{ ${q}s(where: { title: { equalTo: "t" } }) { edges { node { owner secret title } } } }`),
        await s.graphql(`{ ${q}s(where: { title: { equalTo: "t" } }) { edges { node { owner secret title } } } }`, { master: true }),
      ];
    },
  },
  {
    name: 'relations: add, remove and createAndAdd, and the relation field as a connection',
    run: async (s, cls) => {
      const Team = cls('Team');
      const Member = cls('Member');
      await s.rest.call('POST', `/schemas/${Member}`, { master: true, body: { className: Member, fields: { name: { type: 'String' } } } });
      await s.rest.call('POST', `/schemas/${Team}`, { master: true, body: { className: Team, fields: { name: { type: 'String' }, members: { type: 'Relation', targetClass: Member } } } });
      const ann = (await s.rest.call('POST', `/classes/${Member}`, { body: { name: 'Ann' } })).body.objectId;
      const bob = (await s.rest.call('POST', `/classes/${Member}`, { body: { name: 'Bob' } })).body.objectId;
      const t = lower(Team);
      const made = await s.graphql(
        `mutation { create${Team}(input: { fields: { name: "red", members: { add: ["${ann}", "${bob}"], createAndAdd: [{ name: "Cid" }] } } }) { ${t} { objectId name members(order: [name_ASC]) { count edges { node { name } } } } } }`,
      );
      const id = made.body?.data?.[`create${Team}`]?.[t]?.objectId ?? 'missing';
      const removed = await s.graphql(`mutation { update${Team}(input: { id: "${id}", fields: { members: { remove: ["${ann}"] } } }) { ${t} { members(order: [name_DESC], first: 1) { count edges { node { name } } pageInfo { hasNextPage } } } } }`);
      const empty = await s.graphql(`mutation { update${Team}(input: { id: "${id}", fields: { members: {} } }) { ${t} { objectId } } }`);
      const filtered = await s.graphql(`{ ${t}s(where: { members: { have: { name: { equalTo: "Bob" } } } }) { count edges { node { name } } } }`);
      return [made, removed, empty, filtered];
    },
  },
  {
    name: 'request errors: syntax, validation, variables, GET mutations, introspection',
    run: async (s, cls) => {
      const { GameScore } = await seed(s, cls);
      const q = lower(GameScore);
      return [
        await s.graphql('{ health'),
        await s.graphql('{ nothingHere }'),
        await s.graphql(`query Q($n: Float) { ${q}s(where: { score: { equalTo: $n } }) { count } }`, { variables: { n: 'ten' } }),
        await s.graphql(`query Q($n: Float!) { ${q}s(where: { score: { equalTo: $n } }) { count } }`),
        await s.graphql('{ health }', { method: 'GET' }),
        await s.graphql('{ __schema { queryType { name } } }'),
        await s.graphql('{ __schema { queryType { name } } }', { master: true }),
        await s.graphql('{ __type(name: "Query") { name } }'),
        await s.graphql('{ __typename }'),
        await s.graphql('mutation { logOut(input: {}) { ok } }', { method: 'GET' }),
        await s.graphql('query A { health } query B { health }'),
        await s.graphql(''),
      ];
    },
  },
  {
    name: 'users: signUp, logIn, viewer, logOut',
    run: async (s, cls) => {
      const username = cls('user').toLowerCase();
      const signedUp = await s.graphql(`mutation { signUp(input: { fields: { username: "${username}", password: "pw1", email: "${username}@example.com" }, clientMutationId: "s" }) { clientMutationId viewer { sessionToken user { id username email } } } }`);
      const loggedIn = await s.graphql(`mutation { logIn(input: { username: "${username}", password: "pw1" }) { viewer { sessionToken user { objectId username } } } }`);
      const token = loggedIn.body?.data?.logIn?.viewer?.sessionToken;
      const viewer = await s.graphql('{ viewer { sessionToken user { username email } } }', { sessionToken: token });
      const anonymous = await s.graphql('{ viewer { user { username } } }');
      const wrong = await s.graphql(`mutation { logIn(input: { username: "${username}", password: "nope" }) { viewer { sessionToken } } }`);
      const out = await s.graphql('mutation { logOut(input: { clientMutationId: "o" }) { clientMutationId ok } }', { sessionToken: token });
      const after = await s.graphql('{ viewer { user { username } } }', { sessionToken: token });
      const outAnonymous = await s.graphql('mutation { logOut(input: {}) { ok } }');
      const taken = await s.graphql(`mutation { signUp(input: { fields: { username: "${username}", password: "pw2" } }) { viewer { sessionToken } } }`);
      const tokenOnly = await s.graphql(`mutation { signUp(input: { fields: { username: "${username}x", password: "pw2" } }) { viewer { sessionToken } } }`);
      return [signedUp, loggedIn, viewer, anonymous, wrong, out, after, outAnonymous, taken, tokenOnly];
    },
  },
  {
    name: 'node by global id, and the schema follows a new class at once',
    run: async (s, cls) => {
      const { GameScore, ids } = await seed(s, cls);
      const globalId = Buffer.from(`${GameScore}:${ids[1]}`).toString('base64');
      const node = await s.graphql(`{ node(id: "${globalId}") { id ... on ${GameScore} { playerName score } } }`);
      const Later = cls('Later');
      const before = await s.graphql(`{ ${lower(Later)}s { count } }`);
      await s.rest.call('POST', `/classes/${Later}`, { body: { word: 'hi' } });
      const after = await s.graphql(`{ ${lower(Later)}s { count edges { node { word } } } }`);
      return [node, before, after];
    },
  },
  {
    name: 'schema API: class, classes, createClass, updateClass, deleteClass, and the schema follows them',
    run: async (s, cls) => {
      const Target = cls('Target');
      const Shape = cls('Shape');
      const FIELDS_OUT = 'name schemaFields { name __typename ... on SchemaPointerField { targetClassName } ... on SchemaRelationField { targetClassName } }';
      const gql = async (doc: string, master = true) => sortedSchemaFields(await s.graphql(doc, { master }));
      const created = [
        await gql(`mutation { createClass(input: { name: "${Target}", clientMutationId: "t" }) { clientMutationId class { ${FIELDS_OUT} } } }`),
        await gql(
          `mutation { createClass(input: { name: "${Shape}", schemaFields: { addStrings: [{ name: "title" }], addNumbers: [{ name: "size" }], addBooleans: [{ name: "done" }], addArrays: [{ name: "tags" }], addObjects: [{ name: "meta" }], addDates: [{ name: "due" }], addFiles: [{ name: "doc" }], addGeoPoint: { name: "place" }, addPolygons: [{ name: "area" }], addBytes: [{ name: "raw" }], addPointers: [{ name: "target", targetClassName: "${Target}" }], addRelations: [{ name: "targets", targetClassName: "${Target}" }] } }) { class { ${FIELDS_OUT} } } }`,
        ),
      ];
      const q = lower(Shape);
      const used = await s.graphql(`mutation { create${Shape}(input: { fields: { title: "t", size: 2 } }) { ${q} { objectId title size } } }`);
      const classes = sortedSchemaFields(await s.graphql(`{ classes { ${FIELDS_OUT} } }`, { master: true }));
      // Only this case's classes: the two servers have other classes (their own, and other cases').
      if (Array.isArray(classes.body?.data?.classes)) classes.body.data.classes = classes.body.data.classes.filter((c: any) => c.name === Target || c.name === Shape).sort((a: any, b: any) => a.name.localeCompare(b.name));
      return [
        ...created,
        used,
        await gql(`{ class(name: "${Shape}") { ${FIELDS_OUT} } }`),
        classes,
        await gql(`mutation { updateClass(input: { name: "${Shape}", schemaFields: { addStrings: [{ name: "note" }, { name: "gone" }], remove: [{ name: "size" }, { name: "gone" }, { name: "neverThere" }] } }) { class { ${FIELDS_OUT} } } }`),
        await s.graphql(`mutation { update${Shape}(input: { id: "${used.body?.data?.[`create${Shape}`]?.[q]?.objectId ?? 'missing'}", fields: { note: "n" } }) { ${q} { title note } } }`),
        await s.graphql(`{ ${q}s { count edges { node { title note } } } }`),
        await s.graphql(`{ ${q}s { edges { node { size } } } }`),
        // Refusals: no master key, a class that exists or does not, a field named twice or already there, a class not empty.
        await gql(`{ class(name: "${Shape}") { name } }`, false),
        await gql('{ classes { name } }', false),
        await gql(`mutation { createClass(input: { name: "${cls('Other')}" }) { class { name } } }`, false),
        await gql(`mutation { deleteClass(input: { name: "${Target}" }) { class { name } } }`, false),
        await gql(`mutation { createClass(input: { name: "${Shape}" }) { class { name } } }`),
        await gql(`mutation { createClass(input: { name: "${cls('Twice')}", schemaFields: { addStrings: [{ name: "a" }], addNumbers: [{ name: "a" }] } }) { class { name } } }`),
        await gql(`mutation { updateClass(input: { name: "${Shape}", schemaFields: { addNumbers: [{ name: "title" }] } }) { class { name } } }`),
        await gql(`mutation { updateClass(input: { name: "${cls('Missing')}", schemaFields: { addStrings: [{ name: "a" }] } }) { class { name } } }`),
        await gql(`{ class(name: "${cls('Missing')}") { name } }`),
        await gql(`mutation { deleteClass(input: { name: "${cls('Missing')}" }) { class { name } } }`),
        await gql(`mutation { deleteClass(input: { name: "${Shape}" }) { class { name } } }`),
        await gql(`mutation { deleteClass(input: { name: "${Target}", clientMutationId: "d" }) { clientMutationId class { ${FIELDS_OUT} } } }`),
        await gql(`{ class(name: "${Target}") { name } }`),
        await s.graphql(`{ ${lower(Target)}s { count } }`),
      ];
    },
  },
  {
    name: 'callCloudCode: results, params, the caller, and errors',
    run: async (s, cls) => {
      const username = cls('caller').toLowerCase();
      const signedUp = await s.graphql(`mutation { signUp(input: { fields: { username: "${username}", password: "pw" } }) { viewer { sessionToken } } }`);
      const token = signedUp.body?.data?.signUp?.viewer?.sessionToken;
      const call = (input: string, options?: Parameters<Side['graphql']>[1]) => s.graphql(`mutation { callCloudCode(input: ${input}) { clientMutationId result } }`, options);
      return [
        await call('{ functionName: hello }'),
        await call('{ functionName: hello, params: { name: "Ann" }, clientMutationId: "c1" }'),
        await s.graphql('mutation Call($params: Object) { callCloudCode(input: { functionName: echo, params: $params }) { result } }', { variables: { params: { n: 1, list: [1, 'a', null], nested: { ok: true } } } }),
        await call('{ functionName: whoAmI }', { sessionToken: token }),
        await call('{ functionName: whoAmI }'),
        await call('{ functionName: refuse }'),
        await call('{ functionName: crash }'),
        // Not a function, and a function whose name is no GraphQL name: not values of the enum.
        await call('{ functionName: nothing }'),
        await s.graphql('mutation Call($f: CloudCodeFunction!) { callCloudCode(input: { functionName: $f }) { result } }', { variables: { f: 'not-an-enum-value' } }),
        await call('{ params: {} }'),
      ];
    },
  },
  {
    name: 'file uploads: createFile and FileInput.upload in multipart requests, and multipart the spec does not allow',
    run: async (s, cls) => {
      const Doc = cls('Doc');
      await s.rest.call('POST', `/schemas/${Doc}`, { master: true, body: { className: Doc, fields: { title: { type: 'String' }, doc: { type: 'File' } } } });
      const q = lower(Doc);
      const createFile = 'mutation ($file: Upload!) { createFile(input: { upload: $file, clientMutationId: "f" }) { clientMutationId fileInfo { name url } } }';
      const upload = (document: string, variables: unknown, map: unknown, files: { name: string; type: string; content: string }[], master = true) =>
        s.multipart([{ field: 'operations', value: { query: document, variables } }, { field: 'map', value: map }, ...files.map((file, i) => ({ field: String(i + 1), file }))], { master });
      // Parse Server gives a file stored through a class mutation a URL under its GraphQL path, which does not download (docs/parse-differences.md).
      const shown = async (answer: { status: number; body: any }, pick: (data: any) => any, download = true) => {
        const info = answer.body?.data ? pick(answer.body.data) : undefined;
        const downloaded = download && info?.url ? await s.download(info.url) : undefined;
        return { status: answer.status, body: { data: answer.body?.data && { file: fileShape(info), downloaded }, errors: answer.body?.errors } };
      };
      const text = await upload(createFile, { file: null }, { 1: ['variables.file'] }, [{ name: 'hello.txt', type: 'text/plain', content: 'hello world' }]);
      const png = await upload(createFile, { file: null }, { 1: ['variables.file'] }, [{ name: 'photo', type: 'image/png', content: 'not really a png' }]);
      const created = await upload(
        `mutation ($f: Upload) { create${Doc}(input: { fields: { title: "a", doc: { upload: $f } } }) { ${q} { objectId title doc { name url } } } }`,
        { f: null },
        { 1: ['variables.f'] },
        [{ name: 'notes.txt', type: 'text/plain', content: 'some notes' }],
      );
      const id = created.body?.data?.[`create${Doc}`]?.[q]?.objectId ?? 'missing';
      const updated = await upload(
        `mutation ($f: Upload) { update${Doc}(input: { id: "${id}", fields: { doc: { upload: $f } } }) { ${q} { doc { name url } } } }`,
        { f: null },
        { 1: ['variables.f'] },
        [{ name: 'second.txt', type: 'text/plain', content: 'second' }],
      );
      const read = await s.graphql(`{ ${q}(id: "${id}") { title doc { name url } } }`);
      const status = (answer: { status: number }) => ({ status: answer.status, body: null });
      return [
        await shown(text, (d) => d.createFile?.fileInfo),
        await shown(png, (d) => d.createFile?.fileInfo),
        { status: text.status, body: { data: { clientMutationId: text.body?.data?.createFile?.clientMutationId } } },
        await shown(created, (d) => d[`create${Doc}`]?.[q]?.doc, false),
        await shown(updated, (d) => d[`update${Doc}`]?.[q]?.doc, false),
        await shown(read, (d) => d[q]?.doc, false),
        // An Upload is a variable of a multipart request: not a literal, not a JSON value.
        await s.graphql('mutation { createFile(input: { upload: "x" }) { fileInfo { name } } }', { master: true }),
        await s.graphql(createFile, { master: true, variables: { file: 'x' } }),
        // Multipart the spec does not allow: Parse Server's answers are Express's error pages, so only the status compares.
        status(await s.multipart([{ field: 'map', value: { 1: ['variables.file'] } }], { master: true })),
        status(await s.multipart([{ field: 'operations', value: '{not json' }, { field: 'map', value: {} }], { master: true })),
        status(await s.multipart([{ field: 'operations', value: { query: createFile, variables: { file: null } } }, { field: 'map', value: '[1' }], { master: true })),
        status(await s.multipart([{ field: 'operations', value: { query: createFile, variables: { file: null } } }, { field: 'map', value: ['variables.file'] }], { master: true })),
        status(await s.multipart([{ field: 'operations', value: { query: createFile, variables: { file: null } } }, { field: 'map', value: { 1: 'variables.file' } }], { master: true })),
        status(await upload(createFile, { file: null }, { 1: ['query.file'] }, [{ name: 'a.txt', type: 'text/plain', content: 'a' }])),
        status(await s.multipart([{ field: 'operations', value: { query: createFile, variables: { file: null } } }], { master: true })),
      ];
    },
  },
  {
    name: 'logInWith: an anonymous user signs up, logs in again, and refused auth data',
    run: async (s, cls) => {
      const id = cls('anonymous');
      const email = `${id.toLowerCase()}@example.com`;
      const logInWith = (authData: unknown, fields?: unknown) =>
        s.graphql('mutation L($authData: Object!, $fields: UserLoginWithInput) { logInWith(input: { authData: $authData, fields: $fields, clientMutationId: "w" }) { clientMutationId viewer { sessionToken user { id objectId email } } } }', {
          variables: { authData, fields },
        });
      const first = await logInWith({ anonymous: { id } }, { email });
      const token = first.body?.data?.logInWith?.viewer?.sessionToken;
      const again = await logInWith({ anonymous: { id } });
      const viewer = await s.graphql('{ viewer { user { objectId email } } }', { sessionToken: token });
      const tokenOnly = await s.graphql(`mutation { logInWith(input: { authData: { anonymous: { id: "${id}x" } } }) { viewer { sessionToken } } }`);
      return [
        first,
        again,
        viewer,
        tokenOnly,
        await logInWith({ nope: { id: 'x' } }),
        await logInWith({ anonymous: { id: 5 } }),
        await logInWith({ anonymous: { id } }, { username: 'not-here' }),
        await s.graphql('mutation { logInWith(input: {}) { viewer { sessionToken } } }'),
      ];
    },
  },
  {
    name: 'resetPassword, confirmResetPassword with the mailed token, and sendVerificationEmail',
    run: async (s, cls) => {
      const username = cls('reset').toLowerCase();
      const email = `${username}@example.com`;
      const nobody = `nobody-${username}@example.com`;
      const signedUp = await s.graphql(`mutation { signUp(input: { fields: { username: "${username}", password: "old-pw", email: "${email}" } }) { viewer { sessionToken } } }`);
      const reset = await s.graphql(`mutation { resetPassword(input: { email: "${email}", clientMutationId: "r" }) { clientMutationId ok } }`);
      const unknown = await s.graphql(`mutation { resetPassword(input: { email: "${nobody}" }) { ok } }`);
      const token = decodeURIComponent(/[?&]token=([^&\s]+)/.exec(await s.mailTo(email))?.[1] ?? 'no token in the mail');
      const confirmed = await s.graphql('mutation C($token: String!) { confirmResetPassword(input: { username: "ignored", password: "new-pw", token: $token, clientMutationId: "c" }) { clientMutationId ok } }', {
        variables: { token },
      });
      const logIn = (password: string) => s.graphql(`mutation { logIn(input: { username: "${username}", password: "${password}" }) { viewer { user { username } } } }`);
      return [
        signedUp,
        reset,
        unknown,
        confirmed,
        await logIn('new-pw'),
        await logIn('old-pw'),
        await s.graphql(`mutation { sendVerificationEmail(input: { email: "${nobody}", clientMutationId: "v" }) { clientMutationId ok } }`),
        await s.graphql(`mutation { sendVerificationEmail(input: { email: "${email}" }) { ok } }`),
        await s.graphql('mutation { sendVerificationEmail(input: { email: "" }) { ok } }'),
        await s.graphql('mutation { resetPassword(input: {}) { ok } }'),
        await s.graphql('mutation { confirmResetPassword(input: { username: "u", password: "p" }) { ok } }'),
      ];
    },
  },
];

let oracle: Oracle;
let dataGraphQL: Side;
let app: TestApp;
let server: TestServer;
let parse: (suffix: string) => Side;
let backyard: (suffix: string) => Side;

/**
 * The cloud code of both sides: a trigger for the test beside the data API, and functions for
 * `callCloudCode` (`not-an-enum-value` is no GraphQL name: neither side offers it in the enum).
 */
const CLOUD = `
Parse.Cloud.beforeSave('Hooked', (request) => {
  if (request.object.get('refuse')) throw new Parse.Error(142, 'refused by the trigger');
  request.object.set('stamp', 'by trigger');
});
Parse.Cloud.define('hello', (request) => 'Hello ' + (request.params.name || 'world'));
Parse.Cloud.define('echo', (request) => request.params);
Parse.Cloud.define('whoAmI', (request) => (request.user ? request.user.get('username') : null));
Parse.Cloud.define('refuse', () => { throw new Parse.Error(142, 'refused by the function'); });
Parse.Cloud.define('crash', () => { throw new Error('crashed'); });
Parse.Cloud.define('not-an-enum-value', () => 1);
`;

/** Parse Server's mail adapter: each mail a line of JSON in `options.file`, read back by `Side.mailTo`. */
const MAIL_ADAPTER = `
const fs = require('node:fs');
module.exports = (options) => ({
  sendMail: async (mail) => fs.appendFileSync(options.file, JSON.stringify({ to: mail.to, text: mail.text }) + '\\n'),
});
`;

let oracleDir: string;

/** Writes the app's cloud code as a deploy does, and loads it. */
async function deployCloud(appId: string, source: string): Promise<void> {
  const file = path.join(server.home, 'apps', appId, 'cloud', 'cloud', 'main.js');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, source);
  await server.platform.services.cloud.reload(appId);
}

beforeAll(async () => {
  oracleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-graphql-oracle-'));
  const mailFile = path.join(oracleDir, 'mails.jsonl');
  fs.writeFileSync(path.join(oracleDir, 'main.js'), CLOUD);
  fs.writeFileSync(path.join(oracleDir, 'mail.js'), MAIL_ADAPTER);
  [oracle, server] = await Promise.all([
    startOracle({
      cloud: path.join(oracleDir, 'main.js'),
      appName: 'Oracle',
      emailAdapter: { module: path.join(oracleDir, 'mail.js'), options: { file: mailFile } },
    }),
    startTestServer(),
  ]);
  app = await createTestApp(server, 'graphql-differential');
  await deployCloud(app.appId, CLOUD);
  const parseMails = async (): Promise<SentMail[]> =>
    fs.existsSync(mailFile) ? fs.readFileSync(mailFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as SentMail) : [];
  // The outbox answers newest first.
  const backyardMails = async (): Promise<SentMail[]> => (await server.platform.services.dataApi.apps.mails(app.appId)).reverse();
  parse = (suffix) => side('parse', oracle.url, new URL('/graphql', oracle.url).href, oracle.keys, suffix, parseMails);
  const keys = { appId: app.appId, restKey: app.keys.restKey, masterKey: app.keys.masterKey };
  backyard = (suffix) => side('backyard', app.apiURL, `${server.url}/graphql`, keys, suffix, backyardMails);
  dataGraphQL = side('backyard', app.apiURL, `${app.apiURL}/graphql`, keys, 'data', backyardMails);
}, 180_000);
afterAll(async () => {
  await Promise.all([oracle?.close(), server?.close()]);
  if (oracleDir) fs.rmSync(oracleDir, { recursive: true, force: true });
});

describe('Backyard\'s GraphQL beside its data API', () => {
  it('runs cloud code triggers as REST does: a beforeSave that changes and one that refuses', async () => {
    // The trigger is in CLOUD, deployed before the tests.
    const s = backyard('hooks');
    const saved = await s.graphql('mutation { createHooked(input: { fields: { title: \"a\" } }) { hooked { title } } }');
    // The class is new: its fields appear in the schema once the first object made them.
    expect(saved.status).toBe(400);
    await s.rest.call('POST', '/schemas/Hooked', { master: true, body: { className: 'Hooked', fields: { title: { type: 'String' }, stamp: { type: 'String' }, refuse: { type: 'Boolean' } } } });
    const created = await s.graphql('mutation { createHooked(input: { fields: { title: "a" } }) { hooked { title stamp } } }');
    expect(created).toEqual({ status: 200, body: { data: { createHooked: { hooked: { title: 'a', stamp: 'by trigger' } } } } });
    const refused = await s.graphql('mutation { createHooked(input: { fields: { title: "b", refuse: true } }) { hooked { title } } }');
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ data: { createHooked: null }, errors: [{ message: 'refused by the trigger', path: ['createHooked'], extensions: { code: 142 } }] });
    expect((await s.rest.call('GET', '/classes/Hooked', { query: { count: 1, limit: 0 } })).body.count).toBe(1);
  });

  it('answers at <data API>/graphql as at /graphql, with the X-Backend-* headers too', async () => {
    const doc = '{ health users { count } }';
    const root = await backyard('x').graphql(doc);
    expect(root).toEqual({ status: 200, body: { data: { health: true, users: { count: 0 } } } });
    expect(await dataGraphQL.graphql(doc)).toEqual(root);
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'X-Backend-Application-Id': app.appId, 'X-Backend-REST-API-Key': app.keys.restKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: doc }),
    });
    expect({ status: response.status, body: await response.json() }).toEqual(root);
  });
  it('offers callCloudCode once an app has functions, and follows each deploy', async () => {
    const other = await createTestApp(server, 'graphql-functions');
    const s = side('backyard', other.apiURL, `${other.apiURL}/graphql`, { appId: other.appId, restKey: other.keys.restKey, masterKey: other.keys.masterKey }, 'fn', async () => []);
    const call = (name: string) => s.graphql(`mutation { callCloudCode(input: { functionName: ${name} }) { result } }`);
    // A new app's starting code defines `hello`.
    expect(await call('hello')).toEqual({ status: 200, body: { data: { callCloudCode: { result: 'Hello, world!' } } } });
    // Without functions Parse Server has no callCloudCode (parse-server src/GraphQL/loaders/functionsMutations.js).
    await deployCloud(other.appId, "Parse.Cloud.beforeSave('Thing', () => undefined);\n");
    expect(await call('hello')).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } });
    await deployCloud(other.appId, "Parse.Cloud.define('hello', () => 'first');\n");
    expect(await call('hello')).toEqual({ status: 200, body: { data: { callCloudCode: { result: 'first' } } } });
    await deployCloud(other.appId, "Parse.Cloud.define('bye', () => 'second');\n");
    expect(await call('bye')).toEqual({ status: 200, body: { data: { callCloudCode: { result: 'second' } } } });
    expect(await call('hello')).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } });
    const enumValues = () => s.graphql('{ __type(name: "CloudCodeFunction") { enumValues { name } } }', { master: true });
    expect((await enumValues()).body).toEqual({ data: { __type: { enumValues: [{ name: 'bye' }] } } });
    // A webhook function is a function too (Parse Server's getFunctionNames lists both).
    expect((await s.rest.call('POST', '/hooks/functions', { master: true, body: { functionName: 'viaHook', url: 'https://hooks.example.com/via' } })).status).toBe(200);
    expect((await enumValues()).body).toEqual({ data: { __type: { enumValues: [{ name: 'bye' }, { name: 'viaHook' }] } } });
  });

  it('sendVerificationEmail mails a new link through the app\'s mailer when the app verifies emails', async () => {
    const other = await createTestApp(server, 'graphql-verify');
    await server.platform.services.backendApps.configure(other.appId, { verifyUserEmails: true });
    const mails = async () => (await server.platform.services.dataApi.apps.mails(other.appId)).reverse();
    const s = side('backyard', other.apiURL, `${other.apiURL}/graphql`, { appId: other.appId, restKey: other.keys.restKey, masterKey: other.keys.masterKey }, 'v', mails);
    await s.graphql('mutation { signUp(input: { fields: { username: "vera", password: "pw", email: "vera@example.com" } }) { viewer { sessionToken } } }');
    const first = await s.mailTo('vera@example.com');
    expect(first).toContain('verify_email?token=');
    expect(await s.graphql('mutation { sendVerificationEmail(input: { email: "vera@example.com" }) { ok } }')).toEqual({ status: 200, body: { data: { sendVerificationEmail: { ok: true } } } });
    let second = first;
    for (const deadline = Date.now() + 15_000; second === first && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) second = await s.mailTo('vera@example.com');
    expect(second).toContain('verify_email?token=');
    expect(second).not.toBe(first);
    expect((await mails()).filter((m) => m.to === 'vera@example.com')).toHaveLength(2);
  });
});

describe('GraphQL uploads on Backyard', () => {
  const createFile = 'mutation ($f: Upload!) { createFile(input: { upload: $f }) { fileInfo { name url } } }';
  const fileParts = (file: { name: string; type: string; content: string }): MultipartPart[] => [
    { field: 'operations', value: { query: createFile, variables: { f: null } } },
    { field: 'map', value: { 1: ['variables.f'] } },
    { field: '1', file },
  ];

  it('stores an upload with the files route\'s checks: who may upload, refused types, at <data API>/graphql too', async () => {
    const s = backyard('uploads');
    const publicUpload = await s.multipart(fileParts({ name: 'a.txt', type: 'text/plain', content: 'a' }));
    expect(publicUpload.status).toBe(200);
    expect(publicUpload.body).toMatchObject({ data: { createFile: null }, errors: [{ path: ['createFile'], extensions: { code: 130 }, message: expect.stringMatching(/File upload by public is disabled/) }] });
    const username = `up${crypto.randomBytes(4).toString('hex')}`;
    const user = await s.rest.call('POST', '/users', { body: { username, password: 'pw' } });
    const byUser = await s.multipart(fileParts({ name: 'b.txt', type: 'text/plain', content: 'by a user' }), { sessionToken: user.body.sessionToken });
    expect(byUser.status).toBe(200);
    const info = byUser.body.data.createFile.fileInfo;
    expect(info.name).toMatch(/^[0-9a-f]{32}_b\.txt$/);
    expect(await s.download(info.url)).toEqual({ status: 200, type: 'text/plain; charset=utf-8', text: 'by a user' });
    const html = await s.multipart(fileParts({ name: 'page.html', type: 'text/html', content: '<script></script>' }), { master: true });
    expect(html.body).toMatchObject({ data: { createFile: null }, errors: [{ path: ['createFile'], extensions: { code: 130 }, message: expect.stringMatching(/extension html is disabled/) }] });
    const atData = await dataGraphQL.multipart(fileParts({ name: 'c.txt', type: 'text/plain', content: 'c' }), { master: true });
    expect(atData.status).toBe(200);
    expect(atData.body.data.createFile.fileInfo.name).toMatch(/^[0-9a-f]{32}_c\.txt$/);
  });

  it('answers multipart it cannot take with a 4xx that says what was wrong, never a 500', async () => {
    const s = backyard('uploads');
    const noFile = await s.multipart([{ field: 'operations', value: { query: createFile, variables: { f: null } } }, { field: 'map', value: { 1: ['variables.f'] } }], { master: true });
    expect(noFile).toEqual({ status: 400, body: { errors: [{ message: expect.stringMatching(/File missing in the request: the ‘map’ names part ‘1’/), extensions: { code: 'BAD_REQUEST' } }] } });
    const unknownPath = await s.multipart([{ field: 'operations', value: { query: createFile, variables: {} } }, { field: 'map', value: { 1: ['variables.g.h'] } }, { field: '1', file: { name: 'a.txt', type: 'text/plain', content: 'a' } }], { master: true });
    expect(unknownPath).toEqual({ status: 400, body: { errors: [{ message: expect.stringMatching(/Invalid object path for the ‘map’ multipart field entry key ‘1’ array index ‘0’ value ‘variables.g.h’/), extensions: { code: 'BAD_REQUEST' } }] } });
    const noOperations = await s.multipart([{ field: 'map', value: {} }], { master: true });
    expect(noOperations).toEqual({ status: 400, body: { errors: [{ message: expect.stringMatching(/‘map’ should follow ‘operations’/), extensions: { code: 'BAD_REQUEST' } }] } });
    // Over the data API's body limit (20 MiB): refused as REST refuses such an upload, without reading past the limit.
    const big = await s.multipart(fileParts({ name: 'big.bin', type: 'application/octet-stream', content: 'x'.repeat(20 * 1024 * 1024 + 1) }), { master: true });
    expect(big).toEqual({ status: 413, body: { code: 129, error: expect.stringMatching(/larger than 20971520 bytes/) } });
  });
});

describe('GraphQL API against Parse Server 9', () => {
  for (const c of cases) {
    // Tried again once, on new classes, when the answers differ: under the full suite's load the oracle
    // once answered 111 to a FileInput.upload update that it answers with the file alone and every other
    // time (CI of b8c519a). A difference of Backyard's own shows on both tries.
    it(c.name, { retry: 1 }, async () => {
      const suffix = crypto.randomBytes(4).toString('hex');
      const cls = (base: string) => `${base}_${suffix}`;
      const ours = mask((await c.run(backyard(suffix), cls)).map((a) => normalize(a as never)));
      const theirs = mask((await c.run(parse(suffix), cls)).map((a) => normalize(a as never)));
      // The oracle answered with data at least once: a case of nothing but refusals compares nothing.
      expect((theirs as { status: number; data?: unknown }[]).some((a) => a.status === 200 && a.data)).toBe(true);
      expect(ours).toEqual(theirs);
    });
  }

  it('password reset errors: Parse Server answers INTERNAL_SERVER_ERROR, Backyard the Parse code (docs/parse-differences.md)', async () => {
    const suffix = crypto.randomBytes(4).toString('hex');
    const codes = async (s: Side) => {
      const answers = [
        await s.graphql('mutation { resetPassword(input: { email: "" }) { ok } }'),
        await s.graphql(`mutation { confirmResetPassword(input: { username: "u", password: "new-pw", token: "no-such-token-${suffix}" }) { ok } }`),
        await s.graphql(`mutation { confirmResetPassword(input: { username: "u", password: "", token: "no-such-token-${suffix}" }) { ok } }`),
      ];
      return answers.map((a) => ({ status: a.status, data: a.body?.data, codes: (a.body?.errors ?? []).map((e: any) => e.extensions?.code) }));
    };
    const [theirs, ours] = [await codes(parse(suffix)), await codes(backyard(suffix))];
    const answer = (field: string, code: unknown) => ({ status: 200, data: { [field]: null }, codes: [code] });
    // Parse Server's resetPassword and confirmResetPassword pass their errors on without its Parse code.
    expect(theirs).toEqual([answer('resetPassword', 'INTERNAL_SERVER_ERROR'), answer('confirmResetPassword', 'INTERNAL_SERVER_ERROR'), answer('confirmResetPassword', 'INTERNAL_SERVER_ERROR')]);
    expect(ours).toEqual([answer('resetPassword', 204), answer('confirmResetPassword', 101), answer('confirmResetPassword', 201)]);
  });
});
