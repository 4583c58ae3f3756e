/**
 * The real Parse Dashboard (the parse-dashboard package) of a Backend App at
 * /dashboard/apps/<appId>/parse/: only its owner, signed in to Backyard's dashboard, gets its pages
 * and its configuration (which holds the master key); a signed-out browser and another account's
 * owner get neither. In Chromium: sign in, follow the app page's link, see the data browser list a
 * seeded class, edit a cell and read the edit back through REST, open the Config and Jobs pages,
 * with every request of the dashboard recorded (none fails unless Parse Server fails it too, and
 * none carries the master key in its URL).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';
import { recordRequests, type SeenRequest } from './helpers/pageRequests.js';
import { ParseDashboards, type ParseDashboardApp } from '../src/server/parseDashboard.js';

let server: TestServer;
let app: TestApp;
let bobAppId: string;
let aliceCookie: string;
let bobCookie: string;
let browser: Browser | undefined;
/** Every line the server logged, at debug level and above. */
let logged = '';

const parsePath = (appId: string) => `/dashboard/parse/${appId}`;

async function get(urlPath: string, cookie?: string, accept = '*/*') {
  const response = await fetch(`${server.url}${urlPath}`, { headers: { accept, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString('utf8');
      done();
    },
  });
  server = await startTestServer({}, pino({ level: 'debug' }, sink));
  app = await createTestApp(server, 'Garden Log');
  const { accounts, backendApps } = server.platform.services;
  bobAppId = (await backendApps.create((await accounts.findByLogin('bob'))!.id, 'Bob App')).appId;
  aliceCookie = await dashboardCookie(server);
  bobCookie = await dashboardCookie({ url: server.url, alice: server.bob });

  // A user, and a class with a string, a number, a boolean, a date, an array, an object and a pointer to the user.
  const user = await app.call('POST', '/users', { body: { username: 'ada', password: 'correct horse' } });
  expect(user.status).toBe(201);
  for (const [i, name] of ['Tomato', 'Basil', 'Fennel'].entries()) {
    const made = await app.call('POST', '/classes/Plant', {
      body: {
        name,
        height: 10 + i,
        edible: i !== 2,
        planted: { __type: 'Date', iso: `2026-0${i + 3}-01T08:00:00.000Z` },
        tags: ['garden', `bed-${i}`],
        care: { water: 'daily' },
        gardener: { __type: 'Pointer', className: '_User', objectId: user.body.objectId },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('who may open the Parse Dashboard', () => {
  it("serves the owner the page and the configuration with the app's keys and addresses", async () => {
    const page = await get(`${parsePath(app.appId)}/`, aliceCookie, 'text/html');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<base href="${parsePath(app.appId)}/"/>`);
    expect(page.text).toContain('bundles/dashboard.bundle.js');
    expect(page.text).not.toContain(app.keys.masterKey);
    // The inline script that sets the mount path is allowed by its hash, and no other.
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');

    const config = await get(`${parsePath(app.appId)}/parse-dashboard-config.json`, aliceCookie, 'application/json');
    expect(config.status).toBe(200);
    expect(config.headers.get('cache-control')).toBe('no-store');
    const apps = (JSON.parse(config.text) as { apps: Array<Record<string, string>> }).apps;
    expect(apps).toEqual([
      {
        appId: app.appId,
        appName: 'Garden Log',
        appNameForURL: 'garden-log',
        masterKey: app.keys.masterKey,
        javascriptKey: app.keys.javascriptKey,
        restKey: app.keys.restKey,
        clientKey: app.keys.clientKey,
        serverURL: `${server.url}/data`,
        graphQLServerURL: `${server.url}/graphql`,
        enableSecurityChecks: true,
      },
    ]);

    // Without the trailing slash, or under the app's own pages: sent to the mount path.
    for (const [from, to] of [
      [parsePath(app.appId), '/'],
      [`/dashboard/apps/${app.appId}/parse`, '/'],
      [`/dashboard/apps/${app.appId}/parse/apps/garden-log/browser/Plant?x=1`, '/apps/garden-log/browser/Plant?x=1'],
    ] as const) {
      const moved = await get(from, aliceCookie, 'text/html');
      expect(moved.status, from).toBe(303);
      expect(moved.headers.get('location'), from).toBe(`${parsePath(app.appId)}${to}`);
    }
  });

  it('gives a signed-out browser neither a page nor the key', async () => {
    for (const p of ['/', '/parse-dashboard-config.json', '/apps/garden-log/browser/Plant', '/bundles/dashboard.bundle.js']) {
      const answer = await get(`${parsePath(app.appId)}${p}`);
      expect(answer.status, p).toBe(303);
      expect(answer.headers.get('location'), p).toMatch(/^\/dashboard\/sign-in\?next=/);
      expect(answer.text).not.toContain(app.keys.masterKey);
    }
    const forged = await get(`${parsePath(app.appId)}/parse-dashboard-config.json`, 'backyard_session=not-a-session', 'application/json');
    expect(forged.status).toBe(303);
    expect(forged.text).not.toContain(app.keys.masterKey);
  });

  it("gives another account's owner the 404 of an unknown app, and no key", async () => {
    for (const p of ['/', '/parse-dashboard-config.json', '/bundles/dashboard.bundle.js']) {
      const answer = await get(`${parsePath(app.appId)}${p}`, bobCookie);
      expect(answer.status, p).toBe(404);
      expect(answer.text).not.toContain(app.keys.masterKey);
      expect(answer.text).toContain('does not exist, or it is not yours');
    }
    // Bob's own app opens for him, with his app alone.
    const own = await get(`${parsePath(bobAppId)}/parse-dashboard-config.json`, bobCookie, 'application/json');
    expect(own.status).toBe(200);
    expect((JSON.parse(own.text) as { apps: Array<{ appId: string }> }).apps.map((a) => a.appId)).toEqual([bobAppId]);
    expect(own.text).not.toContain(app.keys.masterKey);
    expect((await get(`${parsePath('nosuchapp00')}/`, aliceCookie)).status).toBe(404);
  });

  it("lets nothing but GET reach Parse Dashboard's own endpoints (its sign-in and agent)", async () => {
    for (const p of ['/login', '/apps/garden-log/agent', '/parse-dashboard-config.json']) {
      for (const headers of [{ cookie: aliceCookie }, { cookie: aliceCookie, origin: server.url }]) {
        const response = await fetch(`${server.url}${parsePath(app.appId)}${p}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ message: 'hi', modelName: 'x', username: 'a', password: 'b' }),
          redirect: 'manual',
        });
        const text = await response.text();
        expect([403, 404], `${p} ${response.status} ${text}`).toContain(response.status);
        expect(text).not.toContain(app.keys.masterKey);
      }
    }
  });

  it('serves an app whose id and name hold "apps" at an address Parse Dashboard reads right', async () => {
    // Parse Dashboard's client takes its page from what follows the first "apps" in the address (parse.ts, mountSegment).
    const owner = (await server.platform.services.accounts.findByLogin('alice'))!.id;
    const made = await server.platform.services.backendApps.create(owner, 'My Apps', { applicationId: 'myappsX1' });
    const appPage = await get(`/dashboard/apps/${made.appId}`, aliceCookie, 'text/html');
    expect(appPage.text).toContain('href="/dashboard/parse/my%61ppsX1/apps/my-app-s/browser"');
    const typed = await get('/dashboard/parse/myappsX1/apps/my-app-s/config?x=1', aliceCookie, 'text/html');
    expect(typed.status).toBe(303);
    expect(typed.headers.get('location')).toBe('/dashboard/parse/my%61ppsX1/apps/my-app-s/config?x=1');
    const config = await get('/dashboard/parse/my%61ppsX1/parse-dashboard-config.json', aliceCookie, 'application/json');
    expect(config.status).toBe(200);
    expect(JSON.parse(config.text).apps[0]).toMatchObject({ appId: 'myappsX1', appName: 'My Apps', appNameForURL: 'my-app-s' });
    expect((await get('/dashboard/parse/my%61ppsX1/parse-dashboard-config.json', bobCookie)).status).toBe(404);
  });

  it("drops the app's dashboard with the app: its page and configuration are gone", async () => {
    const doomed = await createTestApp(server, 'Doomed');
    expect((await get(`${parsePath(doomed.appId)}/parse-dashboard-config.json`, aliceCookie)).status).toBe(200);
    const owner = (await server.platform.services.accounts.findByLogin('alice'))!.id;
    await server.platform.services.backendApps.delete(owner, doomed.appId);
    const after = await get(`${parsePath(doomed.appId)}/parse-dashboard-config.json`, aliceCookie);
    expect(after.status).toBe(404);
    expect(after.text).not.toContain(doomed.keys.masterKey);
  });
});

describe('ParseDashboards: one express app per Backend App', () => {
  it('builds on first use, keeps it while its configuration holds, rebuilds on a change, and drops it on delete or past its limit', async () => {
    const dashboards = new ParseDashboards(2);
    const configs = new Map<string, ParseDashboardApp>();
    const make = (appId: string, appName: string): ParseDashboardApp => ({
      appId, appName, appNameForURL: appId, masterKey: `mk-${appId}`, javascriptKey: 'js', restKey: 'rest', clientKey: 'client',
      serverURL: 'http://localhost:1/data', graphQLServerURL: 'http://localhost:1/graphql', enableSecurityChecks: true,
    });
    const local = http.createServer((req, res) => {
      const appId = req.url!.split('/')[2]!;
      dashboards.serve(configs.get(appId)!, `/p/${appId}`, req, res, () => {
        res.statusCode = 404;
        res.end();
      });
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(local.address() as { port: number }).port}`;
    const appsOf = async (appId: string) => ((await (await fetch(`${base}/p/${appId}/parse-dashboard-config.json`)).json()) as { apps: ParseDashboardApp[] }).apps;
    try {
      configs.set('a1', make('a1', 'First'));
      expect(dashboards.size).toBe(0);
      expect(await appsOf('a1')).toEqual([configs.get('a1')]);
      expect(dashboards.size).toBe(1);
      // A renamed app gets a dashboard with the new name.
      configs.set('a1', make('a1', 'Renamed'));
      expect((await appsOf('a1'))[0]!.appName).toBe('Renamed');
      expect(dashboards.size).toBe(1);
      // Past the limit, the least recently used goes (a1, used before a2).
      configs.set('a2', make('a2', 'Second'));
      configs.set('a3', make('a3', 'Third'));
      await appsOf('a2');
      await appsOf('a3');
      expect([dashboards.size, dashboards.has('a1'), dashboards.has('a2'), dashboards.has('a3')]).toEqual([2, false, true, true]);
      dashboards.drop('a3');
      expect([dashboards.size, dashboards.has('a3')]).toEqual([1, false]);
      // Each answers with its own app alone.
      expect((await appsOf('a2')).map((a) => a.masterKey)).toEqual(['mk-a2']);
      // Its mount path is its own: another path is not its business.
      expect((await fetch(`${base}/q/a2/parse-dashboard-config.json`)).status).toBe(404);
    } finally {
      local.close();
    }
  });
});

/** Every request the page sent, with its answer's status (undefined when it got none). */
type Seen = SeenRequest;

/** Polls `check` until it returns true, failing after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `parse-dashboard-${name}.png`), fullPage: false });
}

describe('Parse Dashboard in Chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let seen: Seen[];
  const inDashboard = (section: string) => `${server.url}${parsePath(app.appId)}/apps/garden-log/${section}`;
  // The dashboard's own fetches of its root, which it gives up on itself (aborted, or left open).
  const rootFetch = (s: Seen) => s.type === 'fetch' && s.url === `${server.url}${parsePath(app.appId)}/`;
  /**
   * Waits until every request so far has its answer or its failure, before the test leaves a page:
   * a navigation aborts what is still on its way (net::ERR_ABORTED), which would say nothing about
   * Backyard and hide what its answer would have been.
   */
  const settled = (what: string) => until(async () => seen.every((s) => s.status !== undefined || s.failure !== undefined || rootFetch(s)), what);

  beforeAll(async () => {
    // A config parameter for the Config page to list.
    expect((await app.call('PUT', '/config', { master: true, body: { params: { greeting: 'hello from REST' } } })).status).toBe(200);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    seen = recordRequests(page);
  }, 90_000);

  it("opens from the app's page and lists the seeded class with its rows", async () => {
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await settled("the dashboard's requests before the app's page");
    await page.goto(`${server.url}/dashboard/apps/${app.appId}`);
    await page.getByRole('link', { name: 'Open in Parse Dashboard' }).click();
    await page.waitForURL(inDashboard('browser'));
    await page.getByRole('link', { name: /^Plant/ }).click();
    await page.waitForURL(inDashboard('browser/Plant'));
    for (const name of ['Tomato', 'Basil', 'Fennel']) await page.getByText(name, { exact: true }).waitFor();
    await page.getByText('3 objects', { exact: true }).waitFor();
    // The pointer column shows the user's objectId; the array and object columns their JSON.
    const userId = ((await app.call('GET', '/users', { master: true })).body as { results: Array<{ objectId: string }> }).results[0]!.objectId;
    expect(await page.getByText(userId, { exact: true }).count()).toBe(3);
    await page.getByText('["garden","bed-1"]', { exact: true }).waitFor();
    await page.getByText('Pointer <_User>', { exact: true }).waitFor();
    await shoot(page, 'browser');
  }, 90_000);

  it('edits a cell, and REST reads the edit', async () => {
    await page.getByText('Tomato', { exact: true }).dblclick();
    const editor = page.locator('textarea:focus');
    await editor.waitFor();
    await editor.fill('Cherry Tomato');
    await page.keyboard.press('Enter');
    await page.getByText('Cherry Tomato', { exact: true }).waitFor();
    await until(async () => {
      const found = await app.call('GET', `/classes/Plant?where=${encodeURIComponent('{"height":10}')}`);
      return (found.body as { results: Array<{ name: string }> }).results[0]?.name === 'Cherry Tomato';
    }, 'the edit to reach the data API');
    // The other fields of the object are as they were.
    const plant = ((await app.call('GET', `/classes/Plant?where=${encodeURIComponent('{"height":10}')}`)).body as { results: Array<Record<string, unknown>> }).results[0]!;
    expect(plant).toMatchObject({ edible: true, tags: ['garden', 'bed-0'], care: { water: 'daily' }, planted: { __type: 'Date', iso: '2026-03-01T08:00:00.000Z' } });
  }, 60_000);

  it('shows the Config page with the parameter set through REST, and the Jobs page', async () => {
    await settled("the data browser's requests before the Config page");
    await page.getByRole('link', { name: 'Config', exact: true }).click();
    await page.waitForURL(inDashboard('config'));
    await page.getByText('greeting', { exact: true }).waitFor();
    await page.getByText('hello from REST').first().waitFor();
    await shoot(page, 'config');
    await settled("the Config page's requests before the Jobs page");
    await page.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.waitForURL((url) => url.pathname.startsWith(`${parsePath(app.appId)}/apps/garden-log/jobs`));
    await page.getByText('Cloud Jobs').waitFor();
    await page.getByText('Define Jobs on parse-server with Parse.Cloud.job()').waitFor();
    expect(await page.getByText('Feature unavailable').count()).toBe(0);
    await shoot(page, 'jobs');
    // Loaded afresh at its own address, the Config page still finds itself (see parse.ts, mountSegment).
    await settled("the Jobs page's requests before the Config page is loaded afresh");
    await page.goto(inDashboard('config'));
    await page.getByText('greeting', { exact: true }).waitFor();
  }, 60_000);

  it('sent only requests that succeeded, to this Backyard alone, with the master key never in an address', async () => {
    const ofDashboard = seen.filter((s) => new URL(s.url).pathname.startsWith(parsePath(app.appId)) || new URL(s.url).pathname.startsWith('/data/'));
    expect(ofDashboard.length).toBeGreaterThan(10);
    // Parse Server answers each of these with success too: a failure here is Backyard's.
    const describe = (s: Seen) => `${s.method} ${s.url} ${s.type} ${s.status ?? s.failure}`;
    expect(seen.filter((s) => s.status !== undefined && s.status >= 400).map(describe)).toEqual([]);
    // Unanswered: Google's fonts (the content policy keeps them in the browser), and the dashboard's
    // own fetches of its root that it gives up on itself (aborted, or still open when the test moved on).
    // Anything else still on its way when the last page was shown gets its answer first.
    await settled('the last requests to settle');
    const unanswered = seen.filter((s) => s.status === undefined);
    const blocked = unanswered.filter((s) => s.failure === 'csp');
    expect(blocked.map((s) => new URL(s.url).origin)).toEqual(blocked.map(() => 'https://fonts.googleapis.com'));
    expect(unanswered.filter((s) => s.failure !== 'csp' && !rootFetch(s)).map(describe)).toEqual([]);
    for (const s of seen.filter((s) => s.failure !== 'csp')) expect(s.url.startsWith(`${server.url}/`), s.url).toBe(true);
    expect(seen.filter((s) => s.url.includes(app.keys.masterKey))).toEqual([]);
    // It does travel: in the data API requests' headers or bodies, and nowhere else.
    const carrying = seen.filter((s) => JSON.stringify(s.headers).includes(app.keys.masterKey) || (s.body ?? '').includes(app.keys.masterKey));
    expect(carrying.length).toBeGreaterThan(0);
    for (const s of carrying) expect(new URL(s.url).pathname.startsWith('/data/'), s.url).toBe(true);
    // The data API calls went where the configuration says: the app's serverURL.
    expect(seen.some((s) => s.method === 'POST' && s.url === `${server.url}/data/classes/Plant`)).toBe(true);
    // The server logged its requests, Parse Dashboard's among them, and the master key nowhere.
    expect(logged).toContain(`"url":"${parsePath(app.appId)}/parse-dashboard-config.json"`);
    expect(logged).toContain('"url":"/data/classes/Plant"');
    expect(logged).not.toContain(app.keys.masterKey);
  });
});
