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
  app = createTestApp(server, 'cloud-runtime');
  other = createTestApp(server, 'cloud-other');
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
    const signup = await app.call('POST', '/users', { body: { username: 'cloudy', password: 'pw' } });
    const asUser = await app.call('POST', '/functions/whoami', { body: {}, sessionToken: signup.body.sessionToken });
    expect(asUser.body.result).toEqual({ master: false, user: 'cloudy' });
    const objectResult = await app.call('POST', '/functions/returnObject', { body: {} });
    expect(objectResult.body.result).toMatchObject({ __type: 'Object', className: 'Thing', x: 1, objectId: expect.any(String) });
  });

  it('a function that loops forever is stopped with 141 while other apps keep answering, and the worker comes back', async () => {
    const spinning = app.call('POST', '/functions/spin', { body: {} });
    const meanwhile = await other.call('POST', '/functions/ping', { body: {} });
    expect(meanwhile.body).toEqual({ result: 'pong' });
    const res = await spinning;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 141, error: expect.stringMatching(/longer than 2000 ms/) });
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
    for (let i = 0; i < 50; i++) {
      status = (await app.call('GET', `/classes/_JobStatus/${jobId}`, { master: true })).body;
      if (status.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toMatchObject({ jobName: 'tally', status: 'succeeded', message: expect.stringMatching(/^counted \d+ for tester$/), params: { who: 'tester' } });
    expect(status.finishedAt.__type).toBe('Date');
  });

  it('a failing job is recorded as failed; jobs need the master key', async () => {
    const started = await app.call('POST', '/jobs/broken', { body: {}, master: true });
    const jobId = started.headers.get('x-parse-job-status-id')!;
    let status: any;
    for (let i = 0; i < 50; i++) {
      status = (await app.call('GET', `/classes/_JobStatus/${jobId}`, { master: true })).body;
      if (status.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
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
    const broken = createTestApp(server, 'cloud-broken');
    await expect(deploy(broken, { 'cloud/main.js': "throw new Error('bad start');\n" })).rejects.toThrow(/failed to load: Error: bad start/);
    const res = await broken.call('POST', '/functions/anything', { body: {} });
    expect(res.body).toMatchObject({ code: 141, error: expect.stringContaining('bad start') });
  });

  it('loads files written with import/export, and hands code that requires the SDK the same global instance', async () => {
    const esm = createTestApp(server, 'cloud-esm');
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
      const target = createTestApp(server, 'cloud-mcp');
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: any; content: Array<{ text: string }> };
        expect(result.isError ?? false, result.content[0]?.text).toBe(false);
        return result.structuredContent;
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
