import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startPushStandIns, type PushStandIns } from './helpers/pushServices.js';
import { startTestServer, type TestServer, dashboardCookie } from './helpers/server.js';
import { startRedirector, startTrap, type Redirector, type Trap } from './helpers/outboundTargets.js';

/**
 * Installations and push through the real Parse JS SDK: Parse's installation rules, and
 * `Parse.Push.send` delivered to stand-ins of APNs, FCM and a Web Push service
 * (test/helpers/pushServices.ts) that check signatures, topics, tokens and encryption as the real
 * ones do; `_PushStatus` records what was sent and what failed.
 */
let server: TestServer;
let app: TestApp;
let services: PushStandIns;
/** An allowed server that redirects, and a loopback listener no push request may reach. */
let redirector: Redirector;
let trap: Trap;

beforeAll(async () => {
  services = await startPushStandIns();
  redirector = await startRedirector();
  trap = await startTrap();
  server = await startTestServer({ BACKYARD_CLOUD_ALLOW_HOSTS: [services.apns.hostPort, services.fcm.hostPort, services.web.hostPort, redirector.hostPort].join(',') });
  app = await createTestApp(server);
  await server.platform.services.backendApps.configure(app.appId, { push: { ios: services.apns.settings, android: services.fcm.settings, web: services.web.settings } });
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
});

afterAll(async () => {
  await server?.close();
  await services?.close();
  await redirector?.close();
  await trap?.close();
});

const install = (body: Record<string, unknown>, headers: Record<string, string> = {}) => app.call('POST', '/installations', { body, headers });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 20_000; ; ) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('installations', () => {
  it("follows Parse's rules: ids required, an existing installationId updated, ids and deviceType immutable, a token on one installation", async () => {
    expect((await install({ deviceType: 'ios' })).body).toEqual({ code: 135, error: 'at least one ID field (deviceToken, installationId) must be specified in this operation' });
    expect((await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000001' })).body).toEqual({ code: 135, error: 'deviceType must be specified in this operation' });
    const first = await install({ installationId: 'A1B2C3D4-0000-4000-8000-000000000001', deviceType: 'android', deviceToken: 'tok-1', channels: ['news'] });
    expect(first.status).toBe(201);
    // The same installationId again (lower-cased): the installation is updated, not duplicated.
    const again = await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000001', deviceType: 'android', channels: ['news', 'sports'] });
    expect(again).toMatchObject({ status: 200, body: { objectId: first.body.objectId, updatedAt: expect.any(String) } });
    const put = (body: Record<string, unknown>) => app.call('PUT', `/installations/${first.body.objectId}`, { body });
    expect((await put({ deviceType: 'ios' })).body).toEqual({ code: 136, error: 'deviceType may not be changed in this operation' });
    expect((await put({ installationId: 'a1b2c3d4-0000-4000-8000-00000000ffff' })).body).toEqual({ code: 136, error: 'installationId may not be changed in this operation' });
    // A refused write moves nothing: the token's holder stays.
    const refused = await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000002', deviceType: 'android', deviceToken: 'tok-1', ACL: 'everyone' });
    expect(refused.status).toBe(400);
    expect((await app.call('GET', `/installations/${first.body.objectId}`, { master: true })).body).toMatchObject({ deviceToken: 'tok-1' });
    // The token moves to a new installation: the old holder is deleted.
    const second = await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000002', deviceType: 'android', deviceToken: 'tok-1' });
    expect(second.status).toBe(201);
    expect((await app.call('GET', `/installations/${first.body.objectId}`, { master: true })).body).toMatchObject({ code: 101 });
    // The installationId of the request's header counts as an id field but is not written (Parse Server's handleInstallation).
    const fromHeader = await install({ deviceType: 'web' }, { 'X-Parse-Installation-Id': 'a1b2c3d4-0000-4000-8000-000000000003' });
    expect(fromHeader.status).toBe(201);
    expect((await app.call('GET', `/installations/${fromHeader.body.objectId}`, { master: true })).body).not.toHaveProperty('installationId');
    // A row holding only a token meets the row of an installationId: the token's row is kept and gets the id.
    const idOnly = await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000004', deviceType: 'ios', channels: ['a'] });
    const tokenOnly = await install({ deviceType: 'ios', deviceToken: 'tok-4', badge: 2 });
    const merged = await install({ installationId: 'a1b2c3d4-0000-4000-8000-000000000004', deviceType: 'ios', deviceToken: 'tok-4' });
    expect(merged).toMatchObject({ status: 200, body: { objectId: tokenOnly.body.objectId } });
    expect((await app.call('GET', `/installations/${tokenOnly.body.objectId}`, { master: true })).body).toMatchObject({ installationId: 'a1b2c3d4-0000-4000-8000-000000000004', deviceToken: 'tok-4', badge: 2 });
    expect((await app.call('GET', `/installations/${idOnly.body.objectId}`, { master: true })).body).toMatchObject({ code: 101 });
    await app.call('DELETE', `/installations/${tokenOnly.body.objectId}`, { master: true });
    // Clients may not list installations.
    expect((await app.call('GET', '/installations')).body).toMatchObject({ code: 119 });
    for (const id of [second.body.objectId, fromHeader.body.objectId]) await app.call('DELETE', `/installations/${id}`, { master: true });
  });
});

describe('push', () => {
  it('delivers to iOS, Android and web installations of a channel, and records sent and failed devices on _PushStatus', async () => {
    const devices = [
      { installationId: 'b0000000-0000-4000-8000-000000000001', deviceType: 'ios', deviceToken: services.apns.validToken.toUpperCase(), channels: ['giants'] },
      { installationId: 'b0000000-0000-4000-8000-000000000002', deviceType: 'ios', deviceToken: 'f'.repeat(64), channels: ['giants'] },
      { installationId: 'b0000000-0000-4000-8000-000000000003', deviceType: 'android', deviceToken: services.fcm.validToken, channels: ['giants'] },
      { installationId: 'b0000000-0000-4000-8000-000000000004', deviceType: 'web', deviceToken: services.web.subscription, channels: ['giants'] },
      { installationId: 'b0000000-0000-4000-8000-000000000005', deviceType: 'android', deviceToken: 'other-channel', channels: ['mets'] },
    ];
    for (const device of devices) expect((await new Parse.Installation(device).save()).id).toBeTruthy();

    const statusId = await Parse.Push.send({ channels: ['giants'], data: { alert: 'The Giants won!', title: 'Score', badge: 'Increment', sound: 'cheer.caf' } }, { useMasterKey: true });
    expect(typeof statusId).toBe('string');
    const status = await until(() => Parse.Push.getPushStatus(statusId as unknown as string, { useMasterKey: true }), (s) => s.get('status') === 'succeeded');
    expect(status.get('status')).toBe('succeeded');
    expect(status.get('numSent')).toBe(3);
    expect(status.get('numFailed')).toBe(1);
    expect(status.get('sentPerType')).toEqual({ ios: 1, android: 1, web: 1 });
    expect(status.get('failedPerType')).toEqual({ ios: 1 });
    expect(status.get('errorMessage')).toEqual({ failures: [{ deviceType: 'ios', error: 'BadDeviceToken', count: 1 }] });
    expect(JSON.parse(status.get('payload') as string)).toMatchObject({ alert: 'The Giants won!' });

    expect(services.apns.received).toEqual([{ token: services.apns.validToken, topic: 'com.example.backyard', payload: { aps: { alert: { title: 'Score', body: 'The Giants won!' }, badge: 1, sound: 'cheer.caf' } } }]);
    expect(services.fcm.received).toEqual([expect.objectContaining({ token: services.fcm.validToken, notification: { title: 'Score', body: 'The Giants won!' } })]);
    expect(services.web.received).toEqual([{ alert: 'The Giants won!', title: 'Score', badge: 'Increment', sound: 'cheer.caf' }]);
    // The badge was incremented on the installation.
    const ios = await new Parse.Query(Parse.Installation).equalTo('installationId', devices[0]!.installationId).first({ useMasterKey: true });
    expect(ios!.get('badge')).toBe(1);
  });

  it('the dashboard lists the pushes with what each delivered and why the others failed', async () => {
    const cookie = await dashboardCookie(server);
    const text = await (await fetch(`${server.url}/dashboard/apps/${app.appId}/push`, { headers: { cookie } })).text();
    expect(text).toContain('Score: The Giants won!');
    for (const sent of ['ios 1', 'android 1', 'web 1']) expect(text).toContain(sent);
    expect(text).toContain('<li>ios: BadDeviceToken (1)</li>');
  });

  it('needs the master key and the app\'s push setting, and refuses what Parse Server refuses', async () => {
    expect(await app.call('POST', '/push', { body: { channels: ['x'], data: { alert: 'hi' } } })).toMatchObject({ status: 403, body: { code: 119 } });
    expect((await app.call('POST', '/push', { master: true, body: { channels: ['x'], where: {}, data: { alert: 'hi' } } })).body).toEqual({ code: 115, error: 'Channels and query can not be set at the same time.' });
    expect((await app.call('POST', '/push', { master: true, body: { data: { alert: 'hi' } } })).body).toEqual({ code: 115, error: 'Sending a push requires either "channels" or a "where" query.' });
    const other = await createTestApp(server);
    expect((await other.call('POST', '/push', { master: true, body: { channels: ['x'], data: { alert: 'hi' } } })).body).toMatchObject({ code: 115, error: expect.stringContaining('Missing push configuration') });
  });

  it('a web subscription whose endpoint is on a loopback address the operator did not allow is not sent to', async () => {
    let asked = 0;
    const inside = http.createServer((_req, res) => {
      asked++;
      res.writeHead(201).end();
    });
    await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
    try {
      const subscription = JSON.parse(services.web.subscription) as { endpoint: string };
      subscription.endpoint = `http://127.0.0.1:${(inside.address() as AddressInfo).port}/push/x`;
      await new Parse.Installation({ installationId: 'c0000000-0000-4000-8000-000000000001', deviceType: 'web', deviceToken: JSON.stringify(subscription), channels: ['inside'] }).save();
      const statusId = await Parse.Push.send({ channels: ['inside'], data: { alert: 'hi' } }, { useMasterKey: true });
      const status = await until(() => Parse.Push.getPushStatus(statusId as unknown as string, { useMasterKey: true }), (s) => s.get('status') === 'succeeded');
      expect(status.get('numFailed')).toBe(1);
      expect(JSON.stringify(status.get('errorMessage'))).toContain('is not a public address');
      expect(asked).toBe(0);
    } finally {
      await new Promise((resolve) => inside.close(resolve));
    }
  });

  it("an FCM token_uri on an allowed host that redirects to loopback or a private address: refused, and the service account's JWT goes nowhere", async () => {
    const other = await createTestApp(server);
    const android = services.fcm.settings as { firebaseServiceAccount: Record<string, unknown>; url: string };
    const targets = [`${trap.url}/token`, `http://localhost:${trap.port}/token`, `http://[::ffff:7f00:1]:${trap.port}/token`, `http://[::7f00:1]:${trap.port}/token`, 'http://10.0.0.7/token'];
    let device = 0;
    for (const status of [301, 302, 307, 308]) {
      for (const target of targets) {
        const tokenUri = redirector.to(target, status);
        await server.platform.services.backendApps.configure(other.appId, { push: { android: { ...android, firebaseServiceAccount: { ...android.firebaseServiceAccount, token_uri: tokenUri } } } });
        const channel = `redirect-${++device}`;
        await other.call('POST', '/installations', { body: { installationId: `d0000000-0000-4000-8000-${String(device).padStart(12, '0')}`, deviceType: 'android', deviceToken: services.fcm.validToken, channels: [channel] } });
        const sent = await other.call('POST', '/push', { master: true, body: { channels: [channel], data: { alert: 'hi' } } });
        const statusId = sent.headers.get('x-parse-push-status-id')!;
        const record = await until(
          async () => (await other.call('GET', `/classes/_PushStatus/${statusId}`, { master: true })).body as Record<string, unknown>,
          (r) => r.status === 'succeeded' || r.status === 'failed',
        );
        expect(record, `${status} → ${target}`).toMatchObject({ numSent: 0, numFailed: 1 });
        expect(JSON.stringify(record.errorMessage), `${status} → ${target}`).toContain('is not a public address');
      }
    }
    expect(redirector.hits).toBe(20);
    expect(trap.hits).toBe(0);
  });
});

describe('push audiences', () => {
  it('a push sent with audience_id counts a use of that audience (lastUsed, timesUsed), as Parse Server does', async () => {
    const created = await app.call('POST', '/push_audiences', { master: true, body: { name: 'Nobody', query: JSON.stringify({ deviceType: 'none-such' }) } });
    expect(created.status).toBe(201);
    const id = created.body.objectId as string;
    const sent = await app.call('POST', '/push', { master: true, body: { where: { deviceType: 'none-such' }, data: { alert: 'hi' }, audience_id: id } });
    expect(sent.status).toBe(200);
    const used = await until(
      () => app.call('GET', `/push_audiences/${id}`, { master: true }),
      (a) => a.body.timesUsed === 1,
    );
    expect(used.body).toMatchObject({ name: 'Nobody', query: { deviceType: 'none-such' }, timesUsed: 1, lastUsed: { __type: 'Date', iso: expect.any(String) } });
    expect(Date.parse(used.body.lastUsed.iso)).toBeGreaterThanOrEqual(Date.parse(created.body.createdAt));
    // An audience_id naming no audience leaves the push as it is.
    expect((await app.call('POST', '/push', { master: true, body: { where: { deviceType: 'none-such' }, data: { alert: 'hi' }, audience_id: 'nonexistent' } })).status).toBe(200);
  });
});
