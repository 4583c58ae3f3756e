import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { LOOPBACK_IN_IPV6, startRedirector, startTrap, type Redirector, type Trap } from './helpers/outboundTargets.js';

/**
 * Webhooks (Parse REST guide, "Hooks"): functions and triggers served by an outside URL,
 * registered through `/hooks` with the master key and called through the real JS SDK. The webhook
 * server here refuses a call without the app's webhook key, as a real one should.
 */
let server: TestServer;
let app: TestApp;
let hooks: http.Server;
let hooksUrl: string;
let webhookKey: string;
/** An allowed server that redirects, and a loopback listener no webhook call may reach. */
let redirector: Redirector;
let trap: Trap;
const received: Array<{ path: string; body: Record<string, unknown> }> = [];

beforeAll(async () => {
  hooks = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const answer = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.headers['x-parse-webhook-key'] !== webhookKey) return res.writeHead(401).end(JSON.stringify({ error: 'Unauthorized: wrong webhook key' }));
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ path: req.url!, body });
      if (req.url === '/greet') return answer({ success: `Hello ${(body.params as { name: string }).name}` });
      if (req.url === '/refuse') return answer({ error: { code: 142, error: 'Scores must be positive.' } });
      if (req.url === '/garbled') return res.writeHead(200).end('<html>oops</html>');
      if (req.url === '/slow') return; // never answers
      if (req.url === '/beforeSave') {
        const object = body.object as Record<string, unknown>;
        if ((object.score as number) < 0) return answer({ error: 'Scores must be positive.' });
        return answer({ success: { ...object, checked: true } });
      }
      if (req.url === '/trim') {
        // Answers the object without its `secret`, and with `note` changed when it came.
        const { secret: _secret, ...object } = body.object as Record<string, unknown>;
        return answer({ success: 'note' in object ? { ...object, note: `${String(object.note)} (checked)` } : object });
      }
      answer({ success: true });
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  const { port } = hooks.address() as AddressInfo;
  hooksUrl = `http://127.0.0.1:${port}`;
  redirector = await startRedirector();
  trap = await startTrap();
  server = await startTestServer({ BACKYARD_CLOUD_ALLOW_HOSTS: `127.0.0.1:${port},${redirector.hostPort}`, BACKYARD_FUNCTION_TIMEOUT_MS: '1500' });
  app = await createTestApp(server);
  webhookKey = (await server.platform.services.backendApps.keys(app.appId))!.webhookKey;
  Parse.initialize(app.appId, app.keys.javascriptKey);
  Parse.serverURL = app.apiURL;
});

afterAll(async () => {
  await server?.close();
  await redirector?.close();
  await trap?.close();
  hooks?.closeAllConnections();
  await new Promise((resolve) => hooks?.close(resolve));
});

const master = (method: string, path: string, body?: unknown) => app.call(method, path, { master: true, body });

describe('webhooks', () => {
  it('a function webhook is called with the webhook key and the caller, and answers through Parse.Cloud.run', async () => {
    expect(await master('POST', '/hooks/functions', { functionName: 'greet', url: `${hooksUrl}/greet` })).toMatchObject({ status: 200, body: { functionName: 'greet', url: `${hooksUrl}/greet` } });
    const user = await Parse.User.signUp('hooked', 'pw', {});
    expect(await Parse.Cloud.run('greet', { name: 'Ada' }, { sessionToken: user.getSessionToken()! })).toBe('Hello Ada');
    const call = received.find((r) => r.path === '/greet')!;
    expect(call.body).toMatchObject({ functionName: 'greet', params: { name: 'Ada' }, master: false, user: { objectId: user.id, username: 'hooked' } });
    expect(await master('GET', '/hooks/functions')).toMatchObject({ status: 200, body: [{ functionName: 'greet', url: `${hooksUrl}/greet` }] });
    expect(await master('GET', '/hooks/functions/greet')).toMatchObject({ body: { functionName: 'greet' } });
  });

  it("a webhook's error keeps its code; a garbled answer, a slow one and an unreachable one answer 141 naming the URL", async () => {
    await master('POST', '/hooks/functions', { functionName: 'refuse', url: `${hooksUrl}/refuse` });
    await master('POST', '/hooks/functions', { functionName: 'garbled', url: `${hooksUrl}/garbled` });
    await master('POST', '/hooks/functions', { functionName: 'slow', url: `${hooksUrl}/slow` });
    await expect(Parse.Cloud.run('refuse')).rejects.toMatchObject({ code: 142, message: 'Scores must be positive.' });
    await expect(Parse.Cloud.run('garbled')).rejects.toMatchObject({ code: 141, message: expect.stringContaining('Malformed response from the webhook') });
    await expect(Parse.Cloud.run('slow')).rejects.toMatchObject({ code: 141, message: `The webhook of function slow at ${hooksUrl}/slow did not answer within 1500 ms.` });
  });

  it('trigger webhooks: beforeSave may change or refuse the object, afterSave hears the saved one', async () => {
    await master('POST', '/hooks/triggers', { className: 'GameScore', triggerName: 'beforeSave', url: `${hooksUrl}/beforeSave` });
    await master('POST', '/hooks/triggers', { className: 'GameScore', triggerName: 'afterSave', url: `${hooksUrl}/afterSave` });
    const score = await new Parse.Object('GameScore').save({ score: 10 });
    expect(score.get('checked')).toBe(true);
    await expect(new Parse.Object('GameScore').save({ score: -1 })).rejects.toMatchObject({ code: 141, message: 'Scores must be positive.' });
    const after = received.filter((r) => r.path === '/afterSave').at(-1)!;
    expect(after.body).toMatchObject({ triggerName: 'afterSave', object: { className: 'GameScore', objectId: score.id, score: 10, checked: true } });
    expect(await master('GET', '/hooks/triggers/GameScore/beforeSave')).toMatchObject({ body: { className: 'GameScore', triggerName: 'beforeSave' } });
  });

  it("beforeSave: the webhook's answer is the object saved, so a field it leaves out is not stored", async () => {
    // parse-server src/Controllers/HooksController.js (wrapToHTTPRequest answers {object}) and
    // src/RestWrite.js (runBeforeSaveTrigger: this.data = response.object).
    await master('POST', '/hooks/triggers', { className: 'Trimmed', triggerName: 'beforeSave', url: `${hooksUrl}/trim` });
    const created = await app.call('POST', '/classes/Trimmed', { body: { score: 5, secret: 'client', note: 'hello' } });
    expect(created.status).toBe(201);
    const stored = await master('GET', `/classes/Trimmed/${created.body.objectId}`);
    expect(stored.body).toMatchObject({ score: 5, note: 'hello (checked)' });
    expect(stored.body).not.toHaveProperty('secret');
    // An update: the client's operation is kept where the webhook gave its value back, its left-out
    // field is not written, and a stored field the update did not name keeps its value.
    const updated = await app.call('PUT', `/classes/Trimmed/${created.body.objectId}`, { body: { score: { __op: 'Increment', amount: 2 }, secret: 'again' } });
    expect(updated.status).toBe(200);
    const after = await master('GET', `/classes/Trimmed/${created.body.objectId}`);
    expect(after.body).toMatchObject({ score: 7, note: 'hello (checked) (checked)' });
    expect(after.body).not.toHaveProperty('secret');
    const call = received.filter((r) => r.path === '/trim').at(-1)!;
    expect(call.body).toMatchObject({ triggerName: 'beforeSave', object: { className: 'Trimmed', objectId: created.body.objectId, score: 7, secret: 'again' } });
  });

  it('is master-key only, refuses bad and duplicate declarations with 143, and stops calling a removed webhook', async () => {
    expect(await app.call('POST', '/hooks/functions', { body: { functionName: 'x', url: `${hooksUrl}/greet` } })).toMatchObject({ status: 403, body: { code: 119 } });
    expect((await master('POST', '/hooks/functions', { functionName: 'greet', url: `${hooksUrl}/greet` })).body).toEqual({ code: 143, error: 'function name: greet already exists' });
    expect((await master('POST', '/hooks/functions', { functionName: 'x', url: 'ftp://x' })).body).toEqual({ code: 143, error: 'invalid hook declaration: url must be an http(s) URL, such as https://hooks.example.com/hello' });
    expect((await master('POST', '/hooks/triggers', { className: 'GameScore', triggerName: 'beforeLunch', url: `${hooksUrl}/x` })).body).toMatchObject({ code: 143, error: expect.stringContaining('triggerName must be one of beforeSave') });
    expect((await master('GET', '/hooks/functions/nothing')).body).toEqual({ code: 143, error: 'no function named: nothing is defined' });
    expect((await master('PUT', '/hooks/functions/greet', { __op: 'Delete' })).body).toEqual({});
    const count = received.filter((r) => r.path === '/greet').length;
    await expect(Parse.Cloud.run('greet', { name: 'Ada' })).rejects.toMatchObject({ code: 141 });
    expect(received.filter((r) => r.path === '/greet').length).toBe(count);
  });

  it('a webhook at a loopback address the operator did not allow is not called', async () => {
    let asked = 0;
    const other = http.createServer((_req, res) => {
      asked++;
      res.end('{"success": "reached"}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      await master('POST', '/hooks/functions', { functionName: 'inside', url: `http://127.0.0.1:${(other.address() as AddressInfo).port}/` });
      await expect(Parse.Cloud.run('inside')).rejects.toMatchObject({ code: 141, message: expect.stringContaining('is not a public address') });
      expect(asked).toBe(0);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('a webhook on an allowed host that redirects is not followed: to loopback, a private address, or anywhere', async () => {
    const targets = [`${trap.url}/`, ...LOOPBACK_IN_IPV6.map((host) => `http://${host}:${trap.port}/`), 'http://192.168.0.10/', `${hooksUrl}/greet`];
    for (const status of [301, 302, 307, 308]) {
      for (const target of targets) {
        await master('POST', '/hooks/functions', { functionName: 'moved', url: redirector.to(target, status) });
        await expect(Parse.Cloud.run('moved', { name: 'x' }), `${status} → ${target}`).rejects.toMatchObject({ code: 141, message: expect.stringMatching(/redirect \(HTTP \d+\), which is not followed/) });
        await master('PUT', '/hooks/functions/moved', { __op: 'Delete' });
      }
    }
    expect(redirector.hits).toBeGreaterThan(0);
    expect(trap.hits).toBe(0);
  });
});
