/**
 * The dashboard's "Server settings" page of a Backend App: it shows the options in force,
 * saves the ones the form changed (the data API uses them from the next request, no restart), and a
 * refused value shows the page again with the error next to its field and nothing saved. Changes
 * need the session's CSRF token; another account's app answers 404; what is echoed is escaped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
let bobAppId: string;
let alice: { cookie: string; csrf: string };

async function call(method: string, urlPath: string, options: { cookie?: string; body?: Record<string, string> } = {}) {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = options.cookie;
  if (method !== 'GET') headers.origin = server.url;
  if (options.body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(`${server.url}${urlPath}`, { method, headers, body: options.body ? new URLSearchParams(options.body).toString() : undefined, redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), cookie: response.headers.get('set-cookie'), text: await response.text() };
}

const page = () => `/dashboard/apps/${app.appId}/settings`;

/** The form as the page shows it now: every field with its value (checkboxes only when ticked), plus the CSRF token. */
async function currentForm(): Promise<Record<string, string>> {
  const text = (await call('GET', page(), { cookie: alice.cookie })).text;
  const form: Record<string, string> = { _csrf: alice.csrf };
  for (const m of text.matchAll(/<input type="checkbox" id="[^"]+" name="([^"]+)"[^>]*?( checked)?>/g)) if (m[2]) form[m[1]!] = 'on';
  for (const m of text.matchAll(/<input id="[^"]+" name="([^"]+)" value="([^"]*)"/g)) form[m[1]!] = m[2]!;
  for (const m of text.matchAll(/<textarea id="[^"]+" name="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) form[m[1]!] = m[2]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  return form;
}

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'Settings <b>App</b>');
  const { accounts, backendApps } = server.platform.services;
  bobAppId = (await backendApps.create((await accounts.findByLogin('bob'))!.id, 'Bob App')).appId;
  const signIn = await call('POST', '/dashboard/sign-in', { body: { token: server.alice, next: '/dashboard' } });
  const cookie = signIn.cookie!.split(';')[0]!;
  const overview = await call('GET', '/dashboard', { cookie });
  alice = { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(overview.text)![1]! };
  for (let i = 0; i < 8; i++) await app.call('POST', '/classes/Item', { body: { i } });
});
afterAll(async () => server?.close());

describe('Server settings page', () => {
  it("shows every option in force with its default, under the app's tabs", async () => {
    const res = await call('GET', page(), { cookie: alice.cookie });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<a href="${page()}" aria-current="page">Server settings</a>`);
    expect(res.text).toMatch(/<input id="setting-defaultLimit" name="defaultLimit" value="100"/);
    expect(res.text).toMatch(/<input id="setting-maxLimit" name="maxLimit" value=""/);
    expect(res.text).toMatch(/<input type="checkbox" id="setting-enforcePrivateUsers" name="enforcePrivateUsers"[^>]* checked>/);
    expect(res.text).toMatch(/<input type="checkbox" id="setting-fileUpload-enableForPublic" name="fileUpload.enableForPublic"[^>]*"\s*>/);
    expect(res.text).toContain('default <code>31536000</code>');
    expect(res.text).not.toContain('<b>App</b>');
    expect((await call('GET', page())).status).toBe(303);
    expect((await call('GET', `/dashboard/apps/${bobAppId}/settings`, { cookie: alice.cookie })).status).toBe(404);
  });

  it('saves what the form changed, and the data API uses it from the next request', async () => {
    const before = await app.call('GET', '/classes/Item?limit=100');
    expect(before.body.results).toHaveLength(8);
    const form = await currentForm();
    form.maxLimit = '5';
    delete form.enforcePrivateUsers;
    form['fileUpload.fileExtensions'] = '["^png$", "^jpe?g$"]';
    const res = await call('POST', page(), { cookie: alice.cookie, body: form });
    expect(res.status, res.text).toBe(303);
    expect((await call('GET', res.location!, { cookie: alice.cookie })).text).toContain('Saved maxLimit, enforcePrivateUsers, fileUpload.fileExtensions.');
    // Only what changed is stored: the rest keeps following the defaults.
    expect((await server.platform.services.backendApps.serverSettings(app.appId))!.overrides).toEqual({
      maxLimit: 5,
      enforcePrivateUsers: false,
      fileUpload: { fileExtensions: ['^png$', '^jpe?g$'] },
    });
    expect((await app.call('GET', '/classes/Item?limit=100')).body.results).toHaveLength(5);
    const signup = await app.call('POST', '/users', { body: { username: 'pat', password: 'pw' } });
    expect((await app.call('GET', `/users/${signup.body.objectId}`)).body.username).toBe('pat');

    const shown = await call('GET', page(), { cookie: alice.cookie });
    expect(shown.text).toMatch(/name="maxLimit" value="5"/);
    expect(shown.text).not.toMatch(/id="setting-enforcePrivateUsers" name="enforcePrivateUsers"[^>]* checked/);

    // Emptying a field and ticking a box back put the defaults back.
    const back = { ...(await currentForm()), maxLimit: '', enforcePrivateUsers: 'on', 'fileUpload.fileExtensions': '' };
    expect((await call('POST', page(), { cookie: alice.cookie, body: back })).status).toBe(303);
    expect((await server.platform.services.backendApps.serverSettings(app.appId))!.overrides).toEqual({});
    expect((await app.call('GET', '/classes/Item?limit=100')).body.results).toHaveLength(8);
  });

  it('a refused value shows the error next to its field, keeps what was typed, and saves nothing', async () => {
    const form = { ...(await currentForm()), defaultLimit: '7', maxLimit: 'lots' };
    const res = await call('POST', page(), { cookie: alice.cookie, body: form });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/<input id="setting-maxLimit" name="maxLimit" value="lots"[^>]*aria-describedby="setting-maxLimit-hint setting-maxLimit-error" aria-invalid="true">/);
    expect(res.text).toMatch(/<span class="field-error" id="setting-maxLimit-error" role="alert">maxLimit must be a whole number of at least 1; got &quot;lots&quot;\. Nothing was changed\.<\/span>/);
    expect(res.text).toMatch(/name="defaultLimit" value="7"/);
    expect((await server.platform.services.backendApps.serverSettings(app.appId))!.overrides).toEqual({});

    const json = { ...(await currentForm()), protectedFields: '{"Person": {"<script>alert(1)</script>": ["ssn"]}}' };
    const refused = await call('POST', page(), { cookie: alice.cookie, body: json });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="setting-protectedFields-error"/);
    expect(refused.text).not.toContain('<script>alert(1)</script>');
    expect(refused.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const notJson = await call('POST', page(), { cookie: alice.cookie, body: { ...(await currentForm()), 'fileUpload.fileExtensions': 'png, jpg' } });
    expect(notJson.text).toMatch(/<span class="field-error" id="setting-fileUpload-fileExtensions-error" role="alert">fileUpload\.fileExtensions must be a list of regular expressions/);
  });

  it("refuses a change without the page's CSRF token, and another account's app", async () => {
    const form = { ...(await currentForm()), maxLimit: '3' };
    const { _csrf: _omit, ...withoutToken } = form;
    expect((await call('POST', page(), { cookie: alice.cookie, body: withoutToken })).status).toBe(403);
    expect((await call('POST', `/dashboard/apps/${bobAppId}/settings`, { cookie: alice.cookie, body: form })).status).toBe(404);
    expect((await server.platform.services.backendApps.serverSettings(app.appId))!.overrides).toEqual({});
    expect((await server.platform.services.backendApps.serverSettings(bobAppId))!.overrides).toEqual({});
  });
});
