/**
 * The dashboard's security: nothing answers without a session; sessions are HttpOnly,
 * SameSite=Strict, expiring cookies stored hashed; every change needs the session's CSRF token and a
 * same-origin Origin, so cross-site form posts (from another site, or from a hosted site on
 * <sub>.localhost, which is same-site) are refused; another account's things answer 404; the
 * one-time sign-in link of `backyard dashboard` works once; what apps hold is escaped in pages.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homePaths } from '../src/config.js';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import type { SqliteSql } from '../src/shared/sqliteSql.js';

const exec = promisify(execFile);

let server: TestServer;
let appId: string;
let masterKey: string;
let objectId: string;
let environmentId: string;
let executionId: string;
let bobAppId: string;

interface Session {
  cookie: string;
  csrf: string;
}
let alice: Session;
let bob: Session;

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A request to the test server, never following redirects. */
async function call(
  method: string,
  urlPath: string,
  options: { cookie?: string; origin?: string | null; body?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin !== null && method !== 'GET') headers.origin = options.origin ?? server.url;
  if (options.body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(`${server.url}${urlPath}`, { method, headers, body: options.body ? form(options.body) : undefined, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), text: await response.text(), headers: response.headers };
}

/** Signs in with an account token over HTTP: the session cookie and the CSRF token of its pages. */
async function signIn(token: string): Promise<Session> {
  const res = await call('POST', '/dashboard/sign-in', { body: { token, next: '/dashboard' } });
  expect(res.status, res.text).toBe(303);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const page = await call('GET', '/dashboard', { cookie });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
  return { cookie, csrf };
}

/** The app's object, through the data API with the master key. */
async function objectNow(): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}/data/classes/Note/${objectId}`, { headers: { 'X-Parse-Application-Id': appId, 'X-Parse-Master-Key': masterKey } });
  return (await response.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  server = await startTestServer();
  const { accounts, backendApps, dataApi } = server.platform.services;
  const aliceId = (await accounts.findByLogin('alice'))!.id;
  const bobId = (await accounts.findByLogin('bob'))!.id;
  const created = await backendApps.create(aliceId, 'Secret <img src=x onerror=alert(1)> App');
  appId = created.appId;
  masterKey = (await backendApps.keys(appId))!.masterKey;
  const [note] = await dataApi.call(appId, [{ method: 'POST', url: '/classes/Note', body: { text: 'original', html: '<script>alert("x")</script>' } }]);
  objectId = (note!.body as { objectId: string }).objectId;
  bobAppId = (await backendApps.create(bobId, 'Bob App')).appId;

  // An environment with a finished command, written as the development environment service writes them
  // (this suite runs without Docker; test/dashboard-devenvs.test.ts runs real ones).
  environmentId = 'EnvSecurityTest000001';
  executionId = 'ExecSecurityTest00001';
  const now = new Date().toISOString();
  await server.platform.db.run('INSERT INTO development_environments (id, account_id, chat_title, created_at) VALUES (?, ?, ?, ?)', environmentId, aliceId, 'Alice chat', now);
  await server.platform.db.run(`INSERT INTO command_executions (id, environment_id, command, status, exit_code, stdout, stderr, owner, heartbeat_at, created_at, exited_at)
       VALUES (?, ?, 'echo alice-secret-output', 'exited', 0, 'alice-secret-output', '', 'gone/1/x', ?, ?, ?)`, executionId, environmentId, now, now, now);

  alice = await signIn(server.alice);
  bob = await signIn(server.bob);
});

afterAll(async () => {
  await server?.close();
});

/** Every page of alice's app and environment, and the live stream. */
const pages = () => [
  '/dashboard',
  '/dashboard/',
  `/dashboard/apps/${appId}`,
  `/dashboard/apps/${appId}/data`,
  `/dashboard/apps/${appId}/data/Note`,
  `/dashboard/apps/${appId}/data/Note?order=text&where=%7B%7D`,
  `/dashboard/apps/${appId}/data/Note/new`,
  `/dashboard/apps/${appId}/data/Note/${objectId}`,
  `/dashboard/apps/${appId}/schema`,
  `/dashboard/apps/${appId}/schema/Note`,
  `/dashboard/apps/${appId}/cloud`,
  `/dashboard/apps/${appId}/cloud?path=cloud/main.js&edit=1`,
  `/dashboard/apps/${appId}/console`,
  `/dashboard/apps/${appId}/jobs`,
  `/dashboard/environments/${environmentId}`,
  `/dashboard/environments/${environmentId}/executions/${executionId}`,
  `/dashboard/environments/${environmentId}/executions/${executionId}/events`,
  '/dashboard/no-such-page',
];

/** Every change the dashboard makes, with a form that would pass with a session. */
const changes = (csrf: string): Array<[string, Record<string, string>]> => [
  [`/dashboard/apps/${appId}/keys`, { _csrf: csrf }],
  [`/dashboard/apps/${appId}/hosting`, { _csrf: csrf }],
  [`/dashboard/apps/${appId}/data`, { _csrf: csrf, className: 'Injected' }],
  [`/dashboard/apps/${appId}/data/Note/columns`, { _csrf: csrf, name: 'injected', type: 'String' }],
  [`/dashboard/apps/${appId}/data/Note/new`, { _csrf: csrf, 'f.text': 'injected' }],
  [`/dashboard/apps/${appId}/data/Note/${objectId}`, { _csrf: csrf, 'f.text': 'changed by someone else' }],
  [`/dashboard/apps/${appId}/data/Note/${objectId}/delete`, { _csrf: csrf }],
  [`/dashboard/apps/${appId}/schema/Note/permissions`, { _csrf: csrf, mode: 'json', json: '{}' }],
  [`/dashboard/apps/${appId}/schema/Note/columns/text/delete`, { _csrf: csrf }],
  [`/dashboard/apps/${appId}/schema/Note/delete`, { _csrf: csrf }],
  [`/dashboard/apps/${appId}/cloud`, { _csrf: csrf, action: 'write', path: 'cloud/main.js', content: 'throw new Error("pwned")' }],
  [`/dashboard/apps/${appId}/cloud/rollback`, { _csrf: csrf, version: '1' }],
  [`/dashboard/apps/${appId}/console`, { _csrf: csrf, method: 'GET', path: '/classes/Note', body: '' }],
  [`/dashboard/apps/${appId}/jobs`, { _csrf: csrf, job: 'x', params: '{}' }],
];

/** Nothing of alice's may be in an answer given to someone else. */
function expectNothingOfAlice(text: string, where: string): void {
  for (const secret of [masterKey, 'original', 'alice-secret-output', 'Alice chat', 'Secret &lt;img']) expect(text, where).not.toContain(secret);
}

/** Checks that none of `changes` took effect. */
async function expectUnchanged(): Promise<void> {
  const note = await objectNow();
  expect(note.text).toBe('original');
  const schema = await server.platform.services.dataApi.call(appId, [{ method: 'GET', url: '/schemas', body: {} }]);
  const classes = (schema[0]!.body as { results: Array<{ className: string; fields: Record<string, unknown> }> }).results;
  expect(classes.map((c) => c.className)).not.toContain('Injected');
  expect(Object.keys(classes.find((c) => c.className === 'Note')!.fields)).not.toContain('injected');
  expect((await server.platform.services.backendApps.get((await server.platform.services.accounts.findByLogin('alice'))!.id, appId))!.publicWebHostingURL).toBe('');
  expect(await server.platform.services.cloudCode.read((await server.platform.services.accounts.findByLogin('alice'))!.id, appId, 'cloud/main.js')).not.toContain('pwned');
  const versions = await server.platform.services.cloudCode.versions((await server.platform.services.accounts.findByLogin('alice'))!.id, appId);
  expect(versions.map((v) => v.changes)).not.toContain('rollback to version 1');
}

describe('without a session', () => {
  it('no page answers: pages send the browser to sign in, streams answer 401, and nothing of the account shows', async () => {
    for (const url of pages()) {
      for (const cookie of [undefined, 'backyard_session=not-a-session', 'backyard_session=']) {
        const accept = url.endsWith('/events') ? 'text/event-stream' : 'text/html';
        const res = await call('GET', url, { cookie, headers: { accept } });
        if (url.endsWith('/events')) expect(res.status, url).toBe(401);
        else {
          expect(res.status, url).toBe(303);
          expect(res.location, url).toBe(`/dashboard/sign-in?next=${encodeURIComponent(url)}`);
        }
        expectNothingOfAlice(res.text, url);
        expect(res.text, url).not.toContain(appId);
      }
    }
  });

  it('no change is made, whatever the form carries', async () => {
    for (const [url, body] of changes(alice.csrf)) {
      for (const cookie of [undefined, 'backyard_session=forged']) {
        const res = await call('POST', url, { cookie, body });
        expect(res.status, url).toBe(401);
        expectNothingOfAlice(res.text, url);
      }
    }
    await expectUnchanged();
  });

  it('the sign-in page and the two static assets are all that answer', async () => {
    const signInPage = await call('GET', '/dashboard/sign-in');
    expect(signInPage.status).toBe(200);
    expect(signInPage.text).toContain('Account token');
    expectNothingOfAlice(signInPage.text, 'sign-in');
    const css = await call('GET', '/dashboard/assets/dashboard.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await call('GET', '/dashboard/assets/other.js')).status).toBe(404);
  });
});

describe('sessions', () => {
  it('are HttpOnly, SameSite=Strict, expiring cookies limited to /dashboard, stored only as hashes', async () => {
    const res = await call('POST', '/dashboard/sign-in', { body: { token: server.alice } });
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^backyard_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/dashboard');
    expect(setCookie).toMatch(/Max-Age=\d+/);
    expect(setCookie).not.toMatch(/Domain=/i);
    const token = setCookie.split(';')[0]!.split('=')[1]!;
    (server.platform.db as SqliteSql).db.pragma('wal_checkpoint(TRUNCATE)');
    const raw = Buffer.concat([homePaths(server.home).platformDb, `${homePaths(server.home).platformDb}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
    expect(raw.includes(Buffer.from(token))).toBe(false);
    const stored = (await server.platform.db.get('SELECT COUNT(*) AS n FROM dashboard_sessions')) as { n: number };
    expect(stored.n).toBeGreaterThanOrEqual(3);
  });

  it('refuse an unknown token with the same words whatever is wrong', async () => {
    for (const token of ['', 'by_unknown', server.alice.slice(0, -2)]) {
      const res = await call('POST', '/dashboard/sign-in', { body: { token } });
      expect(res.status).toBe(401);
      expect(res.text).toContain('That token is not valid');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('end at sign-out and at expiry', async () => {
    const session = await signIn(server.alice);
    expect((await call('GET', '/dashboard', { cookie: session.cookie })).status).toBe(200);
    const out = await call('POST', '/dashboard/sign-out', { cookie: session.cookie, body: { _csrf: session.csrf } });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await call('GET', '/dashboard', { cookie: session.cookie })).status).toBe(303);

    const expiring = await signIn(server.alice);
    expect((await call('GET', '/dashboard', { cookie: expiring.cookie })).status).toBe(200);
    await server.platform.db.run("UPDATE dashboard_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE expires_at > ?", new Date(Date.now() + 3 * 24 * 3600 * 1000).toISOString());
    expect((await call('GET', '/dashboard', { cookie: expiring.cookie })).status).toBe(303);
    // The suite's own sessions expired too: start them again.
    alice = await signIn(server.alice);
    bob = await signIn(server.bob);
  });

  it('go only to dashboard pages after sign-in (no open redirect)', async () => {
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example', '/v1/backend-apps', '/dashboard/sign-out']) {
      const res = await call('POST', '/dashboard/sign-in', { body: { token: server.alice, next } });
      expect(res.status, next).toBe(303);
      expect(res.location, next).toBe('/dashboard');
    }
    const res = await call('POST', '/dashboard/sign-in', { body: { token: server.alice, next: `/dashboard/apps/${appId}` } });
    expect(res.location).toBe(`/dashboard/apps/${appId}`);
  });
});

describe('cross-site requests', () => {
  it('a change with the right token but a foreign, hosted-site, null or missing Origin is refused', async () => {
    const port = new URL(server.url).port;
    const [url, body] = changes(alice.csrf).find(([u]) => u.endsWith(objectId))!;
    for (const origin of ['http://evil.example', `http://evil.example:${port}`, `http://secret-app.localhost:${port}`, `https://localhost:${port}`, 'null', null]) {
      const res = await call('POST', url, { cookie: alice.cookie, origin, body });
      expect(res.status, String(origin)).toBe(403);
      expect(res.text).toContain('Request refused');
    }
    // A Referer from the dashboard stands in for a missing Origin; a foreign one does not.
    expect((await call('POST', url, { cookie: alice.cookie, origin: null, body, headers: { referer: 'http://evil.example/page' } })).status).toBe(403);
    await expectUnchanged();
  });

  it('every change without the session\'s CSRF token is refused, even from the dashboard\'s origin', async () => {
    for (const [url, body] of changes(alice.csrf)) {
      const { _csrf: _, ...without } = body;
      expect((await call('POST', url, { cookie: alice.cookie, body: without })).status, url).toBe(403);
      expect((await call('POST', url, { cookie: alice.cookie, body: { ...body, _csrf: bob.csrf } })).status, url).toBe(403);
      expect((await call('POST', url, { cookie: alice.cookie, body: { ...body, _csrf: `${alice.csrf}x` } })).status, url).toBe(403);
    }
    await expectUnchanged();
    // The same change with the token is accepted: the refusals above were about the token.
    const ok = await call('POST', `/dashboard/apps/${appId}/data/Note/${objectId}`, { cookie: alice.cookie, body: { _csrf: alice.csrf, 'f.text': 'original', 'f.html': '<script>alert("x")</script>' } });
    expect(ok.status).toBe(303);
  });

  it('a sign-in posted from another site is refused (no login CSRF)', async () => {
    const res = await call('POST', '/dashboard/sign-in', { origin: 'http://evil.example', body: { token: server.bob } });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('in a browser, a form posted by another site or by a hosted site on <sub>.localhost is refused', async () => {
    const { accounts, backendApps, cloudCode } = server.platform.services;
    // An attacker's page: a form that auto-submits a change of alice's object to the dashboard.
    const attack = (target: string) => `<!doctype html><html lang="en"><title>attack</title><body>
<form id="f" method="post" action="${target}"><input name="f.text" value="pwned"><input name="_csrf" value="${alice.csrf}"></form>
<script>document.getElementById('f').submit();</script></body></html>`;
    const target = `${server.url}/dashboard/apps/${appId}/data/Note/${objectId}`;
    const evil = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attack(target)));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    // A hosted site on the same Backyard: same-site with the dashboard, so the cookie goes along.
    const hosted = (await backendApps.activateHosting((await accounts.findByLogin('bob'))!.id, bobAppId))!;
    await cloudCode.deploy((await accounts.findByLogin('bob'))!.id, bobAppId, [{ path: 'public/index.html', operation: 'write', writeMode: 'overwrite', data: attack(target) }]);

    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${server.url}/dashboard/sign-in`);
      await page.getByLabel('Account token').fill(server.alice);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.url}/dashboard`);

      const fromEvil = page.waitForResponse((r) => r.url() === target);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const evilAnswer = await fromEvil;
      // SameSite=Strict keeps the cookie home; the Origin check refuses it anyway.
      expect([401, 403]).toContain(evilAnswer.status());

      const fromHosted = page.waitForResponse((r) => r.url() === target);
      await page.goto(hosted);
      const hostedAnswer = await fromHosted;
      // Chromium counts <sub>.localhost as another site, so the cookie stays home; when a browser
      // sends it (same-site), the Origin check refuses the post (the previous test).
      expect([401, 403]).toContain(hostedAnswer.status());
      await page.waitForLoadState();
      expect(['Request refused', 'Sign in first']).toContain(await page.textContent('h1'));
      fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS_DIR, 'dashboard-refused.png') });
    } finally {
      await browser.close();
      evil.close();
    }
    expect((await objectNow()).text).toBe('original');
  });
});

describe('another account', () => {
  it('sees 404 for every page of alice\'s app and environment, and nothing of them', async () => {
    for (const url of pages().filter((u) => u.includes(appId) || u.includes(environmentId))) {
      const res = await call('GET', url, { cookie: bob.cookie, headers: { accept: url.endsWith('/events') ? 'text/event-stream' : 'text/html' } });
      expect(res.status, url).toBe(404);
      expectNothingOfAlice(res.text, url);
    }
    const overview = await call('GET', '/dashboard', { cookie: bob.cookie });
    expect(overview.text).toContain('Bob App');
    expect(overview.text).not.toContain(appId);
    expectNothingOfAlice(overview.text, 'overview');
  });

  it('changes nothing of alice\'s: every change answers 404', async () => {
    for (const [url, body] of changes(bob.csrf)) {
      const res = await call('POST', url, { cookie: bob.cookie, body });
      expect(res.status, url).toBe(404);
      expectNothingOfAlice(res.text, url);
    }
    await expectUnchanged();
  });

  it('answers 404 for an unknown app exactly as for alice\'s', async () => {
    const unknown = await call('GET', '/dashboard/apps/no-such-app', { cookie: bob.cookie });
    const foreign = await call('GET', `/dashboard/apps/${appId}`, { cookie: bob.cookie });
    expect(unknown.status).toBe(404);
    expect(foreign.text.replace(appId, '')).toBe(unknown.text.replace('no-such-app', ''));
  });
});

describe('pages', () => {
  it('escape what apps hold, keep the master key out of every GET, and send a strict content policy', async () => {
    for (const url of pages().filter((u) => !u.endsWith('/events'))) {
      const res = await call('GET', url, { cookie: alice.cookie });
      expect([200, 303, 404], url).toContain(res.status);
      expect(res.text, url).not.toContain(masterKey);
      expect(res.text, url).not.toContain('<img src=x');
      expect(res.text, url).not.toContain('<script>alert');
      expect(res.headers.get('content-security-policy'), url).toContain("script-src 'self'");
      expect(res.headers.get('x-frame-options'), url).toBe('DENY');
      expect(res.headers.get('cache-control'), url).toBe('no-store');
    }
    const app = await call('GET', `/dashboard/apps/${appId}`, { cookie: alice.cookie });
    expect(app.text).toContain('Secret &lt;img src=x onerror=alert(1)&gt; App');
    const object = await call('GET', `/dashboard/apps/${appId}/data/Note/${objectId}`, { cookie: alice.cookie });
    expect(object.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    // The master key only in the answer to the post that asks for it.
    const shown = await call('POST', `/dashboard/apps/${appId}/keys`, { cookie: alice.cookie, body: { _csrf: alice.csrf } });
    expect(shown.status).toBe(200);
    expect(shown.text).toContain(masterKey);
    expect(shown.headers.get('cache-control')).toBe('no-store');
  });

  it('show an environment\'s executions and their output to their owner', async () => {
    const env = await call('GET', `/dashboard/environments/${environmentId}`, { cookie: alice.cookie });
    expect(env.status).toBe(200);
    expect(env.text).toContain('echo alice-secret-output');
    const execution = await call('GET', `/dashboard/environments/${environmentId}/executions/${executionId}`, { cookie: alice.cookie });
    expect(execution.text).toContain('alice-secret-output');
    const events = await call('GET', `/dashboard/environments/${environmentId}/executions/${executionId}/events`, { cookie: alice.cookie });
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(events.text).toContain('event: snapshot\ndata: {"stdout":"alice-secret-output","stderr":""}');
    expect(events.text).toContain('event: exit\ndata: {"status":"exited","exitCode":0}');
  });
});

describe('backyard dashboard', () => {
  it('prints a one-time sign-in link for the local account that works once', async () => {
    const { stdout, stderr } = await exec(process.execPath, [CLI, 'dashboard'], { env: stdioEnv(server.home, { BACKYARD_ACCOUNT: 'local' }) });
    const link = stdout.trim();
    expect(link).toMatch(new RegExp(`^${server.url}/dashboard/sign-in/link\\?code=[A-Za-z0-9_-]{43}$`));
    expect(stderr).toContain('works once');
    const code = new URL(link).searchParams.get('code')!;

    const landing = await call('GET', new URL(link).pathname + new URL(link).search);
    expect(landing.status).toBe(200);
    expect(landing.text).toContain('Continue as local');
    expect(landing.headers.get('set-cookie')).toBeNull();
    // Following the link alone uses nothing up.
    expect((await call('GET', new URL(link).pathname + new URL(link).search)).status).toBe(200);

    expect((await call('POST', '/dashboard/sign-in/link', { origin: 'http://evil.example', body: { code } })).status).toBe(403);
    const used = await call('POST', '/dashboard/sign-in/link', { body: { code } });
    expect(used.status).toBe(303);
    const cookie = used.headers.get('set-cookie')!.split(';')[0]!;
    const overview = await call('GET', '/dashboard', { cookie });
    expect(overview.text).toContain('Signed in as <strong>local</strong>');

    const again = await call('POST', '/dashboard/sign-in/link', { body: { code } });
    expect(again.status).toBe(400);
    expect(again.text).toContain('used already or it expired');
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  it('refuses an expired link', async () => {
    const { stdout, stderr } = await exec(process.execPath, [CLI, 'dashboard'], { env: stdioEnv(server.home) });
    const code = /\?code=([A-Za-z0-9_-]{43})$/m.exec(stdout)?.[1];
    expect(code, `stdout: ${stdout}\nstderr: ${stderr}`).toBeDefined();
    expect((await call('GET', `/dashboard/sign-in/link?code=${code}`)).status).toBe(200);
    await server.platform.db.run("UPDATE dashboard_sign_in_links SET expires_at = '2000-01-01T00:00:00.000Z'");
    const expired = await call('GET', `/dashboard/sign-in/link?code=${code}`);
    expect(expired.status, expired.text).toBe(400);
    expect(expired.text).toContain('used already or it expired');
    expect((await call('POST', '/dashboard/sign-in/link', { body: { code: code! } })).status).toBe(400);
  });
});
