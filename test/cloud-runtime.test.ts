import fs from 'node:fs';
import path from 'node:path';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';

let server: TestServer;
let app: TestApp;
let other: TestApp;

/** Writes an app's cloud/main.js (and more files) on disk and reloads its worker. */
async function deploy(target: TestApp, files: Record<string, string>): Promise<void> {
  const tree = path.join(server.home, 'apps', target.appId, 'cloud');
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(tree, name)), { recursive: true });
    fs.writeFileSync(path.join(tree, name), content);
  }
  await server.platform.services.cloud.reload(target.appId);
}

const MAIN = `
require('./functions/hello.js');
Parse.Cloud.define('fail', () => { throw new Error('nope, not today'); });
Parse.Cloud.define('validation', () => { throw new Parse.Error(142, 'custom code'); });
Parse.Cloud.define('spin', () => { for (;;) {} });
Parse.Cloud.define('slow', async (request) => { await new Promise((r) => setTimeout(r, request.params.ms)); return 'done'; });
Parse.Cloud.define('whoami', (request) => ({ master: request.master, user: request.user ? request.user.get('username') : null }));
Parse.Cloud.define('countTodos', async () => new Parse.Query('ToDo').count({ useMasterKey: true }));
Parse.Cloud.define('returnObject', async () => { const o = new Parse.Object('Thing'); o.set('x', 1); await o.save(null, { useMasterKey: true }); return o; });
Parse.Cloud.define('readOther', (request) => require('fs').readFileSync(request.params.file, 'utf8'));
Parse.Cloud.define('spawn', () => require('child_process').execSync('id').toString());
Parse.Cloud.beforeSave('ToDo', (request) => {
  if (!request.object.get('title')) throw new Parse.Error(142, 'A ToDo needs a title.');
  request.object.set('titleLength', request.object.get('title').length);
});
Parse.Cloud.afterSave('ToDo', async (request) => {
  const log = new Parse.Object('AuditLog');
  log.set('todo', request.object.id);
  await log.save(null, { useMasterKey: true });
});
Parse.Cloud.beforeSave(Parse.User, (request) => {
  if (!request.object.isNew()) return;
  if (String(request.object.get('password') || '').length < 8) throw new Parse.Error(142, 'A password needs 8 characters.');
  request.object.set('nickname', String(request.object.get('username')).toUpperCase());
});
Parse.Cloud.afterSave(Parse.User, async (request) => {
  const log = new Parse.Object('AuditLog');
  log.set('user', request.object.id);
  log.set('sawPassword', request.object.get('password') !== undefined || request.object.get('_hashed_password') !== undefined);
  await log.save(null, { useMasterKey: true });
});
Parse.Cloud.beforeDelete('Locked', () => { throw new Error('Locked objects stay.'); });
Parse.Cloud.beforeFind('Secret', (request) => { request.query.equalTo('visible', true); });
Parse.Cloud.afterFind('Shout', (request) => request.objects.map((o) => { o.set('text', String(o.get('text')).toUpperCase()); return o; }));
Parse.Cloud.job('tally', async (request) => {
  request.message('counting');
  const n = await new Parse.Query('ToDo').count({ useMasterKey: true });
  return 'counted ' + n + ' for ' + request.params.who;
});
Parse.Cloud.job('broken', async () => { throw new Error('job broke'); });
`;

beforeAll(async () => {
  server = await startTestServer({ BACKYARD_FUNCTION_TIMEOUT_MS: '2000' });
  app = await createTestApp(server, 'cloud-runtime');
  other = await createTestApp(server, 'cloud-other');
  await deploy(app, { 'cloud/main.js': MAIN, 'cloud/functions/hello.js': "Parse.Cloud.define('hello', (request) => 'Hello, ' + (request.params.name || 'world') + '!');\n" });
  await deploy(other, { 'cloud/main.js': "Parse.Cloud.define('ping', () => 'pong');\n" });
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  (Parse as unknown as { serverURL: string }).serverURL = app.apiURL;
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
});
afterAll(async () => server.close());

describe('cloud functions', () => {
  it('answer {result} over POST /functions/<name> and through Parse.Cloud.run', async () => {
    const res = await app.call('POST', '/functions/hello', { body: { name: 'Ada' } });
    expect(res).toMatchObject({ status: 200, body: { result: 'Hello, Ada!' } });
    expect(await Parse.Cloud.run('hello', { name: 'SDK' })).toBe('Hello, SDK!');
  });

  it('a thrown error answers 141 with its message; a Parse.Error keeps its code', async () => {
    expect(await app.call('POST', '/functions/fail', { body: {} })).toMatchObject({ status: 400, body: { code: 141, error: 'nope, not today' } });
    expect(await app.call('POST', '/functions/validation', { body: {} })).toMatchObject({ status: 400, body: { code: 142, error: 'custom code' } });
    expect(await app.call('POST', '/functions/missing', { body: {} })).toMatchObject({ status: 400, body: { code: 141, error: 'Invalid function: "missing"' } });
  });

  it('see the caller (master or user) and use the SDK against their own data API', async () => {
    expect((await app.call('POST', '/functions/whoami', { body: {} })).body.result).toEqual({ master: false, user: null });
    expect((await app.call('POST', '/functions/whoami', { body: {}, master: true })).body.result).toEqual({ master: true, user: null });
    const signup = await app.call('POST', '/users', { body: { username: 'cloudy', password: 'cloudy-password' } });
    const asUser = await app.call('POST', '/functions/whoami', { body: {}, sessionToken: signup.body.sessionToken });
    expect(asUser.body.result).toEqual({ master: false, user: 'cloudy' });
    const objectResult = await app.call('POST', '/functions/returnObject', { body: {} });
    expect(objectResult.body.result).toMatchObject({ __type: 'Object', className: 'Thing', x: 1, objectId: expect.any(String) });
  });

  it('a function that loops forever is stopped with 141 while other apps and the same app keep answering, and the worker comes back', async () => {
    const spinning = app.call('POST', '/functions/spin', { body: {} });
    const meanwhile = await other.call('POST', '/functions/ping', { body: {} });
    expect(meanwhile.body).toEqual({ result: 'pong' });
    // The loop holds its worker: 20 calls of another function of the same app go to a worker that is
    // free (on the held one they would fail with it when it is stopped at the limit).
    const hellos = await Promise.all(Array.from({ length: 20 }, () => app.call('POST', '/functions/hello', { body: {} })));
    expect(hellos.map((r) => r.body)).toEqual(Array.from({ length: 20 }, () => ({ result: 'Hello, world!' })));
    const res = await spinning;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 141, error: 'Cloud function "spin" ran longer than its limit of 2000 ms and was stopped; its worker was restarted.' });
    expect((await app.call('POST', '/functions/hello', { body: {} })).body).toEqual({ result: 'Hello, world!' });
  });

  it('cannot read another app\'s files nor start processes', async () => {
    const secret = path.join(server.home, 'apps', other.appId, 'cloud', 'cloud', 'main.js');
    const res = await app.call('POST', '/functions/readOther', { body: { file: secret } });
    expect(res.body).toMatchObject({ code: 141, error: expect.stringMatching(/ERR_ACCESS_DENIED|permission|Access to this API has been restricted/i) });
    const platform = await app.call('POST', '/functions/readOther', { body: { file: path.join(server.home, 'platform.db') } });
    expect(platform.body.code).toBe(141);
    const spawn = await app.call('POST', '/functions/spawn', { body: {} });
    expect(spawn.body.code).toBe(141);
  });
});

describe('triggers', () => {
  it('beforeSave rejects an invalid ToDo through the SDK, and may change a valid one; afterSave runs', async () => {
    const bad = new Parse.Object('ToDo');
    await expect(bad.save()).rejects.toMatchObject({ code: 142, message: 'A ToDo needs a title.' });
    const good = new Parse.Object('ToDo');
    good.set('title', 'Write docs');
    await good.save();
    const fetched = await new Parse.Query('ToDo').get(good.id!);
    expect(fetched.get('titleLength')).toBe(10);
    const audit = await new Parse.Query('AuditLog').equalTo('todo', good.id).find({ useMasterKey: true });
    expect(audit).toHaveLength(1);
    good.set('title', 'Longer title');
    await good.save();
    await good.fetch();
    expect(good.get('titleLength')).toBe(12);
  });

  it('signup runs _User beforeSave (which sees the password and may refuse or change the user) and afterSave (which sees neither password nor hash)', async () => {
    const weak = new Parse.User();
    weak.set('username', 'shorty');
    weak.set('password', 'short');
    await expect(weak.signUp()).rejects.toMatchObject({ code: 142, message: 'A password needs 8 characters.' });
    // Refused before anything was written.
    expect(await new Parse.Query(Parse.User).equalTo('username', 'shorty').count({ useMasterKey: true })).toBe(0);

    const user = new Parse.User();
    user.set('username', 'strongling');
    user.set('password', 'long enough');
    await user.signUp();
    expect(user.getSessionToken()).toMatch(/^r:/);
    const stored = await new Parse.Query(Parse.User).get(user.id!, { useMasterKey: true });
    expect(stored.get('nickname')).toBe('STRONGLING');
    expect(stored.get('password')).toBeUndefined();
    const [audit] = await new Parse.Query('AuditLog').equalTo('user', user.id).find({ useMasterKey: true });
    expect(audit?.get('sawPassword')).toBe(false);
    // The password the trigger saw is the one stored (hashed): logging in works.
    await Parse.User.logOut();
    const again = await Parse.User.logIn('strongling', 'long enough');
    expect(again.id).toBe(user.id);
    await Parse.User.logOut();
  });

  it('beforeDelete can refuse a delete', async () => {
    const { body } = await app.call('POST', '/classes/Locked', { body: { a: 1 } });
    expect(await app.call('DELETE', `/classes/Locked/${body.objectId}`)).toMatchObject({ status: 400, body: { code: 141, error: 'Locked objects stay.' } });
    expect((await app.call('GET', `/classes/Locked/${body.objectId}`)).status).toBe(200);
  });

  it('beforeFind narrows queries and afterFind changes results', async () => {
    await app.call('POST', '/classes/Secret', { body: { visible: true, n: 1 } });
    await app.call('POST', '/classes/Secret', { body: { visible: false, n: 2 } });
    const found = await new Parse.Query('Secret').find();
    expect(found.map((o) => o.get('n'))).toEqual([1]);
    await app.call('POST', '/classes/Shout', { body: { text: 'quiet' } });
    const shouted = await new Parse.Query('Shout').first();
    expect(shouted!.get('text')).toBe('QUIET');
  });

  it('classes with triggers cannot run inside a transactional batch', async () => {
    const res = await app.call('POST', '/batch', { body: { transaction: true, requests: [{ method: 'POST', path: '/data/classes/ToDo', body: { title: 'x' } }] } });
    expect(res.body).toMatchObject({ code: 108 });
  });
});

describe('jobs', () => {
  it('run in the background with their status in _JobStatus', async () => {
    const started = await app.call('POST', '/jobs/tally', { body: { who: 'tester' }, master: true });
    expect(started.status).toBe(200);
    const jobId = started.headers.get('x-parse-job-status-id')!;
    expect(jobId).toMatch(/^[A-Za-z0-9]{10}$/);
    let status: any;
    const current = async () => (status = (await app.call('GET', `/classes/_JobStatus/${jobId}`, { master: true })).body).status;
    await expect.poll(current, { timeout: 30_000, interval: 100 }).not.toBe('running');
    expect(status).toMatchObject({ jobName: 'tally', status: 'succeeded', message: expect.stringMatching(/^counted \d+ for tester$/), params: { who: 'tester' } });
    expect(status.finishedAt.__type).toBe('Date');
  });

  it('a failing job is recorded as failed; jobs need the master key', async () => {
    const started = await app.call('POST', '/jobs/broken', { body: {}, master: true });
    const jobId = started.headers.get('x-parse-job-status-id')!;
    let status: any;
    const current = async () => (status = (await app.call('GET', `/classes/_JobStatus/${jobId}`, { master: true })).body).status;
    await expect.poll(current, { timeout: 30_000, interval: 100 }).not.toBe('running');
    expect(status).toMatchObject({ status: 'failed', message: 'job broke' });
    expect((await app.call('POST', '/jobs/tally', { body: {} })).status).toBe(403);
  });
});

describe('deploys', () => {
  it('a reload does not drop a call in flight, and the new code answers afterwards', async () => {
    const inFlight = app.call('POST', '/functions/slow', { body: { ms: 700 } });
    await new Promise((r) => setTimeout(r, 200));
    await deploy(app, { 'cloud/functions/hello.js': "Parse.Cloud.define('hello', () => 'Hello again!');\n" });
    expect((await inFlight).body).toEqual({ result: 'done' });
    expect((await app.call('POST', '/functions/hello', { body: {} })).body).toEqual({ result: 'Hello again!' });
  });

  it('code that fails to load: the reload says why, and calls answer 141 with the reason', async () => {
    const broken = await createTestApp(server, 'cloud-broken');
    // The file that threw is named with its line, not main.js that required it.
    await expect(
      deploy(broken, { 'cloud/main.js': "require('./functions/bad.js');\n", 'cloud/functions/bad.js': "// first\n// second\nthrow new Error('bad start');\n" }),
    ).rejects.toThrow(/^the new cloud code failed to load: cloud\/functions\/bad\.js:3:\d+: Error: bad start$/);
    const res = await broken.call('POST', '/functions/anything', { body: {} });
    expect(res.body).toMatchObject({ code: 141, error: expect.stringContaining('cloud/functions/bad.js:3') });
  });

  it('loads files written with import/export, and hands code that requires the SDK the same global instance', async () => {
    const esm = await createTestApp(server, 'cloud-esm');
    await deploy(esm, {
      'cloud/main.js': "import './functions/greet.js';\nimport './functions/same.cjs';\n",
      'cloud/functions/greet.js': "export const greeting = 'hi';\nParse.Cloud.define('greet', () => greeting);\n",
      'cloud/functions/same.cjs': "const sdk = require('parse/node');\nParse.Cloud.define('same', () => sdk === Parse);\n",
    });
    expect((await esm.call('POST', '/functions/greet', { body: {} })).body).toEqual({ result: 'hi' });
    expect((await esm.call('POST', '/functions/same', { body: {} })).body).toEqual({ result: true });
  });
});

describe('through MCP: deployCloudCode, then the SDK and the data API', () => {
  it('deploys a function, a beforeSave and a job, and they run', async () => {
    const { modernHttpClient } = await import('./helpers/mcpClients.js');
    const client = await modernHttpClient(server.url, server.alice);
    try {
      const target = await createTestApp(server, 'cloud-mcp');
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: any; content: Array<{ text: string }> };
        expect(result.isError ?? false, result.content[0]?.text).toBe(false);
        // getCloudCode answers its text as plain text content.
        return result.structuredContent ?? { content: result.content[0]!.text };
      };
      const current = await call('getCloudCode', { appId: target.appId, path: 'cloud/main.js' });
      expect(current.content).toContain('Parse.Cloud');
      const deployed = await call('deployCloudCode', {
        appId: target.appId,
        changes: [
          { path: 'cloud/functions/hello.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.define('hello', (request) => `Hello, ${request.params.name}!`);\n" },
          { path: 'cloud/triggers/todo.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.beforeSave('ToDo', (request) => {\n  if (!request.object.get('title')) throw new Parse.Error(142, 'Every ToDo needs a title.');\n});\n" },
          { path: 'cloud/jobs/count.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.job('countTodos', async () => `${await new Parse.Query('ToDo').count({ useMasterKey: true })} todos`);\n" },
          { path: 'cloud/main.js', operation: 'write', writeMode: 'append', data: "\nrequire('./functions/hello.js');\nrequire('./triggers/todo.js');\nrequire('./jobs/count.js');\n" },
        ],
      });
      expect(deployed.warnings).toEqual([]);

      Parse.initialize(target.appId, target.keys.javascriptKey, target.keys.masterKey);
      (Parse as unknown as { serverURL: string }).serverURL = target.apiURL;
      expect(await Parse.Cloud.run('hello', { name: 'MCP' })).toBe('Hello, MCP!');
      expect((await target.call('POST', '/functions/hello', { body: { name: 'REST' } })).body).toEqual({ result: 'Hello, REST!' });
      await expect(new Parse.Object('ToDo').save()).rejects.toMatchObject({ code: 142, message: 'Every ToDo needs a title.' });
      await new Parse.Object('ToDo', { title: 'ok' }).save();

      const [jobStart] = (await call('callBackendAPI', { appId: target.appId, requests: [{ method: 'POST', url: '/jobs/countTodos', body: {} }] })).responses;
      expect(jobStart.code).toBe(200);
      let status: any;
      for (let i = 0; i < 50; i++) {
        [status] = (await call('callBackendAPI', { appId: target.appId, requests: [{ method: 'GET', url: '/classes/_JobStatus', body: { where: { jobName: 'countTodos' } } }] })).responses;
        if (status.body.results[0]?.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status.body.results[0]).toMatchObject({ status: 'succeeded', message: '1 todos' });
    } finally {
      await client.close();
      Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
      (Parse as unknown as { serverURL: string }).serverURL = app.apiURL;
    }
  });
});

describe('recent runs and their logs', () => {
  const RUNS_MAIN = `
console.log('loading the runs app');
Parse.Cloud.define('chatty', async (request) => {
  const { tag, wait } = request.params;
  console.log('start', tag);
  await new Promise((r) => setTimeout(r, wait));
  console.warn('middle %s', tag);
  request.log.info('via request.log', tag);
  await new Promise((r) => setTimeout(r, wait));
  console.error('end ' + tag);
  return tag;
});
Parse.Cloud.define('explode', () => { console.debug('about to fail'); throw new Error('it broke'); });
Parse.Cloud.define('hang', async () => { console.info('waiting forever'); await new Promise(() => {}); });
Parse.Cloud.define('flood', () => { for (let i = 0; i < 250; i++) console.log('line ' + i + ' ' + 'x'.repeat(1500)); return 'ok'; });
Parse.Cloud.define('quiet', () => 1);
Parse.Cloud.beforeSave('Note', (request) => { console.log('saving', request.object.get('text')); });
Parse.Cloud.job('report', async () => { console.info('job says hi'); return 'reported'; });
`;
  let runsApp: TestApp;
  const runs = () => server.platform.services.cloud.recentRuns(runsApp.appId);

  beforeAll(async () => {
    runsApp = await createTestApp(server, 'cloud-runs');
    await deploy(runsApp, { 'cloud/main.js': RUNS_MAIN });
  });

  it('gives each of two concurrent calls its own log lines, with their levels', async () => {
    // A waits longer than B, so B starts, logs and ends while A is between its lines.
    const [a, b] = await Promise.all([
      runsApp.call('POST', '/functions/chatty', { body: { tag: 'A', wait: 250 } }),
      new Promise((r) => setTimeout(r, 30)).then(() => runsApp.call('POST', '/functions/chatty', { body: { tag: 'B', wait: 40 } })),
    ]);
    expect([a.body, b.body]).toEqual([{ result: 'A' }, { result: 'B' }]);
    const chatty = runs().filter((r) => r.name === 'chatty');
    expect(chatty).toHaveLength(2);
    const [runB, runA] = chatty; // newest first: B started last
    for (const [run, tag] of [[runA!, 'A'], [runB!, 'B']] as const) {
      expect(run).toMatchObject({ kind: 'function', status: 'succeeded', omittedLines: 0 });
      expect(run.error).toBeUndefined();
      expect(run.lines.map((l) => [l.level, l.message])).toEqual([
        ['log', `start ${tag}`],
        ['warn', `middle ${tag}`],
        ['info', `via request.log ${tag}`],
        ['error', `end ${tag}`],
      ]);
      for (const line of run.lines) expect(Date.parse(line.time)).toBeGreaterThanOrEqual(Date.parse(run.startedAt));
    }
    // They did overlap: B started after A and ended before it.
    const end = (r: typeof runA) => Date.parse(r!.startedAt) + r!.durationMs!;
    expect(Date.parse(runB!.startedAt)).toBeGreaterThanOrEqual(Date.parse(runA!.startedAt));
    expect(end(runB)).toBeLessThan(end(runA));
    expect(runA!.durationMs).toBeGreaterThanOrEqual(500);
    // Output at load time belongs to no run.
    expect(runs().some((r) => r.lines.some((l) => l.message.includes('loading the runs app')))).toBe(false);
  });

  it('records a failing call with its error, a call that outran its limit as timed out, and triggers and jobs', async () => {
    expect((await runsApp.call('POST', '/functions/explode', { body: {} })).body).toEqual({ code: 141, error: 'it broke' });
    expect(runs()[0]).toMatchObject({ kind: 'function', name: 'explode', status: 'failed', error: 'it broke', lines: [{ level: 'debug', message: 'about to fail' }] });

    expect((await runsApp.call('POST', '/functions/hang', { body: {} })).body).toMatchObject({ code: 141, error: expect.stringMatching(/longer than its limit of 2000 ms/) });
    expect(runs()[0]).toMatchObject({ name: 'hang', status: 'timed out', error: expect.stringMatching(/longer than its limit of 2000 ms/), lines: [{ level: 'info', message: 'waiting forever' }] });
    // A lower bound only (a slow machine makes it longer): Node's timers count from the event loop's
    // cached time, so the limit's timer may fire a few milliseconds before 2000 ms by another clock.
    expect(runs()[0]!.durationMs).toBeGreaterThanOrEqual(1990);

    expect((await runsApp.call('POST', '/classes/Note', { body: { text: 'hello' } })).status).toBe(201);
    expect(runs()[0]).toMatchObject({ kind: 'trigger', name: 'beforeSave', className: 'Note', status: 'succeeded', lines: [{ level: 'log', message: 'saving hello' }] });

    const started = await runsApp.call('POST', '/jobs/report', { body: {}, master: true });
    const jobId = started.headers.get('x-parse-job-status-id')!;
    await expect.poll(() => runs().find((r) => r.jobId === jobId)?.status, { timeout: 30_000, interval: 50 }).toBe('succeeded');
    const job = runs().find((r) => r.jobId === jobId);
    expect(job).toMatchObject({ kind: 'job', name: 'report', status: 'succeeded', lines: [{ level: 'info', message: 'job says hi' }] });
  });

  it('bounds the lines of a run, the characters of a line, and the runs of an app', async () => {
    const { RUN_LIMITS } = await import('../src/data/cloud/runs.js');
    expect((await runsApp.call('POST', '/functions/flood', { body: {} })).body).toEqual({ result: 'ok' });
    const flood = runs()[0]!;
    expect(flood.name).toBe('flood');
    expect(flood.lines).toHaveLength(RUN_LIMITS.linesPerRun);
    expect(flood.omittedLines).toBe(250 - RUN_LIMITS.linesPerRun);
    expect(flood.lines[0]!.message).toMatch(/^line 0 x+…$/);
    for (const line of flood.lines) expect(line.message.length).toBeLessThanOrEqual(RUN_LIMITS.charsPerLine);

    for (let i = 0; i < RUN_LIMITS.runs + 5; i++) await server.platform.services.cloud.run(runsApp.appId, 'function', 'quiet', { params: {} });
    const kept = runs();
    expect(kept.filter((r) => r.kind !== 'job')).toHaveLength(RUN_LIMITS.runs);
    expect(kept.filter((r) => r.kind !== 'job').every((r) => r.name === 'quiet')).toBe(true);
    // Jobs are kept apart, so a burst of calls does not push them out.
    expect(kept.filter((r) => r.kind === 'job').map((r) => r.name)).toEqual(['report']);
    // Another app's runs are its own.
    expect(server.platform.services.cloud.recentRuns(other.appId).some((r) => r.name === 'quiet')).toBe(false);
    expect(server.platform.services.cloud.recentRuns('no-such-app')).toEqual([]);
  });

  /** A cloud runtime of the test's own on the server's home, writing to `log`. */
  const ownRuntime = async (log: import('pino').Logger, idleMs = 300_000) => {
    const { WorkerCloudRuntime } = await import('../src/data/cloud/runtime.js');
    const runtime = new WorkerCloudRuntime({
      home: server.home,
      directory: server.platform.services.backendApps,
      dataApiUrl: () => runsApp.apiURL,
      functionTimeoutMs: 2000,
      jobTimeoutMs: 2000,
      memoryMb: 128,
      idleMs,
      confinement: 'auto',
      accountCount: () => server.platform.services.accounts.count(),
      network: 'none',
      allowHosts: [],
      log,
    });
    return runtime;
  };

  it('starts no worker for data API calls of an app with the template main.js; its hello starts one', async () => {
    const fresh = await createTestApp(server, 'template-only');
    const { liveWorkers } = server.platform.services.cloud as unknown as { liveWorkers(appId: string): number };
    expect((await fresh.call('POST', '/classes/Note', { body: { text: 'no worker' } })).status).toBe(201);
    expect((await fresh.call('GET', '/classes/Note')).body.results).toHaveLength(1);
    expect(liveWorkers.call(server.platform.services.cloud, fresh.appId)).toBe(0);
    expect((await fresh.call('POST', '/functions/hello', { body: { name: 'Ada' } })).body).toEqual({ result: 'Hello, Ada!' });
    expect(liveWorkers.call(server.platform.services.cloud, fresh.appId)).toBe(1);
    // The registry known without the worker is the one the worker reports for that file.
    const { TEMPLATE_REGISTRY } = await import('../src/platform/backendapps/cloudCode/template.js');
    await server.platform.services.cloud.reload(fresh.appId);
    expect(await server.platform.services.cloud.registry(fresh.appId)).toEqual(TEMPLATE_REGISTRY);
  });

  it('stops a worker left without calls, and starts one again for the next call', async () => {
    const { pino } = await import('pino');
    const runtime = await ownRuntime(pino({ level: 'silent' }), 300);
    try {
      expect(runtime.liveWorkers(runsApp.appId)).toBe(0);
      expect(await runtime.run(runsApp.appId, 'function', 'chatty', { params: { tag: 'A', wait: 1 } })).toBe('A');
      expect(runtime.liveWorkers(runsApp.appId)).toBe(1);
      await expect.poll(() => runtime.liveWorkers(runsApp.appId), { timeout: 30_000, interval: 50 }).toBe(0);
      expect(await runtime.run(runsApp.appId, 'function', 'chatty', { params: { tag: 'B', wait: 1 } })).toBe('B');
      expect(runtime.liveWorkers(runsApp.appId)).toBe(1);
    } finally {
      await runtime.close();
    }
  });

  it('still copies all of the worker\'s output into the server log, attributed or not', async () => {
    const { Writable } = await import('node:stream');
    const { pino } = await import('pino');
    const logged: Array<{ msg: string; cloud?: string }> = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (logged.push(JSON.parse(String(chunk))), done()) });
    const runtime = await ownRuntime(pino({ level: 'info' }, sink));
    try {
      expect(await runtime.run(runsApp.appId, 'function', 'chatty', { params: { tag: 'C', wait: 1 } })).toBe('C');
      const lines = () => logged.filter((l) => l.msg === 'cloud code output').map((l) => l.cloud);
      for (let i = 0; i < 40 && !lines().includes('end C'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(lines()).toEqual(expect.arrayContaining(['loading the runs app', 'start C', 'middle C', '[info] via request.log C', 'end C']));
      expect(runtime.recentRuns(runsApp.appId).map((r) => r.lines.length)).toEqual([4]);
    } finally {
      await runtime.close();
    }
  });

  it('knows the registry without waiting once a worker is live, and for an app without cloud code', async () => {
    const { pino } = await import('pino');
    const runtime = await ownRuntime(pino({ level: 'silent' }));
    try {
      // No cloud/main.js: nothing to wait for.
      expect(runtime.registryNow('no-such-app')).toEqual({ functions: [], jobs: [], triggers: {} });
      // Cloud code and no worker yet, then a worker starting: the caller must wait.
      expect(runtime.registryNow(runsApp.appId)).toBeUndefined();
      const loading = runtime.registry(runsApp.appId);
      expect(runtime.registryNow(runsApp.appId)).toBeUndefined();
      const registry = await loading;
      expect(registry.functions).toContain('chatty');
      expect(runtime.registryNow(runsApp.appId)).toBe(registry);
    } finally {
      await runtime.close();
    }
  });
});
