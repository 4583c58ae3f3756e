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
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
let bobAppId: string;
let aliceCookie: string;
let bobCookie: string;
let browser: Browser | undefined;

const parsePath = (appId: string) => `/dashboard/parse/${appId}`;

async function get(urlPath: string, cookie?: string, accept = '*/*') {
  const response = await fetch(`${server.url}${urlPath}`, { headers: { accept, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

beforeAll(async () => {
  server = await startTestServer();
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

/** Every answer the dashboard's page got: method, URL, status. */
interface Seen {
  method: string;
  url: string;
  status: number;
}

function record(page: Page): Seen[] {
  const seen: Seen[] = [];
  page.on('response', (response) => seen.push({ method: response.request().method(), url: response.url(), status: response.status() }));
  return seen;
}

async function shoot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `parse-dashboard-${name}.png`), fullPage: false });
}

describe('Parse Dashboard in Chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let seen: Seen[];

  beforeAll(async () => {
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    seen = record(page);
    page.on('console', (m) => console.log('console', m.type(), m.text()));
  }, 90_000);

  it("opens from the app's page and lists the seeded class with its rows", async () => {
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await page.goto(`${server.url}/dashboard/apps/${app.appId}`);
    await page.getByRole('link', { name: 'Open in Parse Dashboard' }).click();
    await page.waitForURL((url) => url.pathname.startsWith(`${parsePath(app.appId)}/apps/garden-log/browser`), { timeout: 30_000 });
    await page.getByRole('link', { name: /^Plant/ }).click();
    await page.waitForTimeout(3000);
    await page.getByText('Tomato', { exact: true }).dblclick();
    await page.waitForTimeout(1000);
    await shoot(page, 'editing');
    console.log(await page.evaluate(() => document.activeElement?.outerHTML));
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Cherry Tomato');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(2000);
    console.log(JSON.stringify((await app.call('GET', '/classes/Plant?where=' + encodeURIComponent('{"height":10}'))).body));
    for (const sec of ['config', 'jobs']) {
      await page.goto(`${server.url}${parsePath(app.appId)}/apps/garden-log/${sec}`);
      await page.waitForTimeout(3000);
      await shoot(page, sec);
      console.log(sec, await page.locator('body').innerText());
    }
    console.log(seen.filter((x) => x.status >= 400 || x.method !== 'GET'));
  }, 90_000);
});
