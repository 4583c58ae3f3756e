/**
 * The web dashboard in a real browser: Debian's Chromium driven by playwright-core. Signs
 * in, opens a Backend App from the dashboardURL that createBackendApp answered, browses 1,000
 * objects page by page, edits an object and adds columns (checked through the data API), deploys
 * cloud code from the editor and calls the function, uses the API console, starts a job, and sees
 * the recent function and job runs with their console output.
 * Screenshots of each page go to test-artifacts/dashboard-*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let app: { appId: string; appName: string; dashboardURL: string; apiURL: string; restKey: string };
let masterKey: string;

/** Saves a screenshot of the page as test-artifacts/dashboard-<name>.png. */
async function shoot(p: Page, name: string, fullPage = true): Promise<void> {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await p.screenshot({ path: path.join(ARTIFACTS_DIR, `dashboard-${name}.png`), fullPage });
}

/** Calls the app's data API over HTTP with its REST key (or master key). */
async function data(method: string, urlPath: string, body?: unknown, master = false): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'X-Parse-Application-Id': app.appId };
  if (master) headers['X-Parse-Master-Key'] = masterKey;
  else headers['X-Parse-REST-API-Key'] = app.restKey;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${app.apiURL}${urlPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

async function signIn(p: Page, token: string): Promise<void> {
  await p.goto(`${server.url}/dashboard/sign-in`);
  await p.getByLabel('Account token').fill(token);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.waitForURL(`${server.url}/dashboard`);
}

beforeAll(async () => {
  server = await startTestServer();
  const created = await api(server, 'POST', '/backend-apps', { token: server.alice, body: { appName: 'Todo Planner' } });
  expect(created.status, created.text).toBe(201);
  app = created.json() as typeof app;
  masterKey = (await server.platform.services.backendApps.keys(app.appId))!.masterKey;

  // 1,000 objects in one batch, numbered 0 to 999, and a user to point at.
  const items = Array.from({ length: 1000 }, (_, n) => ({ method: 'POST', path: '/data/classes/Item', body: { n, title: `Item ${n}`, done: n % 3 === 0 } }));
  const batch = await data('POST', '/batch', { requests: items });
  expect(batch.status).toBe(200);
  const user = await data('POST', '/users', { username: 'ada', password: 'correct horse' });
  expect(user.status).toBe(201);

  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('dashboard in a browser', () => {
  it('sends a visitor without a session to the sign-in page, and signs in with an account token', async () => {
    await page.goto(app.dashboardURL);
    expect(page.url()).toContain('/dashboard/sign-in');
    await expect(page.getByRole('heading', { name: 'Sign in to Backyard' }).isVisible()).resolves.toBe(true);
    await shoot(page, 'sign-in');

    await page.getByLabel('Account token').fill('by_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');

    await page.getByLabel('Account token').fill(server.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the visitor was going: the app's page.
    await page.waitForURL(app.dashboardURL);
    expect(await page.textContent('header')).toContain('Signed in as alice');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'backyard_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(session.expires).toBeGreaterThan(Date.now() / 1000 + 3600);
  });

  it('shows the overview with the account\'s apps', async () => {
    await page.goto(`${server.url}/dashboard`);
    await expect(page.getByRole('link', { name: 'Todo Planner' }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('main')).toContain(app.appId);
    await shoot(page, 'overview');
  });

  it('opens the app from the dashboardURL that createBackendApp answered: URLs, keys, master key on request', async () => {
    await page.goto(app.dashboardURL);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Todo Planner');
    const main = (await page.textContent('main'))!;
    expect(main).toContain(app.appId);
    expect(main).toContain(app.apiURL);
    expect(main).toContain(app.restKey);
    expect(await page.content()).not.toContain(masterKey);
    await shoot(page, 'app');

    await page.getByRole('button', { name: 'Show the master key' }).click();
    await expect(page.locator('#master-key').textContent()).resolves.toBe(masterKey);
    await shoot(page, 'app-master-key');
    await page.getByRole('link', { name: 'Hide the master key' }).click();
    expect(await page.content()).not.toContain(masterKey);
  });

  it('browses a class of 1,000 objects page by page, sorted by a column, and filters it', async () => {
    await page.getByRole('link', { name: 'Data browser', exact: true }).click();
    await page.getByRole('link', { name: /^Item/ }).first().click();
    await expect(page.locator('.side a[aria-current="page"]').textContent()).resolves.toMatch(/Item\s*1,000/);
    // Sort by n, ascending.
    await page.locator('thead th[data-field="n"] a').click();
    await expect(page.locator('thead th[aria-sort="ascending"]').getAttribute('data-field')).resolves.toBe('n');

    const nColumn = async () => {
      const fields = await page.locator('thead th').evaluateAll((ths) => ths.map((th) => th.getAttribute('data-field')));
      const index = fields.indexOf('n');
      return (await page.locator(`tbody tr td:nth-child(${index + 1})`).allTextContents()).map((t) => Number(t.trim()));
    };
    expect(await nColumn()).toEqual(Array.from({ length: 50 }, (_, i) => i));
    await expect(page.locator('#range').textContent()).resolves.toContain('Objects 1–50 of 1,000');

    const seen = new Set<number>(await nColumn());
    for (let pageNumber = 2; pageNumber <= 20; pageNumber++) {
      await page.getByRole('navigation', { name: 'Pages (top)' }).getByRole('link', { name: 'Next' }).click();
      // The next page has loaded once its range says so (textContent alone would read the page being left).
      await page.locator('#range', { hasText: `page ${pageNumber} of 20` }).waitFor();
      const values = await nColumn();
      expect(values).toEqual(Array.from({ length: 50 }, (_, i) => (pageNumber - 1) * 50 + i));
      for (const v of values) seen.add(v);
    }
    expect(seen.size).toBe(1000);
    await expect(page.locator('#range').textContent()).resolves.toContain('Objects 951–1,000 of 1,000');
    await expect(page.getByRole('navigation', { name: 'Pages (top)' }).getByRole('link', { name: 'Next' }).count()).resolves.toBe(0);

    // Descending, then a filter.
    await page.locator('thead th[data-field="n"] a').click();
    await page.locator('thead th[data-field="n"][aria-sort="descending"]').waitFor();
    expect((await nColumn()).slice(0, 3)).toEqual([999, 998, 997]);
    await page.getByLabel('Column').selectOption('n');
    await page.getByLabel('Condition').selectOption('gt');
    await page.getByLabel('Value').fill('990');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('#range', { hasText: 'of 9' }).waitFor();
    expect(await nColumn()).toEqual([999, 998, 997, 996, 995, 994, 993, 992, 991]);

    await page.getByRole('link', { name: 'Clear filter' }).click();
    await page.locator('#range', { hasText: 'of 1,000' }).waitFor();
    await page.getByText('Filter with a JSON query').click();
    await page.getByLabel('where (JSON)').fill('{"title": "Item 7"}');
    await page.getByRole('button', { name: 'Run query' }).click();
    // Read once the filtered page is there.
    await expect.poll(nColumn, { timeout: 10_000 }).toEqual([7]);
  });

  it('edits an object, and the data API sees the change', async () => {
    await page.locator('tbody tr td a').first().click();
    await expect(page.getByRole('heading', { level: 2 }).textContent()).resolves.toMatch(/Item\s+\w{10}/);
    const objectId = page.url().split('/').pop()!;
    await page.getByLabel(/^title/).fill('Item 7, edited in the dashboard');
    await page.getByLabel(/^done/).selectOption('true');
    await shoot(page, 'object');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved: title, done.');

    const got = await data('GET', `/classes/Item/${objectId}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ n: 7, title: 'Item 7, edited in the dashboard', done: true });
  });

  it('refuses a malformed value without saving anything', async () => {
    await page.getByLabel(/^n\b/).fill('seven');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('n must be a number');
    const objectId = page.url().split('/').pop()!;
    expect(objectId).toMatch(/^\w{10}$/);
    expect((await data('GET', `/classes/Item/${objectId}`)).body.n).toBe(7);
  });

  it('adds columns with Parse types, and a pointer links to its object', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item`);
    await page.getByText('Add a column').click();
    await page.getByLabel('Name', { exact: true }).fill('priority');
    await page.getByLabel('Type').selectOption('Number');
    await page.getByRole('button', { name: 'Add column' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Added the column priority (Number)');
    await expect(page.locator('thead th[data-field="priority"]').count()).resolves.toBe(1);

    await page.getByText('Add a column').click();
    await page.getByLabel('Name', { exact: true }).fill('owner');
    await page.getByLabel('Type').selectOption('Pointer');
    await page.getByLabel('Target class').fill('_User');
    await page.getByRole('button', { name: 'Add column' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Added the column owner (Pointer of _User)');

    const schema = await data('GET', '/schemas/Item', undefined, true);
    expect(schema.body.fields.priority).toEqual({ type: 'Number' });
    expect(schema.body.fields.owner).toEqual({ type: 'Pointer', targetClass: '_User' });

    // Point an object at the user, through the object form, and follow the link.
    const user = (await data('GET', '/users', undefined, true)).body.results[0];
    const first = (await data('GET', `/classes/Item?where=${encodeURIComponent('{"n":1}')}`)).body.results[0];
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item/${first.objectId}`);
    await page.getByLabel(/^owner/).fill(user.objectId);
    await page.getByLabel(/^priority/).fill('2');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved');
    expect((await data('GET', `/classes/Item/${first.objectId}`)).body).toMatchObject({ priority: 2, owner: { __type: 'Pointer', className: '_User', objectId: user.objectId } });

    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item?order=n`);
    await shoot(page, 'data-browser', false);
    await page.getByRole('link', { name: `_User ${user.objectId}` }).click();
    await page.waitForURL(`**/data/_User/${user.objectId}`);
    await expect(page.getByLabel(/^username/).inputValue()).resolves.toBe('ada');

    // A Relation column: its cell links to the related objects.
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item?order=n`);
    await page.getByText('Add a column').click();
    await page.getByLabel('Name', { exact: true }).fill('watchers');
    await page.getByLabel('Type').selectOption('Relation');
    await page.getByLabel('Target class').fill('_User');
    await page.getByRole('button', { name: 'Add column' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Added the column watchers (Relation of _User)');
    const related = await data('PUT', `/classes/Item/${first.objectId}`, { watchers: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: user.objectId }] } });
    expect(related.status).toBe(200);
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item?order=n`);
    await page.locator('tbody tr').nth(1).getByRole('link', { name: '_User relation' }).click();
    await expect(page.locator('#range').textContent()).resolves.toContain('of 1');
    await expect(page.locator('tbody').textContent()).resolves.toContain('ada');
  });

  it('adds and deletes an object', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item`);
    await page.getByRole('link', { name: 'Add an object' }).click();
    await page.getByLabel(/^title/).fill('Made by hand');
    await page.getByLabel(/^n\b/).fill('1000');
    await page.getByRole('button', { name: 'Create object' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Created the object');
    const objectId = page.url().split('/').pop()!.split('?')[0]!;
    expect((await data('GET', `/classes/Item/${objectId}`)).body).toMatchObject({ title: 'Made by hand', n: 1000 });

    await page.getByRole('button', { name: 'Delete this object' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(`Deleted the object ${objectId}`);
    expect((await data('GET', `/classes/Item/${objectId}`)).status).toBe(404);
  });

  it('shows the schema and class-level permissions, and saves a change to them', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/schema/Item`);
    await expect(page.getByRole('heading', { name: 'Class-level permissions' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('Public may delete objects').uncheck();
    await page.getByRole('button', { name: 'Save permissions' }).first().click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved the permissions of Item');
    await expect(page.getByLabel('Public may delete objects').isChecked()).resolves.toBe(false);
    const schema = await data('GET', '/schemas/Item', undefined, true);
    expect(schema.body.classLevelPermissions.delete).toEqual({});
    expect(schema.body.classLevelPermissions.find).toEqual({ '*': true });
    await shoot(page, 'schema');
  });

  it('deploys a cloud code change from the editor, shows the warnings, and the function answers', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/cloud`);
    await expect(page.getByRole('heading', { name: 'cloud/main.js' }).isVisible()).resolves.toBe(true);
    await shoot(page, 'cloud-code');
    await page.getByRole('link', { name: 'Edit' }).click();

    // A syntax error: saved, not loaded, and the warning is shown.
    await page.getByLabel('Content of cloud/main.js').fill("Parse.Cloud.define('greet', (request) => {\n  return 'Hello, ' + ;\n});\n");
    await page.getByRole('button', { name: 'Deploy' }).click();
    const warned = (await page.locator('.notice').textContent())!;
    expect(warned).toMatch(/warning/);
    expect(warned).toMatch(/syntax|Unexpected/i);
    expect(await page.locator('main pre.small').textContent()).toContain('not reloaded');
    await shoot(page, 'cloud-code-warning');

    await page.getByRole('link', { name: 'Edit' }).click();
    await page
      .getByLabel('Content of cloud/main.js')
      .fill(
        [
          "Parse.Cloud.define('greet', (request) => {",
          "  console.log('greeting', request.params.name);",
          "  return 'Hello, ' + request.params.name + '!';",
          '});',
          '',
          "Parse.Cloud.define('boom', () => {",
          "  console.warn('about to explode');",
          "  throw new Error('boom went the function');",
          '});',
          '',
          "Parse.Cloud.job('tidy', async (request) => {",
          "  request.message('tidying');",
          "  console.info('tidying the items');",
          "  return 'tidied';",
          '});',
          '',
        ].join('\n'),
      );
    await page.getByRole('button', { name: 'Deploy' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Deployed cloud/main.js');
    expect(await page.locator('main pre.small').textContent()).toContain('The cloud code was reloaded.');
    await expect(page.locator('#viewer').textContent()).resolves.toContain("request.params.name + '!'");

    const called = await data('POST', '/functions/greet', { name: 'Ada' });
    expect(called).toEqual({ status: 200, body: { result: 'Hello, Ada!' } });
  });

  it('sends a request from the API console and shows the answer', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/console`);
    await page.getByLabel('Method').selectOption('POST');
    await page.getByLabel('Path').fill('/functions/greet');
    await page.getByLabel('Body (JSON)').fill('{"name": "console"}');
    await page.getByRole('button', { name: 'Send request' }).click();
    await expect(page.locator('#answer-status').textContent()).resolves.toBe('200');
    expect(JSON.parse((await page.locator('#answer-body').textContent())!)).toEqual({ result: 'Hello, console!' });

    await page.getByLabel('Method').selectOption('GET');
    await page.getByLabel('Path').fill('/classes/Item?limit=2&order=n');
    await page.getByLabel('Body (JSON)').fill('');
    await page.getByRole('button', { name: 'Send request' }).click();
    const answer = JSON.parse((await page.locator('#answer-body').textContent())!);
    expect(answer.results.map((r: { n: number }) => r.n)).toEqual([0, 1]);
    await shoot(page, 'console');

    await page.getByLabel('Path').fill('/classes/NoSuchClass/abc');
    await page.getByRole('button', { name: 'Send request' }).click();
    await expect(page.locator('#answer-status').textContent()).resolves.toBe('404');
  });

  it('starts a job and shows its run from _JobStatus, with its output', async () => {
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/jobs`);
    expect(await page.locator('#functions-heading + ul').textContent()).toContain('greet');
    await page.getByRole('button', { name: 'Start job' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Started the job tidy');
    const jobRows = page.getByRole('region', { name: 'Recent job runs' }).locator('tbody tr');
    const firstRow = async () => {
      const text = await jobRows.first().textContent();
      if (!text?.includes('succeeded')) await page.reload();
      return text;
    };
    await expect.poll(firstRow, { timeout: 30_000, interval: 250 }).toContain('succeeded');
    const row = jobRows.first();
    const text = (await row.textContent())!;
    expect(text).toContain('tidy');
    expect(text).toContain('succeeded');
    expect(text).toContain('tidied');
    await row.getByText(/^1 line/).click();
    await expect(row.locator('pre').textContent()).resolves.toMatch(/info\s+tidying the items/);
    await shoot(page, 'jobs');
  });

  it('lists recent function runs, newest first, with their status, duration and output', async () => {
    expect((await data('POST', '/functions/greet', { name: 'Logbook' })).body).toEqual({ result: 'Hello, Logbook!' });
    expect((await data('POST', '/functions/boom', {})).body).toEqual({ code: 141, error: 'boom went the function' });
    await page.goto(`${server.url}/dashboard/apps/${app.appId}/jobs`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Todo Planner');
    await expect(page.getByRole('link', { name: 'Functions and jobs' }).getAttribute('aria-current')).resolves.toBe('page');
    const recent = page.getByRole('region', { name: 'Recent runs' });
    const headers = await recent.locator('thead th').allTextContents();
    expect(headers).toEqual(['Name', 'Kind', 'Status', 'Started', 'Duration', 'Output']);
    const rows = recent.locator('tbody tr');
    // Newest first: boom, then greet (Logbook), then the job, then the earlier greet calls.
    const names = await rows.locator('th[scope="row"]').allTextContents();
    expect(names.slice(0, 3)).toEqual(['boom', 'greet', 'tidy']);

    const boom = rows.nth(0);
    await expect(boom.locator('.badge').textContent()).resolves.toBe('failed');
    await expect(boom.locator('.run-error').textContent()).resolves.toContain('boom went the function');
    await expect(boom.locator('td').nth(0).textContent()).resolves.toBe('function');
    expect(await boom.locator('td').nth(3).textContent()).toMatch(/^\d+(\.\d)? m?s$/);

    const greet = rows.nth(1);
    await expect(greet.locator('.badge').textContent()).resolves.toBe('succeeded');
    await expect(greet.locator('pre').isVisible()).resolves.toBe(false);
    await greet.getByText('1 line').click();
    const log = (await greet.locator('pre').textContent())!;
    expect(log).toMatch(/^\d\d:\d\d:\d\d\.\d{3}\s+log\s+greeting Logbook\n$/);
    await boom.getByText('1 line').click();
    await expect(boom.locator('pre').textContent()).resolves.toMatch(/warn\s+about to explode/);
    // Each run shows only its own output.
    const earlier = (await rows.allTextContents()).slice(3).join('\n');
    expect(earlier).not.toContain('greeting Logbook');
    await shoot(page, 'runs');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    await p.goto(`${server.url}/dashboard/apps/${app.appId}/jobs`);
    expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(1);
    const phoneGreet = p.getByRole('region', { name: 'Recent runs' }).locator('tbody tr').nth(1);
    await phoneGreet.getByText('1 line').click();
    // Each run is stacked on a phone: its output shows in full width, without scrolling sideways.
    const box = (await phoneGreet.locator('pre').boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await p.getByRole('heading', { name: 'Recent runs' }).scrollIntoViewIfNeeded();
    await shoot(p, 'phone-runs', false);
    await phone.close();
  });

  it('activates web hosting and links to the hosted site', async () => {
    await page.goto(app.dashboardURL);
    await page.getByRole('button', { name: 'Activate web hosting' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Web hosting is active at');
    const link = page.getByRole('link', { name: /todo-planner\.localhost/ });
    const href = (await link.getAttribute('href'))!;
    expect(href).toMatch(/^http:\/\/todo-planner\.localhost:\d+\/$/);
    const hosted = await context.newPage();
    await hosted.goto(href);
    expect(await hosted.title()).toBeTruthy();
    await hosted.close();
  });

  it('reads well on a phone', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    await p.goto(`${server.url}/dashboard/apps/${app.appId}/data/Item?order=n`);
    // The page itself does not scroll sideways; the table scrolls in its own region.
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await p.locator('#range').scrollIntoViewIfNeeded();
    await shoot(p, 'phone-data-browser', false);
    await p.goto(app.dashboardURL);
    expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(1);
    await shoot(p, 'phone-app', false);
    await phone.close();
  });

  it('can be used with the keyboard: a skip link, then every control reachable with a visible focus', async () => {
    await page.goto(app.dashboardURL);
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      return { tag: el.tagName, outline: getComputedStyle(el).outlineStyle, inMain: !!el.closest('main') };
    });
    expect(focused.inMain).toBe(true);
    expect(focused.outline).not.toBe('none');
    // Every form control has a label.
    for (const url of [app.dashboardURL, `${server.url}/dashboard/apps/${app.appId}/data/Item`, `${server.url}/dashboard/apps/${app.appId}/console`, `${server.url}/dashboard/apps/${app.appId}/jobs`]) {
      await page.goto(url);
      const unlabeled = await page.evaluate(() =>
        [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
          .filter((el) => !(el as HTMLInputElement).labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
          .map((el) => el.outerHTML),
      );
      expect(unlabeled, url).toEqual([]);
    }
  });

  it('signs out', async () => {
    await page.goto(`${server.url}/dashboard`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.url}/dashboard/sign-in`);
    await page.goto(app.dashboardURL);
    expect(page.url()).toContain('/dashboard/sign-in');
  });
});
