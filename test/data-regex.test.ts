import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRegex } from '../src/data/query/regex.js';
import { postgresRegex } from '../src/data/storage/postgres/regex.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { flags, safePattern, text } from './helpers/regexGrammar.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

/**
 * A client's `$regex` cannot hold the server (issue item 9: `^(a+)+$` with the public JavaScript
 * key against one stored 29-character string held every app for 10 s): patterns run in a
 * linear-time engine on SQLite, and in one dialect on both databases.
 */

let server: TestServer;
let attacked: TestApp;
let other: TestApp;

/** A request with the app's JavaScript key, as a browser sends it. */
async function asBrowser(app: TestApp, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${app.apiURL}${path}`, { headers: { 'X-Parse-Application-Id': app.appId, 'X-Parse-JavaScript-Key': app.keys.javascriptKey } });
  return { status: response.status, body: await response.json() };
}

/** The stored strings, 30 to 10,000 characters, by name. */
const TEXTS: Record<string, string> = {
  a29bang: `${'a'.repeat(29)}!`,
  a30: 'a'.repeat(30),
  a1000bang: `${'a'.repeat(1000)}!`,
  a9999b: `${'a'.repeat(9999)}b`,
  a19b9981: `${'a'.repeat(19)}${'b'.repeat(9981)}`,
  a10000bang: `${'a'.repeat(9999)}!`,
};

/** The classic catastrophic patterns and which TEXTS each matches (worked out by hand). */
const WORST: Array<[string, string[]]> = [
  ['^(a+)+$', ['a30']],
  ['(a|aa)+$', ['a30']],
  ['(a*)*b', ['a9999b', 'a19b9981']],
  ['(.*a){20}', ['a29bang', 'a30', 'a1000bang', 'a9999b', 'a10000bang']],
];

let otherId: string;

beforeAll(async () => {
  server = await startTestServer();
  attacked = await createTestApp(server, 'attacked');
  other = await createTestApp(server, 'bystander');
  for (const [key, name] of Object.entries(TEXTS)) {
    expect((await attacked.call('POST', '/classes/Victim', { body: { key, name, tags: [name] } })).status).toBe(201);
  }
  otherId = (await other.call('POST', '/classes/Thing', { body: { n: 1 } })).body.objectId;
});
afterAll(async () => server?.close());

const keysMatching = async (pattern: string, options?: string) => {
  const answer = await asBrowser(attacked, `/classes/Victim${whereQuery({ name: { $regex: pattern, ...(options ? { $options: options } : {}) } }, { keys: 'key' })}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body.results as Array<{ key: string }>).map((r) => r.key).sort();
};

describe('catastrophic patterns with the JavaScript key', () => {
  it.each(WORST)('%s answers with the right objects', async (pattern, expected) => {
    expect(await keysMatching(pattern)).toEqual([...expected].sort());
  });

  it('the same patterns case-insensitively and through $all, $or and $nor', async () => {
    expect(await keysMatching('^(A+)+$', 'i')).toEqual(['a30']);
    const all = await asBrowser(attacked, `/classes/Victim${whereQuery({ tags: { $all: [{ $regex: '^(a|aa)+$' }] } }, { keys: 'key' })}`);
    expect(all).toMatchObject({ status: 200, body: { results: [{ key: 'a30' }] } });
    const or = await asBrowser(attacked, `/classes/Victim${whereQuery({ $or: [{ name: { $regex: '^(a+)+$' } }, { name: { $regex: '(a*)*b' } }] }, { keys: 'key' })}`);
    expect(or.body.results.map((r: { key: string }) => r.key).sort()).toEqual(['a19b9981', 'a30', 'a9999b']);
    const nor = await asBrowser(attacked, `/classes/Victim${whereQuery({ $nor: [{ name: { $regex: '(.*a){20}' } }] }, { keys: 'key' })}`);
    expect(nor.body.results.map((r: { key: string }) => r.key)).toEqual(['a19b9981']);
  });

  it('while one client sends them in a loop, another app answers within 100 ms', async () => {
    let stop = false;
    let attacks = 0;
    const attacker = (async () => {
      while (!stop) {
        for (const [pattern, expected] of WORST) {
          expect(await keysMatching(pattern)).toEqual([...expected].sort());
          attacks++;
        }
      }
    })();
    const latencies: number[] = [];
    try {
      // Measured while the attack runs: at least 60 reads of the other app and 20 attacks.
      const deadline = Date.now() + 30_000;
      while ((latencies.length < 60 || attacks < 20) && Date.now() < deadline) {
        const started = performance.now();
        const read = await asBrowser(other, `/classes/Thing/${otherId}`);
        latencies.push(performance.now() - started);
        expect(read).toMatchObject({ status: 200, body: { objectId: otherId, n: 1 } });
      }
    } finally {
      stop = true;
      await attacker;
    }
    expect(attacks).toBeGreaterThanOrEqual(20);
    latencies.sort((a, b) => a - b);
    const shown = `latencies (ms): ${latencies.map((l) => l.toFixed(0)).join(' ')}`;
    // A backtracking engine held every app for seconds per request, every read among them. The
    // 100 ms bound is on the median: on a loaded two-core machine (a CI run beside other suites) the
    // scheduler alone delays a read now and then, seen as a 95th percentile of 131 ms with a median of 42.
    expect(latencies[Math.floor(latencies.length / 2)], shown).toBeLessThan(100);
    expect(latencies[latencies.length - 1], shown).toBeLessThan(2000);
  });
});

describe('what needs backtracking is refused with 102 on either database', () => {
  it.each([
    ['(a)\\1', 'backreferences (\\1) are not supported: they need a backtracking engine'],
    ['(?<x>a)\\k<x>', 'backreferences (\\k<name>) are not supported: they need a backtracking engine'],
    ['a(?=a)', 'lookahead ((?= and (?!) is not supported: it needs a backtracking engine'],
    ['a(?!b)', 'lookahead ((?= and (?!) is not supported: it needs a backtracking engine'],
    ['(?<=a)a', 'lookbehind ((?<= and (?<!) is not supported: it needs a backtracking engine'],
    ['(?<!b)a', 'lookbehind ((?<= and (?<!) is not supported: it needs a backtracking engine'],
  ])('%s', async (pattern, why) => {
    const answer = await asBrowser(attacked, `/classes/Victim${whereQuery({ name: { $regex: pattern } })}`);
    expect(answer).toEqual({ status: 400, body: { code: 102, error: `Invalid $regex of name: ${why}` } });
    const inAll = await asBrowser(attacked, `/classes/Victim${whereQuery({ tags: { $all: [{ $regex: pattern }] } })}`);
    expect(inAll).toEqual({ status: 400, body: { code: 102, error: `Invalid $regex of tags: ${why}` } });
  });

  it('and a pattern within the dialect answers (positive control)', async () => {
    expect(await keysMatching('^(?:a|b)\\w{28}!$')).toEqual(['a29bang']);
    expect(await keysMatching('^(?<run>a{1,30})$')).toEqual(['a30']);
  });
});

describe.runIf(onPostgres)('PostgreSQL runs the dialect as RE2 does', () => {
  it('for random patterns of the safe grammar, with i, m and s', async () => {
    const cases = fc.sample(fc.tuple(safePattern, flags, fc.array(text, { minLength: 1, maxLength: 4 })), { numRuns: 400, seed: 9 });
    const patterns: string[] = [];
    const texts: string[] = [];
    const expected: boolean[] = [];
    for (const [pattern, options, candidates] of cases) {
      const linear = compileRegex(pattern, options);
      for (const candidate of candidates) {
        patterns.push(postgresRegex(pattern, options));
        texts.push(candidate);
        expected.push(linear.test(candidate));
      }
    }
    const rows = await pgQuery('SELECT t ~ p AS m FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(p, t, i) ORDER BY i', [patterns, texts]);
    const differing = rows.flatMap((row, i) => (row.m === expected[i] ? [] : [`${JSON.stringify(patterns[i])} on ${JSON.stringify(texts[i])}: RE2 ${expected[i]}`]));
    expect(differing).toEqual([]);
  });
});
