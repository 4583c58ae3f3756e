import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSE_SERVER_API_VERSION } from '../src/data/rest/routes/misc.js';
import { packageRoot } from '../src/packageRoot.js';
import { packageVersion } from '../src/version.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * The data API endpoints Parse Dashboard calls beside the class routes (`/serverInfo`, `POST /jobs`,
 * `/scriptlog`, `/push_audiences`, `/security`): what only Backyard shows (its own version, its
 * cloud code's log lines, its checks). How their answers compare with Parse Server's is in
 * test/differential/cases/dashboard.ts.
 */
let server: TestServer;
let app: TestApp;

const CLOUD = `
Parse.Cloud.define('chatty', (request) => {
  console.log('hello from chatty', request.params.tag);
  console.error('something bad', request.params.tag);
  console.debug('debug noise', request.params.tag);
  return 'ok';
});
Parse.Cloud.define('boom', () => { throw new Error('boom went the function'); });
Parse.Cloud.job('tally', async (request) => 'tallied for ' + request.params.who);
`;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
  // The app's code tree is apps/<appId>/cloud, whose cloud/main.js is loaded (as test/cloud-runtime.test.ts deploys).
  const tree = path.join(server.home, 'apps', app.appId, 'cloud', 'cloud');
  fs.mkdirSync(tree, { recursive: true });
  fs.writeFileSync(path.join(tree, 'main.js'), CLOUD);
  await server.platform.services.cloud.reload(app.appId);
});
afterAll(async () => server?.close());

/** Reads until `done` holds, or gives the last value at the deadline (for the assertion to show). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 20_000; ; ) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const scriptlog = (query: Record<string, string>) => app.call('GET', `/scriptlog?${new URLSearchParams(query)}`, { master: true });

describe('master key only', () => {
  it('answers a client key on each route with 403 unauthorized', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/jobs', { jobName: 'tally' }],
      ['GET', '/scriptlog'],
      ['GET', '/push_audiences'],
      ['POST', '/push_audiences', { name: 'x', query: '{}' }],
      ['GET', '/push_audiences/abc'],
      ['PUT', '/push_audiences/abc', { name: 'y' }],
      ['DELETE', '/push_audiences/abc'],
      ['GET', '/security'],
    ];
    for (const [method, route, body] of routes) {
      const answer = await app.call(method, route, { body });
      expect({ route: `${method} ${route}`, status: answer.status, body: answer.body }).toEqual({ route: `${method} ${route}`, status: 403, body: { code: 119, error: 'unauthorized: master key is required' } });
    }
  });
});

describe('GET /serverInfo', () => {
  it("reports the Parse Server release the API follows as a semver, Backyard's own version apart, and the features that answer", async () => {
    const info = await app.call('GET', '/serverInfo', { master: true });
    expect(info.status).toBe(200);
    // The constant follows the Parse Server the differential test compares against.
    const installed = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'node_modules/parse-server/package.json'), 'utf8')).version;
    expect(PARSE_SERVER_API_VERSION).toBe(installed);
    expect(info.body.parseServerVersion).toBe(PARSE_SERVER_API_VERSION);
    expect(info.body.backyardVersion).toBe(packageVersion());
    expect(info.body.features).toMatchObject({
      cloudCode: { jobs: true },
      logs: { level: true, size: true, order: true, until: true, from: true },
      push: { immediatePush: true, storedPushData: true, pushAudiences: true, scheduledPush: false },
      settings: { securityCheck: true },
    });
  });
});

describe('POST /jobs', () => {
  it('starts the job the body names, with the whole body as its params, and answers its status id in a header', async () => {
    const started = await app.call('POST', '/jobs', { master: true, body: { jobName: 'tally', who: 'the dashboard', input: {} } });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({});
    const jobId = started.headers.get('x-parse-job-status-id');
    expect(jobId).toMatch(/^[A-Za-z0-9]{10}$/);
    const status = await until(
      () => app.call('GET', `/classes/_JobStatus/${jobId}`, { master: true }),
      (a) => a.body.status !== 'running',
    );
    expect(status.body).toMatchObject({ jobName: 'tally', status: 'succeeded', message: 'tallied for the dashboard', params: { jobName: 'tally', who: 'the dashboard' } });
  });

  it('answers 141 naming jobName when the body has none, and for a job the code does not define', async () => {
    expect((await app.call('POST', '/jobs', { master: true, body: { input: {} } })).body).toEqual({
      code: 141,
      error: 'Invalid job: POST /jobs needs "jobName", the name of a job the app\'s cloud code defines.',
    });
    expect((await app.call('POST', '/jobs', { master: true, body: { jobName: 'nope' } })).body).toEqual({ code: 141, error: 'Invalid job: "nope"' });
  });
});

describe('GET /scriptlog', () => {
  it("answers the lines cloud code wrote, newest first, with the function's name; level=error keeps the errors", async () => {
    const tag = `t${Date.now()}`;
    expect((await app.call('POST', '/functions/chatty', { body: { tag } })).body).toEqual({ result: 'ok' });
    expect((await app.call('POST', '/functions/boom', { body: {} })).body.code).toBe(141);
    const info = await until(
      () => scriptlog({ level: 'info', n: '100' }),
      (a) => Array.isArray(a.body) && a.body.some((e: { message: string }) => e.message.includes('boom went the function')),
    );
    expect(info.status).toBe(200);
    const mine = info.body.filter((e: { message: string }) => e.message.endsWith(tag));
    // Newest first: the error line was written after the log line; debug lines are not in the info log.
    expect(mine).toEqual([
      { level: 'error', message: `something bad ${tag}`, timestamp: expect.any(String), functionName: 'chatty' },
      { level: 'info', message: `hello from chatty ${tag}`, timestamp: expect.any(String), functionName: 'chatty' },
    ]);
    const times = info.body.map((e: { timestamp: string }) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(info.body[0]).toMatchObject({ level: 'error', functionName: 'boom', message: expect.stringContaining('Failed running cloud function boom') });

    const errors = (await scriptlog({ level: 'error' })).body;
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every((e: { level: string }) => e.level === 'error')).toBe(true);
    expect(errors.some((e: { message: string }) => e.message === `something bad ${tag}`)).toBe(true);

    const oldestFirst = (await scriptlog({ order: 'asc', size: '2' })).body;
    expect(oldestFirst).toHaveLength(2);
    expect(oldestFirst[0].message).toBe(`hello from chatty ${tag}`);
    expect((await scriptlog({ n: '1', size: '50' })).body).toHaveLength(1);
    expect((await scriptlog({ until: '2000-01-01T00:00:00Z' })).body).toEqual([]);
    expect((await scriptlog({ from: new Date(Date.now() + 60_000).toISOString() })).body).toEqual([]);
  });

  it('answers 102 naming a parameter it cannot read', async () => {
    expect((await scriptlog({ n: 'lots' })).body).toEqual({ code: 102, error: 'n must be a whole number of entries, at least 1; got "lots".' });
    expect((await scriptlog({ size: '0' })).body).toEqual({ code: 102, error: 'size must be a whole number of entries, at least 1; got "0".' });
    expect((await scriptlog({ order: 'newest' })).body).toMatchObject({ code: 102, error: expect.stringMatching(/^order must be "asc"/) });
    expect((await scriptlog({ level: 'loud' })).body).toMatchObject({ code: 102, error: expect.stringMatching(/^level must be one of error, warn, info/) });
    expect((await scriptlog({ from: 'yesterday' })).body).toMatchObject({ code: 102, error: expect.stringMatching(/^from must be a date/) });
    expect((await scriptlog({ until: 'soon' })).status).toBe(400);
  });
});

describe('GET /security', () => {
  it("reports the app's checks, and a fixed setting or permission turns its check to success", async () => {
    const target = await createTestApp(server);
    const report = async () => (await target.call('GET', '/security', { master: true })).body.report;
    const check = (r: any, title: string) => r.groups.flatMap((g: any) => g.checks).find((c: any) => c.title === title);
    await target.call('POST', '/classes/Note', { body: { text: 'hi' } });

    const before = await report();
    expect(before.version).toBe('1.0.0');
    expect(before.state).toBe('fail');
    expect(check(before, 'Client class creation disabled')).toMatchObject({ state: 'fail', warning: expect.any(String), solution: expect.stringContaining('allowClientClassCreation') });
    expect(check(before, 'Classes are not writable by everyone')).toMatchObject({ state: 'fail', warning: expect.stringContaining('Note (create, update, delete)') });
    expect(check(before, 'Users are created without public access')).toEqual({ title: 'Users are created without public access', state: 'success' });
    expect(check(before, 'Files are uploaded only by signed-in users').state).toBe('success');
    const confined = server.platform.services.cloud.confinement().mode === 'sandbox';
    expect(check(before, 'Cloud code runs in a sandbox').state).toBe(confined ? 'success' : 'fail');

    const owner = { requiresAuthentication: true };
    const clp = { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: owner, update: owner, delete: owner, addField: {} };
    expect((await target.call('PUT', '/schemas/Note', { master: true, body: { classLevelPermissions: clp } })).status).toBe(200);
    await server.platform.services.backendApps.configure(target.appId, { allowClientClassCreation: false, enforcePrivateUsers: false, 'fileUpload.enableForPublic': true });
    const after = await report();
    expect(check(after, 'Classes are not writable by everyone').state).toBe('success');
    expect(check(after, 'Client class creation disabled').state).toBe('success');
    expect(check(after, 'Users are created without public access').state).toBe('fail');
    expect(check(after, 'Files are uploaded only by signed-in users')).toMatchObject({ state: 'fail', warning: expect.stringContaining('callers without a session') });
    const configGroup = after.groups.find((g: any) => g.name === 'Backend App configuration');
    expect(configGroup.state).toBe('fail');
  });
});
