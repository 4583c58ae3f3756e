import fs from 'node:fs';
import path from 'node:path';
import Parse from 'parse/node';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { MAX_SUBSCRIPTIONS } from '../src/data/livequery/server.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * LiveQuery through the real Parse JS SDK (`query.subscribe()`, which opens
 * `ws://<host>/data`): each event type, ACLs and class-level permissions honoured, protected fields
 * kept out of a subscription's `where`, `keys`, and events from every write path.
 */
type Event = { op: string; object: Parse.Object; original?: Parse.Object };

let server: TestServer;
let app: TestApp;
let alice: Parse.User;
let bob: Parse.User;

/** The events of a subscription, in order, read one at a time. */
function events(subscription: Parse.LiveQuerySubscription): () => Promise<Event> {
  const queue: Event[] = [];
  const waiting: Array<(e: Event) => void> = [];
  const push = (e: Event) => (waiting.length ? waiting.shift()!(e) : queue.push(e));
  for (const op of ['create', 'update', 'enter', 'leave', 'delete']) {
    subscription.on(op as 'create', (object: Parse.Object, original?: Parse.Object) => push({ op, object, original: original instanceof Parse.Object ? original : undefined }));
  }
  return () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise<Event>((resolve) => waiting.push(resolve)));
}

const saveAsMaster = (className: string, body: Record<string, unknown>) => app.call('POST', `/classes/${className}`, { body, master: true });

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
  await server.platform.services.backendApps.configure(app.appId, { 'liveQuery.classNames': ['Message', '_User', 'Guarded', 'Hooked'], protectedFields: { Message: { '*': ['secret'] } } });
  // Cloud code's beforeSubscribe: only signed-in users follow Guarded, and only their own objects.
  const main = path.join(server.home, 'apps', app.appId, 'cloud', 'cloud', 'main.js');
  fs.mkdirSync(path.dirname(main), { recursive: true });
  fs.writeFileSync(
    main,
    "Parse.Cloud.beforeSubscribe('Guarded', (request) => {\n" +
      "  if (!request.user) throw new Parse.Error(141, 'Sign in to follow Guarded.');\n" +
      "  request.query.equalTo('owner', request.user.id);\n" +
      '});\n' +
      // afterLiveQueryEvent: secret objects are not sent; the others are sent decorated, with who received them.
      "Parse.Cloud.afterLiveQueryEvent('Hooked', (request) => {\n" +
      "  if (request.object.get('secret')) { request.sendEvent = false; return; }\n" +
      "  request.object.set('decorated', request.event + ' for ' + (request.user ? request.user.get('username') : 'nobody'));\n" +
      '});\n' +
      // onLiveQueryEvent: each subscribe is recorded.
      "Parse.Cloud.onLiveQueryEvent(async ({ event, subscriptions }) => {\n" +
      "  if (event === 'subscribe') await new Parse.Object('LiveQueryLog').save({ event, subscriptions }, { useMasterKey: true });\n" +
      '});\n',
  );
  await server.platform.services.cloud.reload(app.appId);
  // No master key here: the SDK would send it when connecting, and the subscriber would see everything.
  Parse.initialize(app.appId, app.keys.javascriptKey);
  Parse.serverURL = app.apiURL;
  alice = await Parse.User.signUp('alice', 'alice-pw', {});
  bob = await Parse.User.signUp('bob', 'bob-pw', {});
});

afterAll(async () => {
  await Parse.LiveQuery.close();
  await server?.close();
});

describe('LiveQuery with the JS SDK', () => {
  it('a password set through a reset link reaches subscribers as an update of the user', async () => {
    const carol = await Parse.User.signUp('carol-lq', 'carol-pw', { email: 'carol-lq@example.com' });
    const subscription = await new Parse.Query(Parse.User).equalTo('username', 'carol-lq').subscribe(carol.getSessionToken());
    const next = events(subscription);
    const errors: string[] = [];
    subscription.on('error', (error: string) => errors.push(error));
    await app.call('POST', '/requestPasswordReset', { body: { email: 'carol-lq@example.com' } });
    let link: string | undefined;
    for (const deadline = Date.now() + 10_000; !link && Date.now() < deadline; ) {
      const [mail] = await server.platform.services.dataApi.apps.mails(app.appId);
      link = mail && /https?:\/\/\S+/.exec(mail.text)?.[0];
      if (!link) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const token = new URL(link!).searchParams.get('token')!;
    const reset = await fetch(link!.split('?')[0]!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, new_password: 'carol-pw-2', confirm_password: 'carol-pw-2' }).toString(),
    });
    expect(reset.status).toBe(200);
    const updated = await next();
    expect(updated.op).toBe('update');
    expect(updated.object.id).toBe(carol.id);
    expect(updated.object.get('password')).toBeUndefined();
    // The reset ended carol's sessions (revokeSessionOnPasswordReset), that of the subscription too.
    await expect.poll(() => errors, { timeout: 10_000 }).toEqual(['Invalid session token']);
    await subscription.unsubscribe();
  });

  it("cloud code's afterLiveQueryEvent may change or withhold an event, and onLiveQueryEvent hears subscriptions", async () => {
    const subscription = await new Parse.Query('Hooked').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await saveAsMaster('Hooked', { secret: true, n: 1 });
    await saveAsMaster('Hooked', { n: 2 });
    const received = await next();
    expect(received.op).toBe('create');
    expect(received.object.get('n')).toBe(2);
    expect(received.object.get('decorated')).toBe('create for alice');
    // onLiveQueryEvent is not waited for: its record comes when it comes.
    let logged = 0;
    for (const deadline = Date.now() + 10_000; logged === 0 && Date.now() < deadline; ) {
      logged = (await app.call('GET', `/classes/LiveQueryLog?${new URLSearchParams({ where: '{"event":"subscribe"}' })}`, { master: true })).body.results?.length ?? 0;
      if (!logged) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logged).toBeGreaterThanOrEqual(1);
    await subscription.unsubscribe();
  });

  it('sends create, update, leave, enter and delete to a subscriber, with the original where Parse sends one', async () => {
    const query = new Parse.Query('Message').equalTo('room', 'a');
    const subscription = await query.subscribe(alice.getSessionToken());
    const next = events(subscription);

    const message = await new Parse.Object('Message').save({ room: 'a', text: 'hi' }, { sessionToken: bob.getSessionToken() });
    const created = await next();
    expect(created.op).toBe('create');
    expect(created.object.id).toBe(message.id);
    expect(created.object.get('text')).toBe('hi');

    await message.save({ text: 'hello' }, { sessionToken: bob.getSessionToken() });
    const updated = await next();
    expect(updated.op).toBe('update');
    expect(updated.object.get('text')).toBe('hello');
    expect(updated.original?.get('text')).toBe('hi');

    await message.save({ room: 'b' }, { sessionToken: bob.getSessionToken() });
    expect((await next()).op).toBe('leave');
    await message.save({ room: 'a' }, { sessionToken: bob.getSessionToken() });
    const entered = await next();
    expect(entered.op).toBe('enter');
    expect(entered.original?.get('room')).toBe('b');

    await message.destroy({ sessionToken: bob.getSessionToken() });
    const deleted = await next();
    expect(deleted.op).toBe('delete');
    expect(deleted.object.id).toBe(message.id);
    await subscription.unsubscribe();
  });

  it('tells a subscriber nothing about an object its ACL hides, and sends it once the ACL lets the subscriber read it', async () => {
    const subscription = await new Parse.Query('Message').equalTo('room', 'acl').subscribe(alice.getSessionToken());
    const next = events(subscription);
    const onlyBob = new Parse.ACL(bob);
    const hidden = await new Parse.Object('Message').save({ room: 'acl', text: 'for bob', ACL: onlyBob }, { sessionToken: bob.getSessionToken() });
    await hidden.save({ text: 'still for bob' }, { sessionToken: bob.getSessionToken() });
    await new Parse.Object('Other').save({ room: 'acl' }, { sessionToken: bob.getSessionToken() });
    // Events arrive in order on one connection: the first one alice gets is this public one.
    const visible = await new Parse.Object('Message').save({ room: 'acl', text: 'for all' }, { sessionToken: bob.getSessionToken() });
    const first = await next();
    expect(first.op).toBe('create');
    expect(first.object.id).toBe(visible.id);

    // Made readable to alice, the hidden object enters her view; hidden again, it leaves.
    const shared = new Parse.ACL(bob);
    shared.setReadAccess(alice, true);
    await hidden.save({ ACL: shared }, { sessionToken: bob.getSessionToken() });
    const entered = await next();
    expect([entered.op, entered.object.id]).toEqual(['enter', hidden.id]);
    await subscription.unsubscribe();
  });

  it('streams only the classes of the app\'s liveQuery.classNames', async () => {
    const subscription = await new Parse.Query('Note').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await new Parse.Object('Note').save({ n: 1 }, { sessionToken: bob.getSessionToken() });
    await server.platform.services.backendApps.configure(app.appId, { 'liveQuery.classNames': ['Message', '_User', 'Guarded', 'Note'] });
    const streamed = await new Parse.Object('Note').save({ n: 2 }, { sessionToken: bob.getSessionToken() });
    const first = await next();
    expect([first.op, first.object.id, first.object.get('n')]).toEqual(['create', streamed.id, 2]);
    await subscription.unsubscribe();
  });

  it('hides protected fields from events and refuses them in a subscription\'s where', async () => {
    await expect(new Parse.Query('Message').equalTo('secret', 'x').subscribe(alice.getSessionToken())).rejects.toMatchObject({ code: 119 });
    const subscription = await new Parse.Query('Message').equalTo('room', 'secret').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await new Parse.Object('Message').save({ room: 'secret', secret: 'do not tell', text: 'visible' }, { sessionToken: bob.getSessionToken() });
    const created = await next();
    expect(created.object.get('text')).toBe('visible');
    expect(created.object.has('secret')).toBe(false);
    await subscription.unsubscribe();
  });

  it('sends only the keys asked for', async () => {
    const subscription = await new Parse.Query('Message').equalTo('room', 'keys').select('text').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await new Parse.Object('Message').save({ room: 'keys', text: 'kept', extra: 'dropped' }, { sessionToken: bob.getSessionToken() });
    const created = await next();
    expect(created.object.get('text')).toBe('kept');
    expect(created.object.has('extra')).toBe(false);
    await subscription.unsubscribe();
  });

  it('sends changes made through every write path: the master key, callBackendAPI and batches', async () => {
    const subscription = await new Parse.Query('Message').equalTo('room', 'paths').subscribe(alice.getSessionToken());
    const next = events(subscription);
    expect((await saveAsMaster('Message', { room: 'paths', via: 'master' })).status).toBe(201);
    expect((await next()).object.get('via')).toBe('master');
    const responses = await server.platform.services.dataApi.call(app.appId, [{ method: 'POST', url: '/classes/Message', body: { room: 'paths', via: 'callBackendAPI' } }]);
    expect(responses[0]!.code).toBe(201);
    expect((await next()).object.get('via')).toBe('callBackendAPI');
    const batch = await app.call('POST', '/batch', { body: { requests: [{ method: 'POST', path: '/data/classes/Message', body: { room: 'paths', via: 'batch' } }] } });
    expect(batch.status).toBe(200);
    expect((await next()).object.get('via')).toBe('batch');
    // A transactional batch: its objects once it commits; nothing of one that rolls back.
    const failed = await app.call('POST', '/batch', {
      body: { transaction: true, requests: [{ method: 'POST', path: '/data/classes/Message', body: { room: 'paths', via: 'rolled back' } }, { method: 'PUT', path: '/data/classes/Message/nope', body: {} }] },
    });
    expect(failed.status).not.toBe(200);
    const committed = await app.call('POST', '/batch', { body: { transaction: true, requests: [{ method: 'POST', path: '/data/classes/Message', body: { room: 'paths', via: 'transaction' } }] } });
    expect(committed.status).toBe(200);
    expect((await next()).object.get('via')).toBe('transaction');
    await subscription.unsubscribe();
  });

  it("runs cloud code's beforeSubscribe, which may refuse a subscription or narrow its query", async () => {
    await expect(new Parse.Query('Guarded').subscribe()).rejects.toMatchObject({ code: 141, message: 'Sign in to follow Guarded.' });
    const subscription = await new Parse.Query('Guarded').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await new Parse.Object('Guarded').save({ owner: bob.id }, { sessionToken: bob.getSessionToken() });
    const own = await new Parse.Object('Guarded').save({ owner: alice.id }, { sessionToken: bob.getSessionToken() });
    const first = await next();
    expect([first.op, first.object.id]).toEqual(['create', own.id]);
    await subscription.unsubscribe();
  });

  it('refuses what it cannot match: an operator that needs other objects answers 102', async () => {
    const inner = new Parse.Query('Other');
    await expect(new Parse.Query('Message').matchesQuery('other', inner).subscribe(alice.getSessionToken())).rejects.toMatchObject({ code: 102 });
  });

  it("matches a subscriber's $regex in linear time, in the query dialect, and refuses backreferences with 102", async () => {
    // A backtracking engine takes seconds on `^(a+)+$` against 29 a's and a `!`, for every save.
    const subscription = await new Parse.Query('Message').matches('text', '^(a+)+$').subscribe(alice.getSessionToken());
    const next = events(subscription);
    await new Parse.Object('Message').save({ room: 'regex', text: `${'a'.repeat(5000)}!` }, { sessionToken: bob.getSessionToken() });
    const matching = await new Parse.Object('Message').save({ room: 'regex', text: 'a'.repeat(5000) }, { sessionToken: bob.getSessionToken() });
    const created = await next();
    expect([created.op, created.object.id]).toEqual(['create', matching.id]);
    await subscription.unsubscribe();
    // The x option is honoured as in a query.
    const extended = await new Parse.Query('Message').matches('text', '^ b  c # comment', 'x').subscribe(alice.getSessionToken());
    const nextExtended = events(extended);
    const bc = await new Parse.Object('Message').save({ room: 'regex', text: 'bc' }, { sessionToken: bob.getSessionToken() });
    expect((await nextExtended()).object.id).toBe(bc.id);
    await extended.unsubscribe();
    await expect(new Parse.Query('Message').matches('text', '(a)\\1').subscribe(alice.getSessionToken())).rejects.toMatchObject({
      code: 102,
      message: 'Invalid query.where.text.$regex: backreferences (\\1) are not supported: they need a backtracking engine',
    });
    await expect(new Parse.Query('Message').matches('text', 'a(?=b)').subscribe(alice.getSessionToken())).rejects.toMatchObject({ code: 102 });
  });
});

describe('the LiveQuery protocol over a plain WebSocket', () => {
  /** Opens `ws://<host>/data`, sends `messages` in turn and collects what comes back, until `count` answers. */
  async function exchange(messages: unknown[], count: number): Promise<Array<Record<string, unknown>>> {
    const socket = new WebSocket(`${app.apiURL.replace(/^http/, 'ws')}`);
    const answers: Array<Record<string, unknown>> = [];
    await new Promise<void>((resolve, reject) => {
      socket.on('open', () => messages.forEach((m) => socket.send(typeof m === 'string' ? m : JSON.stringify(m))));
      socket.on('message', (data) => {
        answers.push(JSON.parse(data.toString()) as Record<string, unknown>);
        if (answers.length === count) resolve();
      });
      socket.on('error', reject);
    });
    socket.close();
    return answers;
  }

  it('refuses a connect with a key that is not the app\'s, and anything before connect', async () => {
    expect(await exchange([{ op: 'connect', applicationId: app.appId, javascriptKey: 'wrong' }], 1)).toEqual([
      { op: 'error', code: 4, error: 'Invalid application ID or key.', reconnect: false },
    ]);
    const [early] = await exchange([{ op: 'subscribe', requestId: 1, query: { className: 'Message', where: {} } }], 1);
    expect(early).toMatchObject({ op: 'error', requestId: 1, error: expect.stringContaining('connect') });
    const [garbage] = await exchange(['not json'], 1);
    expect(garbage).toMatchObject({ op: 'error', code: 107 });
    let deep: unknown = 'x';
    for (let i = 0; i < 2000; i++) deep = [deep];
    const [tooDeep] = await exchange([{ op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey, x: deep }], 1);
    expect(tooDeep).toMatchObject({ op: 'error', code: 107, error: expect.stringContaining('nesting at most 128 levels') });
  });

  it(`refuses a subscription beyond ${MAX_SUBSCRIPTIONS} on one connection, naming the limit`, async () => {
    const subscribes = Array.from({ length: MAX_SUBSCRIPTIONS + 1 }, (_, i) => ({ op: 'subscribe', requestId: i + 1, query: { className: 'Message', where: { n: i } } }));
    const answers = await exchange([{ op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey }, ...subscribes], MAX_SUBSCRIPTIONS + 2);
    expect(answers.filter((a) => a.op === 'subscribed')).toHaveLength(MAX_SUBSCRIPTIONS);
    expect(answers.at(-1)).toMatchObject({ op: 'error', requestId: MAX_SUBSCRIPTIONS + 1, code: 102, error: expect.stringContaining(`at most ${MAX_SUBSCRIPTIONS} subscriptions`) });
  });

  it('answers connected, subscribed and unsubscribed, and names an unknown subscription', async () => {
    const answers = await exchange(
      [
        { op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey },
        { op: 'subscribe', requestId: 7, query: { className: 'Message', where: { room: 'x' } } },
        { op: 'unsubscribe', requestId: 7 },
        { op: 'unsubscribe', requestId: 7 },
      ],
      4,
    );
    expect(answers[0]).toMatchObject({ op: 'connected', clientId: expect.any(Number) });
    expect(answers[1]).toMatchObject({ op: 'subscribed', requestId: 7 });
    expect(answers[2]).toMatchObject({ op: 'unsubscribed', requestId: 7 });
    expect(answers[3]).toMatchObject({ op: 'error', requestId: 7, error: 'There is no subscription with requestId 7 on this connection.' });
  });
});

/** A user signed up through the data API, with its session token. */
async function signUp(on: TestApp, username: string): Promise<{ objectId: string; sessionToken: string }> {
  const { status, body } = await on.call('POST', '/users', { body: { username, password: `${username}-pw` } });
  expect(status).toBe(201);
  return body as { objectId: string; sessionToken: string };
}

/** A LiveQuery connection over a plain WebSocket: what it was sent, in order, and a wait for a message. */
async function liveSocket(on: TestApp): Promise<{
  messages: Array<Record<string, unknown>>;
  send(message: unknown): void;
  /** The first message matching `pattern` (toMatchObject), once it has come; fails after 20 s. */
  until(pattern: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): void;
}> {
  const socket = new WebSocket(on.apiURL.replace(/^http/, 'ws'));
  const messages: Array<Record<string, unknown>> = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
  await new Promise<void>((resolve, reject) => socket.on('open', resolve).on('error', reject));
  const matching = (pattern: Record<string, unknown>) => messages.find((m) => Object.entries(pattern).every(([k, v]) => JSON.stringify(m[k]) === JSON.stringify(v)));
  return {
    messages,
    send: (message) => socket.send(JSON.stringify(message)),
    until: async (pattern) => {
      await expect.poll(() => matching(pattern), { timeout: 20_000, interval: 20 }).toBeDefined();
      return matching(pattern)!;
    },
    close: () => socket.close(),
  };
}

const INVALID_SESSION = { op: 'error', error: 'Invalid session token', code: 209, reconnect: false };

describe('LiveQuery and sessions that end', () => {
  const endings: Array<[string, (user: { objectId: string; sessionToken: string }) => Promise<void>]> = [
    ['logged out through the data API', async ({ sessionToken }) => expect((await app.call('POST', '/logout', { sessionToken })).status).toBe(200)],
    [
      'deleted with the master key',
      async ({ sessionToken }) => {
        const { body } = await app.call('GET', '/sessions/me', { sessionToken });
        expect((await app.call('DELETE', `/classes/_Session/${body.objectId}`, { master: true })).status).toBe(200);
      },
    ],
    [
      'revoked by a password change',
      async ({ objectId, sessionToken }) => {
        const changed = await app.call('PUT', `/users/${objectId}`, { body: { password: 'another-pw' }, sessionToken });
        expect(changed.status).toBe(200);
        expect(changed.body.sessionToken).not.toBe(sessionToken);
      },
    ],
  ];

  it.each(endings)('a subscriber whose session was %s gets 209 and no further event', async (how, end) => {
    const room = `ended-${how.split(' ')[0]}`;
    const user = await signUp(app, `lq-${room}`);
    const followed = await new Parse.Query('Message').equalTo('room', room).subscribe(user.sessionToken);
    const received: Event[] = [];
    const errors: string[] = [];
    followed.on('create', (object: Parse.Object) => received.push({ op: 'create', object }));
    followed.on('error', (error: string) => errors.push(error));
    // A control subscriber of the same query, whose session stays.
    const control = await new Parse.Query('Message').equalTo('room', room).subscribe(alice.getSessionToken());
    const controlNext = events(control);

    await saveAsMaster('Message', { room, n: 1 });
    expect((await controlNext()).object.get('n')).toBe(1);
    await expect.poll(() => received.map((e) => e.object.get('n')), { timeout: 10_000 }).toEqual([1]);

    await end(user);
    await expect.poll(() => errors, { timeout: 10_000 }).toEqual(['Invalid session token']);
    await saveAsMaster('Message', { room, n: 2 });
    // Once the control subscriber has the second change, the ended one would have had it too.
    expect((await controlNext()).object.get('n')).toBe(2);
    expect(received.map((e) => e.object.get('n'))).toEqual([1]);
    // The SDK's unsubscribe of the ended subscription is answered (it waits for that).
    await followed.unsubscribe();
    await control.unsubscribe();
  });

  it('a connection whose connect-level session token is logged out: its subscriptions end with 209, and it may not subscribe again without one', async () => {
    const user = await signUp(app, 'lq-connect-level');
    const revoked = await liveSocket(app);
    const control = await liveSocket(app);
    try {
      revoked.send({ op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey, sessionToken: user.sessionToken });
      control.send({ op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey });
      await revoked.until({ op: 'connected' });
      await control.until({ op: 'connected' });
      const query = { className: 'Message', where: { room: 'connect-level' } };
      revoked.send({ op: 'subscribe', requestId: 1, query });
      control.send({ op: 'subscribe', requestId: 1, query });
      await revoked.until({ op: 'subscribed', requestId: 1 });
      await control.until({ op: 'subscribed', requestId: 1 });

      // Only the user may read this one: the connection's token is what lets it through.
      const own = await app.call('POST', '/classes/Message', { body: { room: 'connect-level', n: 1, ACL: { [user.objectId]: { read: true } } }, master: true });
      expect((await revoked.until({ op: 'create', requestId: 1 })).object).toMatchObject({ objectId: own.body.objectId, n: 1 });

      expect((await app.call('POST', '/logout', { sessionToken: user.sessionToken })).status).toBe(200);
      expect(await revoked.until({ op: 'error' })).toEqual({ ...INVALID_SESSION, requestId: 1 });
      await saveAsMaster('Message', { room: 'connect-level', n: 2 });
      await expect.poll(() => control.messages.filter((m) => m.op === 'create').map((m) => (m.object as { n: number }).n), { timeout: 10_000 }).toEqual([2]);
      expect(revoked.messages.filter((m) => m.op === 'create').map((m) => (m.object as { n: number }).n)).toEqual([1]);

      revoked.send({ op: 'subscribe', requestId: 2, query });
      expect(await revoked.until({ op: 'error', requestId: 2 })).toMatchObject({ code: 209, error: 'Invalid session token' });
    } finally {
      revoked.close();
      control.close();
    }
  });

  it('a session that expires ends its subscriptions: the first event after its expiresAt is not sent', async () => {
    const user = await signUp(app, 'lq-expiring');
    const expiresAt = Date.now() + 1500;
    const made = await app.call('POST', '/sessions', { master: true, body: { user: { __type: 'Pointer', className: '_User', objectId: user.objectId }, expiresAt: { __type: 'Date', iso: new Date(expiresAt).toISOString() } } });
    expect(made.status).toBe(201);
    const expiring = await liveSocket(app);
    const control = await liveSocket(app);
    try {
      const query = { className: 'Message', where: { room: 'expiring' } };
      for (const socket of [expiring, control]) socket.send({ op: 'connect', applicationId: app.appId, javascriptKey: app.keys.javascriptKey });
      expiring.send({ op: 'subscribe', requestId: 3, query, sessionToken: made.body.sessionToken });
      control.send({ op: 'subscribe', requestId: 3, query });
      await expiring.until({ op: 'subscribed', requestId: 3 });
      await control.until({ op: 'subscribed', requestId: 3 });
      await saveAsMaster('Message', { room: 'expiring', n: 1 });
      await expiring.until({ op: 'create', requestId: 3 });
      await expect.poll(() => Date.now() > expiresAt + 50, { timeout: 10_000, interval: 50 }).toBe(true);
      await saveAsMaster('Message', { room: 'expiring', n: 2 });
      expect(await expiring.until({ op: 'error' })).toEqual({ ...INVALID_SESSION, requestId: 3 });
      await expect.poll(() => control.messages.filter((m) => m.op === 'create').length, { timeout: 10_000 }).toBe(2);
      expect(expiring.messages.filter((m) => m.op === 'create').map((m) => (m.object as { n: number }).n)).toEqual([1]);
    } finally {
      expiring.close();
      control.close();
    }
  });

  it('a session deleted where this process does not hear of it (a purge of _Session, as another process\'s logout) ends within the periodic re-check', async () => {
    // An app of its own: the purge takes every session of the app.
    const other = await createTestApp(server);
    await server.platform.services.backendApps.configure(other.appId, { 'liveQuery.classNames': ['Message'] });
    const user = await signUp(other, 'lq-purged');
    const subscriber = await liveSocket(other);
    try {
      subscriber.send({ op: 'connect', applicationId: other.appId, javascriptKey: other.keys.javascriptKey });
      subscriber.send({ op: 'subscribe', requestId: 1, query: { className: 'Message', where: {} }, sessionToken: user.sessionToken });
      await subscriber.until({ op: 'subscribed', requestId: 1 });
      await other.call('POST', '/classes/Message', { body: { n: 1 }, master: true });
      await subscriber.until({ op: 'create', requestId: 1 });
      expect((await other.call('DELETE', '/purge/_Session', { master: true })).status).toBe(200);
      expect(await subscriber.until({ op: 'error' })).toEqual({ ...INVALID_SESSION, requestId: 1 });
      await other.call('POST', '/classes/Message', { body: { n: 2 }, master: true });
      // The same connection, subscribed anew without a session, is sent the next change; the ended subscription is not.
      subscriber.send({ op: 'subscribe', requestId: 2, query: { className: 'Message', where: {} } });
      await subscriber.until({ op: 'subscribed', requestId: 2 });
      await other.call('POST', '/classes/Message', { body: { n: 3 }, master: true });
      await subscriber.until({ op: 'create', requestId: 2 });
      expect(subscriber.messages.filter((m) => m.op === 'create').map((m) => [m.requestId, (m.object as { n: number }).n])).toEqual([[1, 1], [2, 3]]);
    } finally {
      subscriber.close();
    }
  });
});
