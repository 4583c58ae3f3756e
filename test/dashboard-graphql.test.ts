/**
 * The dashboard's GraphQL page of a Backend App (src/server/dashboard/graphql.ts): GraphiQL on the
 * app's GraphQL API for its signed-in owner, each document run on the server with the master key,
 * which never reaches the browser. Over HTTP: who gets the page and the endpoint, and the CSRF
 * rule. In Chromium: the page starts GraphiQL, runs its first query and a query of a seeded class,
 * and no request the page makes fails or carries the master key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from './helpers/browser.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { dashboardCookie, startTestServer, type TestServer } from './helpers/server.js';
import { recordRequests, type SeenRequest } from './helpers/pageRequests.js';

let server: TestServer;
let app: TestApp;
let aliceCookie: string;
let bobCookie: string;
let browser: Browser | undefined;

const pagePath = (appId: string) => `/dashboard/apps/${appId}/graphql`;

async function request(method: string, urlPath: string, options: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${server.url}${urlPath}`, {
    method,
    redirect: 'manual',
    headers: { ...(options.cookie ? { cookie: options.cookie } : {}), ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The CSRF token the page gives GraphiQL (its data attribute). */
const csrfOf = (page: string) => /data-csrf="([^"]+)"/.exec(page)?.[1];

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'Graph Garden');
  aliceCookie = await dashboardCookie(server);
  bobCookie = await dashboardCookie({ url: server.url, alice: server.bob });
  for (const name of ['Tomato', 'Basil']) expect((await app.call('POST', '/classes/Plant', { body: { name } })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('who may use the GraphQL page', () => {
  it('serves the owner the page, without the master key, and runs documents posted with its token', async () => {
    const page = await request('GET', pagePath(app.appId), { cookie: aliceCookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="graphiql"');
    expect(page.text).not.toContain(app.keys.masterKey);
    const token = csrfOf(page.text)!;
    expect(token).toBeTruthy();
    const answer = await request('POST', pagePath(app.appId), {
      cookie: aliceCookie,
      headers: { origin: server.url, 'x-csrf-token': token },
      body: { query: '{ plants(order: name_ASC) { count edges { node { name } } } }' },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ data: { plants: { count: 2, edges: [{ node: { name: 'Basil' } }, { node: { name: 'Tomato' } }] } } });
    // Introspection needs the master key on the data API; here it runs with it.
    const schema = await request('POST', pagePath(app.appId), { cookie: aliceCookie, headers: { origin: server.url, 'x-csrf-token': token }, body: { query: '{ __schema { queryType { name } } }' } });
    expect(JSON.parse(schema.text)).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    const bad = await request('POST', pagePath(app.appId), { cookie: aliceCookie, headers: { origin: server.url, 'x-csrf-token': token }, body: { variables: {} } });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/query/);
  });

  it('refuses a signed-out browser, another account, a post without the token and one from another site', async () => {
    const signedOut = await request('GET', pagePath(app.appId));
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toMatch(/sign-in/);
    expect((await request('GET', pagePath(app.appId), { cookie: bobCookie })).status).toBe(404);
    const bobToken = csrfOf((await request('GET', '/dashboard/apps/' + app.appId + '/graphql', { cookie: aliceCookie })).text)!;
    const query = { query: '{ health }' };
    expect((await request('POST', pagePath(app.appId), { cookie: bobCookie, headers: { origin: server.url, 'x-csrf-token': bobToken }, body: query })).status).not.toBe(200);
    const noToken = await request('POST', pagePath(app.appId), { cookie: aliceCookie, headers: { origin: server.url }, body: query });
    expect(noToken.status).toBe(403);
    const foreign = await request('POST', pagePath(app.appId), { cookie: aliceCookie, headers: { origin: 'http://evil.example', 'x-csrf-token': bobToken }, body: query });
    expect(foreign.status).toBe(403);
    expect(noToken.text + foreign.text).not.toContain('"health"');
  });
});

describe('GraphiQL in Chromium', () => {
  let page: Page;
  let seen: SeenRequest[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    seen = recordRequests(page);
    page.on('pageerror', (e) => void errors.push(String(e)));
  }, 90_000);

  it("opens from the app's page, runs the first query and one of a class, and never holds the master key", async () => {
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await page.goto(`${server.url}/dashboard/apps/${app.appId}`);
    await page.getByRole('link', { name: 'GraphQL' }).first().click();
    await page.waitForURL(`${server.url}${pagePath(app.appId)}`);
    await page.locator('.graphiql-container').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: /execute query/i }).first().click();
    await expect.poll(async () => (await page.locator('.result-window, .graphiql-response').first().innerText()).replace(/\s+/g, ' '), { timeout: 15_000 }).toContain('"health": true');
    // A query of the seeded class, put into the query editor (CodeMirror 5's own API on its element).
    await page.evaluate(() => {
      const editor = document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as { CodeMirror: { setValue(text: string): void } };
      editor.CodeMirror.setValue('{ plants(order: name_DESC) { count edges { node { name } } } }');
    });
    await page.getByRole('button', { name: /execute query/i }).first().click();
    await expect.poll(async () => (await page.locator('.result-window, .graphiql-response').first().innerText()).replace(/\s+/g, ' '), { timeout: 15_000 }).toContain('"count": 2');
    expect((await page.locator('.result-window, .graphiql-response').first().innerText()).replace(/\s+/g, ' ')).toMatch(/"Tomato".*"Basil"/);
    const posted = seen.filter((s) => s.url === `${server.url}${pagePath(app.appId)}` && s.body);
    expect(posted.length).toBeGreaterThan(0);
    expect(posted.every((s) => s.status === 200)).toBe(true);
    expect(seen.filter((s) => (s.status !== undefined && s.status >= 400) || s.failure)).toEqual([]);
    for (const s of seen) {
      expect(s.url).not.toContain(app.keys.masterKey);
      expect(s.body ?? '').not.toContain(app.keys.masterKey);
    }
    expect(await page.content()).not.toContain(app.keys.masterKey);
    expect(errors).toEqual([]);
  });
});
