/**
 * Web hosting (operation 14, activateWebHosting, and the URL table of docs/design.md): a Backend App's
 * `cloud/public/` folder served at `http://<sub>.localhost:<port>/` by Host header, over real HTTP,
 * and opened in a real browser that saves an object through the Parse SDK.
 */
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homePaths } from '../src/config.js';
import { hostedSubdomain } from '../src/server/hosting.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { ARTIFACTS_DIR, launchBrowser } from './helpers/browser.js';

let server: TestServer;
let app: TestApp;
let siteURL: string;
/** `<sub>.localhost:<port>`, the Host header of the hosted site. */
let siteHost: string;
let port: number;
let publicDir: string;

const SECRET = 'top-secret-beside-public';
/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** One HTTP request to the test server's port with an explicit Host header; the path is sent as is. */
function call(host: string, rawPath: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host, ...options.headers };
    // Framed explicitly: Node sends DELETE and OPTIONS bodies unframed otherwise.
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = request(
      { host: '127.0.0.1', port, path: rawPath, method: options.method ?? 'GET', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Writes a file under the app's public folder (as deployCloudCode would). */
function writePublic(relative: string, content: string | Buffer): void {
  const file = path.join(publicDir, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
  app = await createTestApp(server, 'Hosting Tests');
  const appFolder = homePaths(server.home).app(app.appId);
  publicDir = path.join(appFolder, 'cloud', 'public');
  fs.mkdirSync(publicDir, { recursive: true });
  // Secrets beside the public folder, which no request may reach.
  fs.writeFileSync(path.join(appFolder, 'cloud', 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(appFolder, 'secret.txt'), SECRET);

  writePublic('index.html', '<!doctype html><title>Home</title><h1>Home page</h1>');
  writePublic('style.css', 'body { color: green; }');
  writePublic('app.js', 'console.log("hi");');
  writePublic('data.json', '{"ok":true}');
  writePublic('pixel.png', PNG);
  writePublic('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
  writePublic('docs/index.html', '<!doctype html><title>Docs</title><h1>Docs index</h1>');
  writePublic('docs/page.html', '<!doctype html><title>Page</title>');
  writePublic('empty/.keep', '');
  writePublic('.env', `SECRET=${SECRET}`);
  fs.symlinkSync('../secret.txt', path.join(publicDir, 'link-out.txt'));
  fs.symlinkSync('..', path.join(publicDir, 'linkdir'));
  fs.symlinkSync('/etc', path.join(publicDir, 'etc-link'));
  fs.symlinkSync('style.css', path.join(publicDir, 'alias.css'));

  const activated = await api(server, 'POST', `/backend-apps/${app.appId}/activate-web-hosting`, { token: server.alice });
  expect(activated.status, activated.text).toBe(200);
  siteURL = (activated.json() as { publicWebHostingURL: string }).publicWebHostingURL;
  siteHost = new URL(siteURL).host;
});

afterAll(async () => {
  await server?.close();
});

describe('activateWebHosting', () => {
  it('answers http://<sub>.localhost:<port>/, the same URL again, and getBackendApp shows it', async () => {
    expect(siteURL).toBe(`http://hosting-tests.localhost:${port}/`);
    const again = await api(server, 'POST', `/backend-apps/${app.appId}/activate-web-hosting`, { token: server.alice });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual({ publicWebHostingURL: siteURL });
    const got = await api(server, 'GET', `/backend-apps/${app.appId}`, { token: server.alice });
    expect(got.status).toBe(200);
    expect((got.json() as Array<{ publicWebHostingURL: string }>)[0]!.publicWebHostingURL).toBe(siteURL);
  });

  it('answers 404 for an unknown appId and for another account\'s app', async () => {
    const unknown = await api(server, 'POST', '/backend-apps/no-such-app/activate-web-hosting', { token: server.alice });
    expect(unknown.status).toBe(404);
    expect(unknown.text).toMatch(/getBackendApps/);
    const foreign = await api(server, 'POST', `/backend-apps/${app.appId}/activate-web-hosting`, { token: server.bob });
    expect(foreign.status).toBe(404);
  });

  it('gives a second app with the same name its own subdomain', async () => {
    const bobId = (await server.platform.services.accounts.findByLogin('bob'))!.id;
    const other = await server.platform.services.backendApps.create(bobId, 'Hosting Tests');
    const res = await api(server, 'POST', `/backend-apps/${other.appId}/activate-web-hosting`, { token: server.bob });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ publicWebHostingURL: `http://hosting-tests-2.localhost:${port}/` });
  });
});

describe('hostedSubdomain', () => {
  it('matches <sub>.<parent> on any port, case-insensitively, and nothing else', () => {
    expect(hostedSubdomain('site.localhost:4000', 'localhost', 'localhost')).toBe('site');
    expect(hostedSubdomain('SiTe.LocalHost', 'localhost', 'localhost')).toBe('site');
    expect(hostedSubdomain('site.localhost.:80', 'localhost', 'localhost')).toBe('site');
    expect(hostedSubdomain('localhost:4000', 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain('.localhost:4000', 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain('sitelocalhost:4000', 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain('127.0.0.1:4000', 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain('[::1]:4000', 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain(undefined, 'localhost', 'localhost')).toBeUndefined();
    expect(hostedSubdomain('site.apps.example.com', 'apps.example.com', 'backyard.example.com')).toBe('site');
    // The server's own public host under the hosting domain is the server, not a site.
    expect(hostedSubdomain('api.example.com', 'example.com', 'api.example.com')).toBeUndefined();
  });
});

describe('hosted site over HTTP', () => {
  it('serves each file with its content type', async () => {
    const expected: Array<[string, RegExp]> = [
      ['/index.html', /^text\/html; charset=utf-8$/i],
      ['/style.css', /^text\/css; charset=utf-8$/i],
      ['/app.js', /^(text|application)\/javascript; charset=utf-8$/i],
      ['/data.json', /^application\/json; charset=utf-8$/i],
      ['/pixel.png', /^image\/png$/],
      ['/logo.svg', /^image\/svg\+xml/],
    ];
    for (const [file, type] of expected) {
      const res = await call(siteHost, file);
      expect(res.status, file).toBe(200);
      expect(res.headers['content-type'], file).toMatch(type);
    }
    expect((await call(siteHost, '/pixel.png')).body.equals(PNG)).toBe(true);
    expect((await call(siteHost, '/style.css')).text).toBe('body { color: green; }');
  });

  it('serves index.html for / and for sub-folders, and redirects a folder without its slash', async () => {
    const home = await call(siteHost, '/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('Home page');
    expect((await call(siteHost, '/?utm=1')).text).toContain('Home page');
    const docs = await call(siteHost, '/docs/');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('Docs index');
    const bare = await call(siteHost, '/docs');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/docs/');
  });

  it('answers the host case-insensitively and on any port number in the header', async () => {
    const res = await call(siteHost.toUpperCase(), '/style.css');
    expect(res.status).toBe(200);
    expect((await call('hosting-tests.localhost', '/style.css')).status).toBe(200);
  });

  it('answers 404 with a small HTML page for missing files, folders without index and unknown subdomains', async () => {
    for (const missing of ['/nope.html', '/docs/nope', '/empty/', '/v1/backend-apps', '/healthz', '/sdk/parse.min.js']) {
      const res = await call(siteHost, missing);
      expect(res.status, missing).toBe(404);
      expect(res.headers['content-type'], missing).toMatch(/^text\/html/);
      expect(res.text, missing).toContain('404');
    }
    const unknown = await call(`no-such-site.localhost:${port}`, '/');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^text\/html/);
    expect(unknown.text).toContain('no-such-site.localhost');
  });

  it('refuses every attempt to leave the public folder', async () => {
    const attempts = [
      '/../secret.txt',
      '/../../secret.txt',
      '/docs/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/%2E%2E/%2e%2e/secret.txt',
      '/%2e%2e%2fsecret.txt',
      '/..%2fsecret.txt',
      '/..%5csecret.txt',
      '/.%2e/secret.txt',
      '/%252e%252e/secret.txt',
      '/link-out.txt',
      '/linkdir/secret.txt',
      '/linkdir/cloud/secret.txt',
      '/linkdir/',
      '/etc-link/hostname',
      '/etc-link/passwd',
      '//etc/passwd',
      '/index.html%00.png',
      '/%00',
      '/.env',
      '/%2eenv',
      '/%',
    ];
    for (const attempt of attempts) {
      const res = await call(siteHost, attempt);
      expect([400, 403, 404], `${attempt} answered ${res.status}`).toContain(res.status);
      expect(res.text, attempt).not.toContain(SECRET);
      expect(res.text, attempt).not.toContain('root:');
    }
    // A link that stays inside the folder is fine.
    expect((await call(siteHost, '/alias.css')).text).toBe('body { color: green; }');
  });

  it('sends ETag and Last-Modified with Cache-Control no-cache, answers 304 on a match, and shows a redeploy at once', async () => {
    writePublic('changing.txt', 'version one');
    const first = await call(siteHost, '/changing.txt');
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('no-cache');
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    expect(first.headers['last-modified']).toBeTruthy();

    const cached = await call(siteHost, '/changing.txt', { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
    const sinceModified = await call(siteHost, '/changing.txt', { headers: { 'if-modified-since': first.headers['last-modified'] as string } });
    expect(sinceModified.status).toBe(304);

    writePublic('changing.txt', 'version two, longer');
    const redeployed = await call(siteHost, '/changing.txt', { headers: { 'if-none-match': etag } });
    expect(redeployed.status).toBe(200);
    expect(redeployed.text).toBe('version two, longer');
    expect(redeployed.headers.etag).not.toBe(etag);
  });

  it('answers HEAD with the headers only and 405 for other methods', async () => {
    const head = await call(siteHost, '/style.css', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String('body { color: green; }'.length));
    expect(head.body.length).toBe(0);
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const res = await call(siteHost, '/index.html', { method, headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow, method).toBe('GET, HEAD');
    }
  });

  it('keeps /mcp and the management API away from hosted subdomains', async () => {
    const mcp = await call(siteHost, '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${server.alice}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(405);
    expect(mcp.text).not.toContain('jsonrpc');
    const unknownSite = await call(`other.localhost:${port}`, '/mcp', { method: 'POST', body: '{}' });
    expect(unknownSite.status).toBe(405);
  });

  it('leaves localhost itself to the normal routes', async () => {
    const health = await call(`localhost:${port}`, '/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toMatchObject({ service: 'backyard' });
    expect((await call(`LOCALHOST:${port}`, '/healthz')).status).toBe(200);
    expect((await call(`127.0.0.1:${port}`, '/healthz')).status).toBe(200);
    // The root of the server is not a hosted site.
    expect((await call(`localhost:${port}`, '/index.html')).text).not.toContain('Home page');
  });
});

describe('hosted site in a real browser', () => {
  it('loads the SDK from the server, saves an object with the JavaScript key, and the data API finds it', async () => {
    const marker = `browser-${Date.now()}`;
    const settings = JSON.stringify({ applicationId: app.appId, javascriptKey: app.keys.javascriptKey, apiURL: app.apiURL, marker });
    writePublic(
      'index.html',
      `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Backyard hosted site</title>
  <link rel="stylesheet" href="style.css">
  <script src="${server.url}/sdk/parse.min.js"></script>
</head>
<body>
  <h1>Hosted on Backyard</h1>
  <img src="logo.svg" alt="">
  <p id="status">loading…</p>
  <script>
    window.addEventListener('load', async () => {
      const status = document.getElementById('status');
      const settings = ${settings};
      try {
        Parse.initialize(settings.applicationId, settings.javascriptKey);
        Parse.serverURL = settings.apiURL;
        const visit = new Parse.Object('Visit');
        visit.set('marker', settings.marker);
        visit.set('page', location.href);
        await visit.save();
        status.textContent = 'Saved Visit ' + visit.id;
        document.body.dataset.objectId = visit.id;
      } catch (e) {
        status.textContent = 'Failed: ' + (e && e.message);
        document.body.dataset.error = String(e && e.message);
      }
    });
  </script>
</body>
</html>
`,
    );

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
      const response = await page.goto(siteURL, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      await page.waitForSelector('body[data-object-id], body[data-error]', { timeout: 30_000 });
      fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS_DIR, 'hosting.png'), fullPage: true });
      const error = await page.getAttribute('body', 'data-error');
      expect(error, problems.join('\n')).toBeNull();
      const objectId = await page.getAttribute('body', 'data-object-id');
      expect(objectId).toBeTruthy();
      expect(await page.evaluate(() => getComputedStyle(document.body).color)).toBe('rgb(0, 128, 0)');

      const found = await app.call('GET', `/classes/Visit${whereQuery({ marker })}`);
      expect(found.status).toBe(200);
      expect(found.body.results).toHaveLength(1);
      expect(found.body.results[0]).toMatchObject({ objectId, marker, page: siteURL });
    } finally {
      await browser.close();
    }
  });
});
