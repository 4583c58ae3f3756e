/**
 * Per-Backend-App server options: Parse Server 9's names and
 * defaults, each option honoured where Parse Server honours it (through the real Parse JS SDK where it
 * reaches the feature, REST otherwise), and set with `backyard app config`, `backyard app import
 * --config/--set` (also next to a running server) and the Backend App service the dashboard uses.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeSettings, DEFAULT_SETTINGS, SETTING_KEYS, settingValue } from '../src/data/settings.js';
import { ManagementError } from '../src/errors.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { freePort, ServeProcess } from './helpers/serveProcess.js';
import { makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';

const exec = promisify(execFile);
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** A new app with `changes` applied to its options, and the SDK pointed at it (JavaScript key, master key known). */
async function appWith(changes: Record<string, unknown> = {}): Promise<TestApp> {
  const app = await createTestApp(server);
  if (Object.keys(changes).length) await server.platform.services.backendApps.configure(app.appId, changes);
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  (Parse as unknown as { serverURL: string }).serverURL = app.apiURL;
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
  return app;
}

const refusal = async (promise: Promise<unknown>): Promise<Parse.Error> => {
  try {
    await promise;
  } catch (error) {
    return error as Parse.Error;
  }
  throw new Error('expected the call to be refused');
};

const signUp = async (username: string) => {
  const user = new Parse.User();
  user.set({ username, password: 'secret-1' });
  await user.signUp();
  return user;
};

describe('the options and their defaults', () => {
  it("has Parse Server 9's defaults (read from its option definitions), but for allowClientClassCreation", async () => {
    const require = createRequire(import.meta.url);
    const { ParseServerOptions, FileUploadOptions, LiveQueryOptions } = require('parse-server/lib/Options/Definitions.js') as Record<string, Record<string, { default?: unknown }>>;
    for (const key of SETTING_KEYS) {
      const [head, leaf] = key.split('.') as [string, string | undefined];
      const parse = leaf ? (head === 'liveQuery' ? LiveQueryOptions : FileUploadOptions)![leaf]!.default : ParseServerOptions![head]!.default;
      const ours = settingValue(DEFAULT_SETTINGS, key);
      if (key === 'liveQuery.classNames') {
        // Parse Server has no list (no class streams); ours is the empty one.
        expect([parse, ours]).toEqual([undefined, []]);
      } else if (key === 'auth') {
        // Parse Server has no providers configured by default; ours is the empty object.
        expect([parse, ours]).toEqual([undefined, {}]);
      } else if (key === 'allowClientClassCreation') {
        expect([parse, ours]).toEqual([false, true]);
      } else if (key === 'emailVerifyTokenValidityDuration' || key === 'emailAdapter' || key === 'push') {
        // Unset in Parse Server; null here (links last until used; the server's SMTP or the outbox; no push).
        expect([parse, ours]).toEqual([undefined, null]);
      } else if (key === 'maxLimit') {
        expect([parse, ours]).toEqual([undefined, null]);
      } else {
        expect(ours, key).toEqual(parse);
      }
    }
  });

  it('refuses an unknown name or a bad value, naming it, and applies nothing', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ maxLimit: 'many' }, 'maxLimit', /maxLimit must be a whole number of at least 1; got "many"/],
      [{ maxLimit: 0 }, 'maxLimit', /at least 1; got 0/],
      [{ sessionLength: -5 }, 'sessionLength', /sessionLength must be a number of seconds above 0/],
      [{ 'fileUpload.enableForPublic': 'yes' }, 'fileUpload.enableForPublic', /fileUpload\.enableForPublic must be true or false; got "yes"/],
      [{ 'fileUpload.fileExtensions': ['png', '('] }, 'fileUpload.fileExtensions.1', /not a valid regular expression/],
      [{ 'fileUpload.fileExtensions': ['^(a)\\1$'] }, 'fileUpload.fileExtensions.0', /holds "\^\(a\)\\\\1\$", which is not a valid regular expression here: backreferences \(\\1\) are not supported/],
      [{ 'fileUpload.fileExtensions': ['^(?<=a)png'] }, 'fileUpload.fileExtensions.0', /lookbehind \(\(\?<= and \(\?<!\) is not supported/],
      [{ fileUpload: { enableForPublic: true, enableForEveryone: true } }, 'fileUpload.enableForEveryone', /There is no setting "fileUpload\.enableForEveryone"/],
      [{ maxlimit: 5 }, 'maxlimit', /There is no setting "maxlimit"\. The settings are allowClientClassCreation, /],
      [{ protectedFields: { Person: { ' x': ['ssn'] } } }, 'protectedFields.Person', /' x' is not a valid key/],
      [{ protectedFields: { 'bad-class': { '*': [] } } }, 'protectedFields.bad-class', /protectedFields\.bad-class is not a class name/],
    ];
    for (const [change, key, message] of cases) {
      const overrides = { enforcePrivateUsers: false };
      let thrown: unknown;
      try {
        changeSettings(overrides, { defaultLimit: 7, ...change });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, key).toMatchObject({ name: 'SettingsError', key });
      expect((thrown as Error).message).toMatch(message);
      expect(overrides).toEqual({ enforcePrivateUsers: false });
    }
  });

  it('stores only what an owner set; null puts an option back to its default', async () => {
    const { backendApps } = server.platform.services;
    const app = await createTestApp(server);
    expect(await backendApps.serverSettings(app.appId)).toEqual({ settings: DEFAULT_SETTINGS, overrides: {} });
    const set = await backendApps.configure(app.appId, { maxLimit: 5, 'fileUpload.enableForPublic': true });
    expect(set.overrides).toEqual({ maxLimit: 5, fileUpload: { enableForPublic: true } });
    expect(set.settings.fileUpload).toEqual({ ...DEFAULT_SETTINGS.fileUpload, enableForPublic: true });
    await expect(backendApps.configure(app.appId, { defaultLimit: 3, maxLimit: -1 })).rejects.toThrow(ManagementError);
    expect((await backendApps.serverSettings(app.appId))!.overrides).toEqual({ maxLimit: 5, fileUpload: { enableForPublic: true } });
    expect((await backendApps.configure(app.appId, { maxLimit: null, 'fileUpload.enableForPublic': null })).overrides).toEqual({});
    await backendApps.configure(app.appId, { fileUpload: { enableForPublic: true, enableForAuthenticatedUser: false } });
    expect((await backendApps.configure(app.appId, { fileUpload: null })).overrides).toEqual({});
    await expect(backendApps.configure(app.appId, { fileUpload: true })).rejects.toThrow(/fileUpload must be an object such as/);
    await expect(backendApps.configure('NoSuchApp', { maxLimit: 5 })).rejects.toThrow(/No Backend App has the application id "NoSuchApp"/);
  });
});

describe('queries: maxLimit and defaultLimit', () => {
  it('maxLimit caps what a query asks for, and the default limit too', async () => {
    const app = await appWith({ maxLimit: 5 });
    await Parse.Object.saveAll(Array.from({ length: 8 }, (_, i) => new Parse.Object('Item', { i })));
    expect(await new Parse.Query('Item').limit(100).find()).toHaveLength(5);
    expect(await new Parse.Query('Item').limit(3).find()).toHaveLength(3);
    expect((await app.call('GET', '/classes/Item')).body.results).toHaveLength(5);
    expect((await app.call('GET', '/classes/Item?limit=100', { master: true })).body.results).toHaveLength(5);
    expect(await new Parse.Query('Item').count()).toBe(8);
  });

  it('defaultLimit sets the size of a query without a limit', async () => {
    const app = await appWith({ defaultLimit: 3 });
    await Parse.Object.saveAll(Array.from({ length: 5 }, (_, i) => new Parse.Object('Item', { i })));
    expect(await new Parse.Query('Item').find()).toHaveLength(3);
    expect((await app.call('GET', '/classes/Item?limit=4')).body.results).toHaveLength(4);
  });
});

describe('allowClientClassCreation', () => {
  it('off: a client may not create, update or query a class that does not exist (119); the master key may', async () => {
    await appWith({ allowClientClassCreation: false });
    const created = await refusal(new Parse.Object('Fresh', { a: 1 }).save());
    expect([created.code, created.message]).toEqual([119, 'This user is not allowed to access non-existent class: Fresh']);
    expect((await refusal(new Parse.Query('Fresh').find())).code).toBe(119);
    expect((await refusal(new Parse.Query('Fresh').get('abcdefghij'))).code).toBe(119);
    const made = await new Parse.Object('Fresh', { a: 1 }).save(null, { useMasterKey: true });
    // Once the class exists, clients write and read it as usual, new fields included.
    await new Parse.Object('Fresh', { a: 2, b: 'new field' }).save();
    expect(await new Parse.Query('Fresh').count()).toBe(2);
    expect(made.id).toMatch(/^[A-Za-z0-9]{10}$/);
    // System classes are not "created" by clients: signup works.
    expect((await signUp('carol')).id).toBeTruthy();
  });

  it('on (the default): a client creates a class by saving its first object', async () => {
    await appWith();
    const saved = await new Parse.Object('Fresh', { a: 1 }).save();
    expect(saved.id).toMatch(/^[A-Za-z0-9]{10}$/);
  });
});

describe('users and sessions', () => {
  it('enforcePrivateUsers (default on): a new user has no public read; off: public read', async () => {
    const app = await appWith();
    const user = await signUp('dana');
    const stored = (await app.call('GET', `/users/${user.id}`, { master: true })).body;
    expect(stored.ACL).toEqual({ [user.id!]: { read: true, write: true } });
    expect((await app.call('GET', `/users/${user.id}`)).status).toBe(404);

    const open = await appWith({ enforcePrivateUsers: false });
    const other = await signUp('erin');
    expect((await open.call('GET', `/users/${other.id}`, { master: true })).body.ACL).toEqual({ '*': { read: true }, [other.id!]: { read: true, write: true } });
    expect((await open.call('GET', `/users/${other.id}`)).body.username).toBe('erin');
  });

  it('sessionLength sets a new session\'s expiresAt', async () => {
    const app = await appWith({ sessionLength: 3600 });
    const before = Date.now();
    const user = await signUp('frank');
    const sessions = (await app.call('GET', '/sessions', { sessionToken: user.getSessionToken() })).body.results;
    const expiresAt = Date.parse(sessions[0].expiresAt.iso);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000);
  });

  it('expireInactiveSessions off: new sessions have no expiresAt', async () => {
    const app = await appWith({ expireInactiveSessions: false });
    await signUp('gina');
    const loggedIn = await Parse.User.logIn('gina', 'secret-1');
    const sessions = (await app.call('GET', '/sessions', { sessionToken: loggedIn.getSessionToken() })).body.results;
    // The login replaced the signup's session (same installation).
    expect(sessions).toHaveLength(1);
    for (const s of sessions) expect(s).not.toHaveProperty('expiresAt');
    expect((await app.call('GET', '/users/me', { sessionToken: loggedIn.getSessionToken() })).body.username).toBe('gina');
  });

  it('revokeSessionOnPasswordReset: on, a password change ends the other sessions; off, they live on', async () => {
    for (const revoke of [true, false]) {
      const app = await appWith({ revokeSessionOnPasswordReset: revoke });
      const user = await signUp('hank');
      const elsewhere = (await app.call('POST', '/login', { body: { username: 'hank', password: 'secret-1' } })).body.sessionToken as string;
      user.set('password', 'secret-2');
      await user.save(null, { sessionToken: user.getSessionToken() });
      expect(user.getSessionToken()).toMatch(/^r:/);
      expect((await app.call('GET', '/users/me', { sessionToken: elsewhere })).status, `revoke ${revoke}`).toBe(revoke ? 400 : 200);
      expect((await Parse.User.logIn('hank', 'secret-2')).getSessionToken()).toMatch(/^r:/);
    }
  });

  it('preventLoginWithUnverifiedEmail with verifyUserEmails: a user whose emailVerified is not true cannot log in (205)', async () => {
    const app = await appWith({ verifyUserEmails: true, preventLoginWithUnverifiedEmail: true });
    const signup = await app.call('POST', '/users', { body: { username: 'ivy', password: 'secret-1' } });
    expect(signup.status).toBe(201);
    expect(signup.body).not.toHaveProperty('sessionToken');
    await app.call('PUT', `/users/${signup.body.objectId}`, { master: true, body: { email: 'ivy@example.com', emailVerified: false } });
    const refused = await refusal(Parse.User.logIn('ivy', 'secret-1'));
    expect([refused.code, refused.message]).toEqual([205, 'User email is not verified.']);
    expect((await app.call('POST', '/verifyPassword', { body: { username: 'ivy', password: 'secret-1' } })).body.code).toBe(205);
    const asMaster = await app.call('POST', '/login', { master: true, body: { username: 'ivy', password: 'secret-1', ignoreEmailVerification: true } });
    expect(asMaster.body.sessionToken).toMatch(/^r:/);
    await app.call('PUT', `/users/${signup.body.objectId}`, { master: true, body: { emailVerified: true } });
    expect((await Parse.User.logIn('ivy', 'secret-1')).get('username')).toBe('ivy');
  });

  it('preventLoginWithUnverifiedEmail without verifyUserEmails: nothing is refused (Parse Server asks for both)', async () => {
    const app = await appWith({ preventLoginWithUnverifiedEmail: true });
    const user = await signUp('ivan');
    expect(user.getSessionToken()).toMatch(/^r:/);
    await app.call('PUT', `/users/${user.id}`, { master: true, body: { email: 'ivan@example.com', emailVerified: false } });
    expect((await Parse.User.logIn('ivan', 'secret-1')).getSessionToken()).toMatch(/^r:/);
  });

  it('preventLoginWithUnverifiedEmail off (the default): emailVerified false does not matter', async () => {
    const app = await appWith();
    const user = await signUp('jack');
    await app.call('PUT', `/users/${user.id}`, { master: true, body: { emailVerified: false } });
    expect((await Parse.User.logIn('jack', 'secret-1')).getSessionToken()).toMatch(/^r:/);
  });
});

describe('fileUpload', () => {
  const png = Buffer.from('89504e470d0a1a0a', 'hex');

  it('enableForPublic lets callers without a session upload', async () => {
    await appWith();
    expect((await refusal(new Parse.File('a.png', [...png]).save())).code).toBe(130);
    await appWith({ 'fileUpload.enableForPublic': true });
    const file = await new Parse.File('a.png', [...png]).save();
    expect(file.url()).toMatch(/_a\.png$/);
  });

  it('enableForAuthenticatedUser off refuses logged-in users (130); the master key still uploads', async () => {
    await appWith({ 'fileUpload.enableForAuthenticatedUser': false });
    const user = await signUp('kate');
    const refused = await refusal(new Parse.File('a.png', [...png]).save({ sessionToken: user.getSessionToken()! }));
    expect([refused.code, refused.message]).toEqual([130, 'File upload by authenticated user is disabled.']);
    expect((await new Parse.File('a.png', [...png]).save({ useMasterKey: true })).name()).toMatch(/_a\.png$/);
  });

  it('enableForAnonymousUser lets anonymous users upload', async () => {
    for (const allowed of [false, true]) {
      const app = await appWith({ 'fileUpload.enableForAnonymousUser': allowed });
      const user = await signUp('lena');
      // Backyard has no anonymous login yet: make the user anonymous as one imported from Parse Server would be.
      const store = (await server.platform.services.dataApi.apps.store(app.appId))!;
      const row = (await store.row('_User', user.id!))!;
      await store.replaceRow('_User', { ...row, data: { ...row.data, authData: { anonymous: { id: 'device-1' } } } });
      const upload = await app.call('POST', '/files/a.png', { sessionToken: user.getSessionToken()!, headers: { 'content-type': 'image/png' }, rawBody: png.toString('latin1') });
      expect(upload.status, `allowed ${allowed}`).toBe(allowed ? 201 : 400);
      if (!allowed) expect(upload.body).toEqual({ code: 130, error: 'File upload by anonymous user is disabled.' });
    }
  });

  it('fileExtensions limits what clients upload (130); the master key is not limited', async () => {
    await appWith({ 'fileUpload.enableForPublic': true, 'fileUpload.fileExtensions': ['^png$'] });
    expect((await new Parse.File('a.png', [...png]).save()).name()).toMatch(/_a\.png$/);
    const refused = await refusal(new Parse.File('notes.txt', { base64: Buffer.from('hi').toString('base64') }).save());
    expect([refused.code, refused.message]).toEqual([130, 'File upload of extension txt is disabled.']);
    expect((await new Parse.File('notes.txt', { base64: Buffer.from('hi').toString('base64') }).save({ useMasterKey: true })).name()).toMatch(/_notes\.txt$/);
    // Active content stays refused whatever the option says.
    await appWith({ 'fileUpload.enableForPublic': true, 'fileUpload.fileExtensions': ['*'] });
    expect((await refusal(new Parse.File('page.html', { base64: Buffer.from('<p>').toString('base64') }).save())).code).toBe(130);
    expect((await new Parse.File('notes.txt', { base64: Buffer.from('hi').toString('base64') }).save()).name()).toMatch(/_notes\.txt$/);
  });

  it("fileExtensions run in linear time: an owner's catastrophic pattern cannot hold the server; Parse's ^(?!...) form works", async () => {
    // A backtracking engine takes 2^100 steps on this extension; one owner would stop every app.
    await appWith({ 'fileUpload.enableForPublic': true, 'fileUpload.fileExtensions': ['^(a+)+$'] });
    const long = `x.${'a'.repeat(100)}b`;
    const refused = await refusal(new Parse.File(long, { base64: Buffer.from('hi').toString('base64') }).save());
    expect([refused.code, refused.message]).toEqual([130, `File upload of extension ${'a'.repeat(100)}b is disabled.`]);
    // An unknown extension is checked with the declared type's subtype too.
    const allowed = new Parse.File(`x.${'a'.repeat(100)}`, { base64: Buffer.from('hi').toString('base64') }, `application/${'a'.repeat(100)}`);
    expect((await allowed.save()).name()).toMatch(/_x\.a+$/);
    // Parse Server's default is a negative lookahead at the start; that form is read as two linear matches.
    await appWith({ 'fileUpload.enableForPublic': true, 'fileUpload.fileExtensions': ['^(?!(jpe?g|gif)$)'] });
    expect((await refusal(new Parse.File('a.gif', { base64: Buffer.from('hi').toString('base64') }).save())).code).toBe(130);
    expect((await refusal(new Parse.File('a.jpeg', { base64: Buffer.from('hi').toString('base64') }).save())).code).toBe(130);
    expect((await new Parse.File('a.png', [...png]).save()).name()).toMatch(/_a\.png$/);
    expect((await new Parse.File('a.gifs', { base64: Buffer.from('hi').toString('base64') }).save()).name()).toMatch(/_a\.gifs$/);
  });
});

describe('protectedFields', () => {
  it("hides the option's fields per class and principal, joined with a class's own protectedFields", async () => {
    const app = await appWith({ protectedFields: { Person: { '*': ['ssn'] } } });
    const person = await new Parse.Object('Person', { name: 'Ada', ssn: '123', phone: '555' }).save();
    const seen = await new Parse.Query('Person').get(person.id);
    expect([seen.get('name'), seen.has('ssn'), seen.get('phone')]).toEqual(['Ada', false, '555']);
    expect((await new Parse.Query('Person').get(person.id, { useMasterKey: true })).get('ssn')).toBe('123');
    expect((await refusal(new Parse.Query('Person').equalTo('ssn', '123').find())).code).toBe(119);

    const schema = await app.call('PUT', '/schemas/Person', { master: true, body: { classLevelPermissions: { find: { '*': true }, get: { '*': true }, create: { '*': true }, update: { '*': true }, protectedFields: { '*': ['phone'] } } } });
    expect(schema.status, JSON.stringify(schema.body)).toBe(200);
    const again = await new Parse.Query('Person').get(person.id);
    expect([again.get('name'), again.has('ssn'), again.has('phone')]).toEqual(['Ada', false, false]);
  });

  it("keeps _User's email protected when the option is set without it", async () => {
    const app = await appWith({ protectedFields: { _User: { '*': ['phone'] } } });
    const user = await signUp('mia');
    await app.call('PUT', `/users/${user.id}`, { master: true, body: { email: 'mia@example.com', phone: '555', ACL: { '*': { read: true } } } });
    const seen = (await app.call('GET', `/users/${user.id}`)).body;
    expect([seen.username, 'email' in seen, 'phone' in seen]).toEqual(['mia', false, false]);
  });
});

describe('the command line', () => {
  const backyard = (home: string, args: string[]) => exec(process.execPath, [CLI, ...args], { env: stdioEnv(home) });

  it('app config prints every option, sets several at once, and refuses a bad one naming it with nothing written', async () => {
    const home = makeHome();
    try {
      await backyard(home, ['account', 'create', 'zoe']);
      const { stdout: created } = await backyard(home, ['app', 'import', '--account', 'zoe', '--name', 'Moved', '--app-id', 'movedApp', '--master-key', 'mk-1']);
      expect(created.trim()).toBe('movedApp');
      const { stdout } = await backyard(home, ['app', 'config', 'movedApp']);
      const lines = stdout.trim().split('\n');
      expect(lines.map((l) => l.split('\t')[0])).toEqual([...SETTING_KEYS]);
      expect(lines).toContain('maxLimit\tnull');
      expect(lines).toContain('fileUpload.enableForAuthenticatedUser\ttrue');

      const { stdout: set } = await backyard(home, ['app', 'config', 'movedApp', 'maxLimit=5', 'fileUpload.enableForPublic=true', 'fileUpload.fileExtensions=["^png$"]']);
      expect(set).toContain('maxLimit\t5\n');
      const after = (await backyard(home, ['app', 'config', 'movedApp'])).stdout;
      expect(after).toContain('fileUpload.enableForPublic\ttrue\n');
      expect(after).toContain('fileUpload.fileExtensions\t["^png$"]\n');

      const bad = await backyard(home, ['app', 'config', 'movedApp', 'defaultLimit=7', 'maxLimit=lots']).catch((e: { stderr: string; code: number }) => e);
      expect(bad).toMatchObject({ code: 1 });
      expect((bad as { stderr: string }).stderr).toMatch(/maxLimit must be a whole number of at least 1; got "lots"\. Nothing was changed\./);
      const unknown = await backyard(home, ['app', 'config', 'movedApp', 'maxlimit=7']).catch((e: { stderr: string }) => e);
      expect((unknown as { stderr: string }).stderr).toMatch(/There is no setting "maxlimit"/);
      const malformed = await backyard(home, ['app', 'config', 'movedApp', 'maxLimit']).catch((e: { stderr: string }) => e);
      expect((malformed as { stderr: string }).stderr).toMatch(/"maxLimit" is not key=value/);
      expect((await backyard(home, ['app', 'config', 'movedApp'])).stdout).toContain('defaultLimit\t100\n');
    } finally {
      removeHome(home);
    }
  }, 180_000); // several `backyard` processes, each loading Backyard, on a machine running the other suites

  it('app import takes --config <file.json> and --set key=value; a bad one creates no app', async () => {
    const home = makeHome();
    try {
      await backyard(home, ['account', 'create', 'zoe']);
      const config = path.join(home, 'parse-config.json');
      fs.writeFileSync(config, JSON.stringify({ enforcePrivateUsers: false, fileUpload: { enableForPublic: true }, sessionLength: 600 }));
      await backyard(home, ['app', 'import', '--account', 'zoe', '--name', 'A', '--app-id', 'appA', '--master-key', 'mk', '--config', config, '--set', 'sessionLength=60', '--set', 'maxLimit=9']);
      const { stdout } = await backyard(home, ['app', 'config', 'appA']);
      for (const line of ['enforcePrivateUsers\tfalse', 'fileUpload.enableForPublic\ttrue', 'sessionLength\t60', 'maxLimit\t9']) expect(stdout).toContain(`${line}\n`);

      fs.writeFileSync(config, JSON.stringify({ enforcePrivateUsers: 'no' }));
      const bad = await backyard(home, ['app', 'import', '--account', 'zoe', '--name', 'B', '--app-id', 'appB', '--master-key', 'mk', '--config', config]).catch((e: { stderr: string }) => e);
      expect((bad as { stderr: string }).stderr).toMatch(/enforcePrivateUsers must be true or false; got "no"/);
      const none = await backyard(home, ['app', 'keys', 'appB']).catch((e: { stderr: string }) => e);
      expect((none as { stderr: string }).stderr).toMatch(/No Backend App has the application id "appB"/);
    } finally {
      removeHome(home);
    }
  });

  it('a running server sees a change made with app config', async () => {
    const home = makeHome();
    let serve: ServeProcess | undefined;
    try {
      const { stdout: token } = await backyard(home, ['account', 'create', 'zoe']);
      serve = new ServeProcess(await freePort(), token.trim(), () => stdioEnv(home));
      await backyard(home, ['app', 'import', '--account', 'zoe', '--name', 'Live', '--app-id', 'liveApp', '--master-key', 'mk-live']);
      await serve.start();
      const headers = { 'X-Parse-Application-Id': 'liveApp', 'X-Parse-Master-Key': 'mk-live', 'content-type': 'application/json' };
      for (let i = 0; i < 4; i++) await fetch(`${serve.url}/data/classes/Item`, { method: 'POST', headers, body: JSON.stringify({ i }) });
      const url = serve.url;
      const found = async () => ((await (await fetch(`${url}/data/classes/Item?limit=100`, { headers })).json()) as { results: unknown[] }).results.length;
      expect(await found()).toBe(4);
      await backyard(home, ['app', 'config', 'liveApp', 'maxLimit=2']);
      const deadline = Date.now() + 10_000;
      let seen = await found();
      while (seen !== 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await found();
      }
      expect(seen).toBe(2);
    } finally {
      if (serve?.running) await serve.stop('SIGTERM');
      removeHome(home);
    }
  });
});
