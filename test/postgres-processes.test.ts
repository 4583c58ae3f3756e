import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { startRoundRobin, type RoundRobin } from './helpers/roundRobin.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';
import { makeHome, removeHome } from './helpers/server.js';
import { onPostgres, pgQuery } from './helpers/storage.js';

const exec = promisify(execFile);

/**
 * Several Processes, one truth: two `backyard serve` processes on one PostgreSQL and one
 * shared home, behind a round-robin proxy. What is made through one is seen through the other.
 */
describe.skipIf(!onPostgres)('two backyard serve processes on one PostgreSQL', () => {
  let home: string;
  let token: string;
  let a: ServeProcess;
  let b: ServeProcess;
  let proxy: RoundRobin;
  let app: { appId: string; restKey: string; javascriptKey: string };
  // A database of their own, so that ending their listening connections touches no other suite's.
  const database = `processes_${Math.random().toString(36).slice(2, 10)}`;
  const databaseUrl = () => {
    const url = new URL(process.env.BACKYARD_TEST_DATABASE_URL!);
    url.pathname = `/${database}`;
    return url.toString();
  };
  const env = () => stdioEnv(home, { BACKYARD_DATABASE_URL: databaseUrl(), BACKYARD_LOG_LEVEL: 'warn' });

  /** A data API call through `base` (a process or the proxy) with the REST key. */
  const data = async (base: string, method: string, path: string, options: { body?: unknown; sessionToken?: string } = {}) => {
    const headers: Record<string, string> = { 'X-Parse-Application-Id': app.appId, 'X-Parse-REST-API-Key': app.restKey, 'content-type': 'application/json' };
    if (options.sessionToken) headers['X-Parse-Session-Token'] = options.sessionToken;
    const response = await fetch(`${base}/data${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** A management API call through `base`. */
  const manage = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const master = (base: string, requests: unknown[]) => manage(base, 'POST', `/backend-apps/${app.appId}/call-backend-api`, { requests });

  beforeAll(async () => {
    home = makeHome();
    await pgQuery(`CREATE DATABASE ${database}`);
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: env() })).stdout.trim();
    a = new ServeProcess(await freePort(), token, env);
    b = new ServeProcess(await freePort(), token, env);
    await a.start();
    await b.start();
    proxy = await startRoundRobin([a.url, b.url]);
    const created = await manage(a.url, 'POST', '/backend-apps', { appName: 'shared' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    app = { appId: created.body.appId, restKey: created.body.restKey, javascriptKey: created.body.javascriptKey };
    // Before any data call, so that both processes read it with the app's first request.
    await exec(process.execPath, [CLI, 'app', 'config', app.appId, 'liveQuery.classNames=["Live"]'], { env: env() });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    for (const p of [a, b]) if (p?.running) await p.stop('SIGTERM');
    if (home) removeHome(home);
    await pgQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it('keeps the platform state in PostgreSQL: nothing in the home, and what one process records the other reads', async () => {
    expect(fs.existsSync(path.join(home, 'platform.db'))).toBe(false);
    const rows = await pgQuery('SELECT app_name FROM backyard.backend_apps', [], databaseUrl());
    expect(rows).toEqual([{ app_name: 'shared' }]);
    // An app made through B is listed through A, and its keys work through A's data API.
    const made = await manage(b.url, 'POST', '/backend-apps', { appName: 'from-b' });
    expect(made.status).toBe(201);
    expect((await manage(a.url, 'GET', '/backend-apps?appName=from-b')).body).toEqual([{ appId: made.body.appId, appName: 'from-b' }]);
    const viaA = await fetch(`${a.url}/data/classes/Thing`, {
      method: 'POST',
      headers: { 'X-Parse-Application-Id': made.body.appId, 'X-Parse-REST-API-Key': made.body.restKey, 'content-type': 'application/json' },
      body: JSON.stringify({ n: 1 }),
    });
    expect(viaA.status).toBe(201);
    // A dashboard session started through A is a session of B too; signing out through B ends it for A.
    const signedIn = await fetch(`${a.url}/dashboard/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: a.url },
      body: new URLSearchParams({ token, next: '/dashboard' }),
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(`${b.url}/dashboard`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const out = await fetch(`${b.url}/dashboard/sign-out`, {
      method: 'POST',
      headers: { cookie, origin: b.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    expect((await fetch(`${a.url}/dashboard`, { headers: { cookie }, redirect: 'manual' })).status).not.toBe(200);
  });

  it('a LiveQuery subscriber of one process gets the changes written through the other', async () => {
    const socket = new WebSocket(`${b.url.replace(/^http/, 'ws')}/data`);
    const messages: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    socket.on('message', (raw) => {
      messages.push(JSON.parse(raw.toString()) as Record<string, unknown>);
      waiters.shift()?.();
    });
    const nth = async (n: number) => {
      while (messages.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      return messages[n - 1]!;
    };
    await new Promise<void>((resolve, reject) => socket.on('open', resolve).on('error', reject));
    socket.send(JSON.stringify({ op: 'connect', applicationId: app.appId, javascriptKey: app.javascriptKey }));
    expect(await nth(1)).toMatchObject({ op: 'connected' });
    socket.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Live', where: { n: 77 } } }));
    expect(await nth(2)).toMatchObject({ op: 'subscribed', requestId: 1 });
    const created = await data(a.url, 'POST', '/classes/Live', { body: { n: 77, text: 'through a' } });
    expect(created.status).toBe(201);
    expect(await nth(3)).toMatchObject({ op: 'create', requestId: 1, object: { className: 'Live', objectId: created.body.objectId, n: 77, text: 'through a' } });
    await data(a.url, 'PUT', `/classes/Live/${created.body.objectId}`, { body: { n: 78 } });
    expect(await nth(4)).toMatchObject({ op: 'leave', requestId: 1, object: { n: 78 }, original: { n: 77 } });
    socket.close();
  });

  it('a LiveQuery subscription on one process ends within the re-check period when its session is logged out through the other', async () => {
    const signedUp = await data(a.url, 'POST', '/users', { body: { username: 'live-logout', password: 'secret-1' } });
    expect(signedUp.status).toBe(201);
    const socket = new WebSocket(`${b.url.replace(/^http/, 'ws')}/data`);
    const messages: Array<Record<string, unknown>> = [];
    socket.on('message', (raw) => messages.push(JSON.parse(raw.toString()) as Record<string, unknown>));
    await new Promise<void>((resolve, reject) => socket.on('open', resolve).on('error', reject));
    const arrived = (op: string, n?: number) => messages.some((m) => m.op === op && (n === undefined || (m.object as { n?: number } | undefined)?.n === n));
    try {
      socket.send(JSON.stringify({ op: 'connect', applicationId: app.appId, javascriptKey: app.javascriptKey }));
      socket.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Live', where: { n: { $gte: 100 } } }, sessionToken: signedUp.body.sessionToken }));
      socket.send(JSON.stringify({ op: 'subscribe', requestId: 2, query: { className: 'Live', where: { n: { $gte: 100 } } } }));
      await expect.poll(() => messages.filter((m) => m.op === 'subscribed').length, { timeout: 10_000 }).toBe(2);
      expect((await data(a.url, 'POST', '/logout', { sessionToken: signedUp.body.sessionToken, body: {} })).status).toBe(200);
      // Process b did not hear of the logout: its periodic check of the tokens it holds ends the subscription.
      await expect.poll(() => messages.find((m) => m.op === 'error'), { timeout: 20_000, interval: 50 }).toEqual({ op: 'error', error: 'Invalid session token', code: 209, reconnect: false, requestId: 1 });
      await data(a.url, 'POST', '/classes/Live', { body: { n: 100 } });
      // The subscription without a session (requestId 2) has the change: the ended one would have had it by now.
      await expect.poll(() => arrived('create', 100), { timeout: 10_000, interval: 50 }).toBe(true);
      expect(messages.filter((m) => m.op === 'create').map((m) => m.requestId)).toEqual([2]);
    } finally {
      socket.close();
    }
  });

  it('an object written through one process is read through the other at once, and queried', async () => {
    const created = await data(a.url, 'POST', '/classes/Note', { body: { text: 'from a', n: 1 } });
    expect(created.status).toBe(201);
    expect((await data(b.url, 'GET', `/classes/Note/${created.body.objectId}`)).body).toMatchObject({ text: 'from a', n: 1 });
    const updated = await data(b.url, 'PUT', `/classes/Note/${created.body.objectId}`, { body: { n: { __op: 'Increment', amount: 2 } } });
    expect(updated.body).toMatchObject({ n: 3 });
    const found = await data(a.url, 'GET', `/classes/Note?${new URLSearchParams({ where: JSON.stringify({ n: { $gte: 3 } }) })}`);
    expect(found.body.results.map((r: { objectId: string }) => r.objectId)).toEqual([created.body.objectId]);
  });

  it('a session made through one is honoured by the other, and a logout through the other ends it for both', async () => {
    const signedUp = await data(a.url, 'POST', '/users', { body: { username: 'ada', password: 'secret-1' } });
    expect(signedUp.status).toBe(201);
    const sessionToken = signedUp.body.sessionToken as string;
    expect((await data(b.url, 'GET', '/users/me', { sessionToken })).body).toMatchObject({ username: 'ada' });
    expect((await data(b.url, 'POST', '/logout', { sessionToken, body: {} })).status).toBe(200);
    expect(await data(a.url, 'GET', '/users/me', { sessionToken })).toMatchObject({ status: 400, body: { code: 209 } });
  });

  it('keeps usernames unique when both processes sign up the same name at once', async () => {
    const tries = await Promise.all(
      Array.from({ length: 6 }, (_, i) => data(i % 2 ? a.url : b.url, 'POST', '/users', { body: { username: 'twin', password: `pw-${i}` } })),
    );
    expect(tries.filter((t) => t.status === 201)).toHaveLength(1);
    expect(tries.filter((t) => t.status !== 201).every((t) => t.body.code === 202)).toBe(true);
  });

  describe('racing sign-ups at an app’s first users, split across both processes: the database picks one winner', () => {
    const NAMES = 15;
    const TRIES = 4;
    /** A new app (no `_User` table yet) and its sign-ups, all sent at once, alternately to A and B; answers in order. */
    const raceOnFreshApp = async (bodies: (i: number) => unknown) => {
      const made = await manage(a.url, 'POST', '/backend-apps', { appName: `race-${Math.random().toString(36).slice(2, 8)}` });
      expect(made.status).toBe(201);
      const { appId, restKey } = made.body as { appId: string; restKey: string };
      const answers = await Promise.all(
        Array.from({ length: NAMES * TRIES }, async (_, i) => {
          const response = await fetch(`${i % 2 ? a.url : b.url}/data/users`, {
            method: 'POST',
            headers: { 'X-Parse-Application-Id': appId, 'X-Parse-REST-API-Key': restKey, 'content-type': 'application/json' },
            body: JSON.stringify(bodies(i)),
          });
          return { status: response.status, body: (await response.json()) as any };
        }),
      );
      /** The answers of name `n` (bodies i with i % NAMES === n). */
      const of = (n: number) => answers.filter((_, i) => i % NAMES === n);
      const rows = (sql: string) => pgQuery(sql.replace('$users', `"app_${appId}"."cls__User"`), [], databaseUrl());
      return { of, rows };
    };

    it(`${NAMES} usernames × ${TRIES}: one 201 and ${TRIES - 1} 202 each, every name stored once`, async () => {
      const race = await raceOnFreshApp((i) => ({ username: `racer${i % NAMES}`, password: `pw-${i}` }));
      for (let n = 0; n < NAMES; n++) {
        expect(race.of(n).map((t) => t.status).sort(), JSON.stringify(race.of(n))).toEqual([201, 400, 400, 400]);
        for (const t of race.of(n).filter((t) => t.status !== 201)) expect(t.body).toEqual({ code: 202, error: 'Account already exists for this username.' });
      }
      const stored = await race.rows(`SELECT data->>'username' AS name, count(*)::int AS n FROM $users GROUP BY 1`);
      expect(stored.map((r) => `${r.name}: ${r.n}`).sort()).toEqual(Array.from({ length: NAMES }, (_, n) => `racer${n}: 1`).sort());
    });

    it(`${NAMES} emails × ${TRIES} differing only in case: one 201 and ${TRIES - 1} 203 each`, async () => {
      const variants = [(e: string) => e, (e: string) => e.toUpperCase(), (e: string) => e[0]!.toUpperCase() + e.slice(1), (e: string) => e.replace('example', 'EXAMPLE')];
      const race = await raceOnFreshApp((i) => ({ username: `mailer${i}`, password: 'pw', email: variants[Math.floor(i / NAMES)]!(`person${i % NAMES}@example.com`) }));
      for (let n = 0; n < NAMES; n++) {
        expect(race.of(n).map((t) => t.status).sort(), JSON.stringify(race.of(n))).toEqual([201, 400, 400, 400]);
        for (const t of race.of(n).filter((t) => t.status !== 201)) expect(t.body).toEqual({ code: 203, error: 'Account already exists for this email address.' });
      }
      const stored = await race.rows(`SELECT lower(data->>'email') AS email, count(*)::int AS n FROM $users GROUP BY 1 HAVING count(*) > 1`);
      expect(stored).toEqual([]);
      expect(await race.rows(`SELECT count(*)::int AS n FROM $users`)).toEqual([{ n: NAMES }]);
    });

    it(`${NAMES} anonymous ids × ${TRIES}: one user each; the others 208, or logged in as that user once it is committed`, async () => {
      const race = await raceOnFreshApp((i) => ({ authData: { anonymous: { id: `anon-${i % NAMES}` } } }));
      for (let n = 0; n < NAMES; n++) {
        const winners = race.of(n).filter((t) => t.status === 201);
        expect(winners, JSON.stringify(race.of(n))).toHaveLength(1);
        for (const t of race.of(n).filter((t) => t.status !== 201)) {
          if (t.status === 200) expect(t.body.objectId).toBe(winners[0]!.body.objectId);
          else expect(t.body).toEqual({ code: 208, error: 'this auth is already used' });
        }
      }
      const stored = await race.rows(`SELECT data#>>'{authData,anonymous,id}' AS id, count(*)::int AS n FROM $users GROUP BY 1`);
      expect(stored.map((r) => `${r.id}: ${r.n}`).sort()).toEqual(Array.from({ length: NAMES }, (_, n) => `anon-${n}: 1`).sort());
    });
  });

  it('a schema change through one process binds the other', async () => {
    const made = await master(a.url, [{ method: 'POST', url: '/schemas/Typed', body: { className: 'Typed', fields: { size: { type: 'Number' } } } }]);
    expect(made.body.responses[0]).toMatchObject({ code: 200 });
    // The other process learns of it by NOTIFY, delivered after the commit: poll, do not sleep.
    await expect
      .poll(async () => (await data(b.url, 'POST', '/classes/Typed', { body: { size: 'large' } })).body.code, { timeout: 10_000, interval: 50 })
      .toBe(111);
    expect((await data(b.url, 'POST', '/classes/Typed', { body: { size: 3 } })).status).toBe(201);
  });

  it('a class-level permission set through one process binds the other once its announcement arrives', async () => {
    expect((await data(b.url, 'POST', '/classes/Guarded', { body: { v: 1 } })).status).toBe(201);
    expect((await data(b.url, 'GET', '/classes/Guarded')).status).toBe(200);
    const locked = await master(a.url, [{ method: 'PUT', url: '/schemas/Guarded', body: { classLevelPermissions: { find: {}, get: {}, count: {}, create: { '*': true }, update: {}, delete: {}, addField: {} } } }]);
    expect(locked.body.responses[0]).toMatchObject({ code: 200 });
    // B knows the class, so only the NOTIFY tells it: nothing else reloads its cache for a read.
    await expect.poll(async () => (await data(b.url, 'GET', '/classes/Guarded')).body.code, { timeout: 10_000, interval: 50 }).toBe(119);
  });

  it('a schema change whose announcement has not arrived yet is still kept: a clashing type is refused, the new field stays', async () => {
    expect((await data(b.url, 'POST', '/classes/Known', { body: { a: 1 } })).status).toBe(201);
    // Both processes stop hearing announcements (for RELISTEN_MS, a second) while A changes the class.
    const ended = await pgQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %'`, [database]);
    expect(ended.length).toBeGreaterThanOrEqual(2);
    const added = await master(a.url, [{ method: 'PUT', url: '/schemas/Known', body: { className: 'Known', fields: { size: { type: 'Number' } } } }]);
    expect(added.body.responses[0]).toMatchObject({ code: 200 });
    expect((await data(b.url, 'POST', '/classes/Known', { body: { size: 'large' } })).body).toMatchObject({ code: 111, error: 'schema mismatch for Known.size; expected Number but got String' });
    expect((await data(b.url, 'POST', '/classes/Known', { body: { color: 'red' } })).status).toBe(201);
    // A missed B's announcement too: it reloads once it listens again (within RELISTEN_MS).
    const fields = async () => (await master(a.url, [{ method: 'GET', url: '/schemas/Known' }])).body.responses[0].body.fields;
    await expect.poll(fields, { timeout: 10_000, interval: 100 }).toMatchObject({ a: { type: 'Number' }, size: { type: 'Number' }, color: { type: 'String' } });
  });

  it('cloud code deployed through one process runs in the other, which reloads its worker', async () => {
    const deploy = (version: string) =>
      manage(a.url, 'POST', `/backend-apps/${app.appId}/cloud-code`, {
        changes: [{ path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: `Parse.Cloud.define('version', () => '${version}');\n` }],
      });
    expect((await deploy('v1')).status).toBe(200);
    expect((await data(b.url, 'POST', '/functions/version', { body: {} })).body).toEqual({ result: 'v1' });
    expect((await deploy('v2')).status).toBe(200);
    await expect.poll(async () => (await data(b.url, 'POST', '/functions/version', { body: {} })).body.result, { timeout: 20_000, interval: 100 }).toBe('v2');
  });

  it('behind the proxy, killing one process loses no acknowledged write and the other keeps serving', async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await data(proxy.url, 'POST', '/classes/Ledger', { body: { i } });
      expect(created.status).toBe(201);
      acknowledged.push(created.body.objectId);
    }
    expect(new Set(proxy.answeredBy)).toEqual(new Set([a.url, b.url]));
    await a.stop('SIGKILL');
    for (let i = 10; i < 20; i++) {
      const created = await data(proxy.url, 'POST', '/classes/Ledger', { body: { i } });
      expect(created.status).toBe(201);
      acknowledged.push(created.body.objectId);
    }
    const all = await data(proxy.url, 'GET', '/classes/Ledger?limit=100');
    expect(all.body.results.map((r: { objectId: string }) => r.objectId).sort()).toEqual([...acknowledged].sort());
  });
});
