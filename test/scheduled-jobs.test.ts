import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { nextRun } from '../src/data/cloud/schedules.js';
import { createLogger } from '../src/log.js';
import { openPlatform } from '../src/platform/platform.js';
import { startBackyard } from '../src/serve.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { makeHome, removeHome, startTestServer, type TestServer, dashboardCookie } from './helpers/server.js';

/**
 * Scheduled jobs: `_JobSchedule` objects made through the data API (`/cloud_code/jobs`,
 * as Parse Dashboard and Back4App send them), the command line and the dashboard, run by Backyard,
 * each run recorded in `_JobStatus` (read here through the JS SDK), none after removal, and none
 * twice for one slot across a restart.
 */
const exec = promisify(execFile);
const JOB = "Parse.Cloud.job('tick', async (request) => { request.message('ticked with ' + JSON.stringify(request.params)); return 'done'; });\n";

/** Deploys cloud code defining the job `tick` into an app of `server`. */
async function deployTick(server: TestServer, appId: string): Promise<void> {
  const main = path.join(server.home, 'apps', appId, 'cloud', 'cloud', 'main.js');
  fs.mkdirSync(path.dirname(main), { recursive: true });
  fs.writeFileSync(main, JOB);
  await server.platform.services.cloud.reload(appId);
}

/** The app's scheduled runs of `tick`, through the JS SDK with the master key. */
const scheduledRuns = () => new Parse.Query('_JobStatus').equalTo('jobName', 'tick').equalTo('source', 'schedule').find({ useMasterKey: true });

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let server: TestServer;
let app: TestApp;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
  await deployTick(server, app.appId);
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
});
afterAll(async () => server?.close());

describe('job schedules', () => {
  it('runs a job on a short interval, records each run in _JobStatus, and not after the schedule is removed', async () => {
    const created = await app.call('POST', '/cloud_code/jobs', { master: true, body: { job_schedule: { jobName: 'tick', repeatMinutes: 2 / 60, params: '{"n": 1}', description: 'every two seconds' } } });
    expect(created.status).toBe(201);
    const runs = await until('two scheduled runs', async () => (await scheduledRuns()).filter((r) => r.get('status') === 'succeeded'), (r) => r.length >= 2);
    expect(runs[0]!.get('params')).toEqual({ n: 1 });
    expect(runs[0]!.get('message')).toBe('done');
    const listed = await app.call('GET', '/cloud_code/jobs', { master: true });
    expect(listed.body).toMatchObject([{ objectId: created.body.objectId, jobName: 'tick', lastRun: expect.any(Number), repeatMinutes: 2 / 60 }]);
    expect((await app.call('GET', '/cloud_code/jobs/data', { master: true })).body).toEqual({ jobs: ['tick'], in_use: ['tick'] });

    expect((await app.call('DELETE', `/cloud_code/jobs/${created.body.objectId}`, { master: true })).body).toEqual({});
    // A run claimed just before the removal may still finish: count once nothing is running.
    const settled = await until('the last run to finish', scheduledRuns, (r) => r.every((x) => x.get('status') !== 'running'));
    // Three intervals later, no run was added.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    expect((await scheduledRuns()).length).toBe(settled.length);
  });

  it('refuses what it cannot run, naming the field, and is master-key only', async () => {
    const post = (job_schedule: unknown, master = true) => app.call('POST', '/cloud_code/jobs', { master, body: { job_schedule } });
    expect((await post({ jobName: 'nope', repeatMinutes: 5 })).body).toEqual({ code: 142, error: 'job_schedule.jobName names no deployed job: "nope" (the cloud code defines "tick")' });
    expect((await post({ jobName: 'tick', repeatMinutes: 0 })).body).toMatchObject({ code: 142, error: expect.stringContaining('job_schedule.repeatMinutes') });
    expect((await post({ jobName: 'tick', timeOfDay: '25:00' })).body).toMatchObject({ code: 142, error: expect.stringContaining('job_schedule.timeOfDay') });
    expect((await post({ jobName: 'tick', params: '[1]' })).body).toMatchObject({ code: 142, error: expect.stringContaining('job_schedule.params') });
    expect(await post({ jobName: 'tick', repeatMinutes: 5 }, false)).toMatchObject({ status: 403, body: { code: 119 } });
    expect((await app.call('GET', '/classes/_JobSchedule')).body).toMatchObject({ code: 119 });
  });

  it('is scheduled and listed from the command line next to the running server', async () => {
    // The command line opens the same platform as the server (its PostgreSQL database in the PostgreSQL run).
    const databaseUrl = server.platform.config.databaseUrl;
    const env = stdioEnv(server.home, databaseUrl ? { BACKYARD_DATABASE_URL: databaseUrl } : {});
    const { stdout } = await exec(process.execPath, [CLI, 'app', 'schedule', app.appId, 'tick', '--at', '03:15', '--days', '1,3', '--params', '{"from": "cli"}'], { env });
    const id = stdout.trim();
    const listed = (await exec(process.execPath, [CLI, 'app', 'schedules', app.appId], { env })).stdout;
    expect(listed).toContain(`${id}\ttick\tdaily at 03:15 on 1,3\tnever`);
    await exec(process.execPath, [CLI, 'app', 'unschedule', app.appId, id], { env });
    expect((await exec(process.execPath, [CLI, 'app', 'schedules', app.appId], { env })).stdout).not.toContain(id);
    await expect(exec(process.execPath, [CLI, 'app', 'schedule', app.appId, 'nope', '--every', '5'], { env })).rejects.toMatchObject({ stderr: expect.stringContaining('job_schedule.jobName names no deployed job') });
  }, 180_000); // several `backyard` processes, each loading Backyard, on a machine running the other suites
});

describe('the dashboard', () => {
  it('lists the schedules on the Functions and jobs page, adds one from its form and removes it', async () => {
    const form = (body: Record<string, string>, cookie?: string) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url, ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(body).toString(),
      redirect: 'manual' as const,
    });
    const cookie = await dashboardCookie(server);
    const page = async () => (await fetch(`${server.url}/dashboard/apps/${app.appId}/jobs`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page())![1]!;
    const added = await fetch(`${server.url}/dashboard/apps/${app.appId}/jobs/schedules`, form({ _csrf: csrf, jobName: 'tick', repeatMinutes: '30', timeOfDay: '', startAfter: '2030-01-01T00:00:00Z', params: '{"from": "dashboard"}' }, cookie));
    expect(added.status).toBe(303);
    const text = await page();
    expect(text).toContain('Scheduled jobs');
    expect(text).toContain('every 30 minutes from 2030-01-01 00:00');
    expect(text).toContain('{&quot;from&quot;:&quot;dashboard&quot;}');
    const remove = /action="([^"]+\/delete)"/.exec(text)![1]!;
    expect((await fetch(`${server.url}${remove}`, form({ _csrf: csrf }, cookie))).status).toBe(303);
    expect(await page()).toContain('No job is scheduled.');
  });
});

describe('when schedules are due', () => {
  const at = (iso: string) => Date.parse(iso);
  it('a repeating schedule that fell behind runs once, then counts from that run', () => {
    const base = { objectId: 'x', jobName: 'tick', params: '{}', startAfter: '2026-01-01T00:00:00.000Z' };
    expect(nextRun({ ...base, repeatMinutes: 60 })).toBe(at('2026-01-01T00:00:00Z'));
    expect(nextRun({ ...base, repeatMinutes: 60, lastRun: at('2026-01-05T10:07:00Z') })).toBe(at('2026-01-05T11:07:00Z'));
    expect(nextRun({ ...base, timeOfDay: '09:30', lastRun: at('2026-01-05T09:30:00Z') })).toBe(at('2026-01-06T09:30:00Z'));
    // 2026-01-05 is a Monday: with Wednesdays only, the next is the 7th.
    expect(nextRun({ ...base, timeOfDay: '09:30:00.000Z', daysOfWeek: [3], lastRun: at('2026-01-05T09:30:00Z') })).toBe(at('2026-01-07T09:30:00Z'));
    expect(nextRun({ ...base, timeOfDay: '09:30', daysOfWeek: [false, false, false, false, false, false, true], lastRun: at('2026-01-05T09:30:00Z') })).toBe(at('2026-01-10T09:30:00Z'));
    expect(nextRun({ ...base })).toBe(at('2026-01-01T00:00:00Z'));
    expect(nextRun({ ...base, lastRun: at('2026-01-01T00:00:01Z') })).toBeUndefined();
  });

  it('a restart does not run a slot again: the claim is on disk before the job starts', async () => {
    const home = makeHome();
    const open = async () => {
      const config = loadConfig({ home, port: 0, host: '127.0.0.1' }, { BACKYARD_LOG_LEVEL: 'silent' });
      const platform = await openPlatform(config, createLogger('silent'));
      const http = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
      return { platform, http, home, url: http.url, close: async () => (await http.close(), await platform.close()) };
    };
    let first = await open();
    try {
      await first.platform.services.accounts.create('alice');
      const made = await createTestApp(first as unknown as TestServer);
      await deployTick({ home, platform: first.platform } as unknown as TestServer, made.appId);
      // Once now, and every hour from now: each runs at once, then not again for the hour.
      for (const job_schedule of [{ jobName: 'tick', params: '{"once": true}' }, { jobName: 'tick', repeatMinutes: 60 }]) {
        expect((await made.call('POST', '/cloud_code/jobs', { master: true, body: { job_schedule } })).status).toBe(201);
      }
      const count = async () => ((await made.call('GET', `/classes/_JobStatus?${new URLSearchParams({ where: '{"source":"schedule"}', count: '1', limit: '0' })}`, { master: true })).body as { count: number }).count;
      await until('both schedules to run', count, (n) => n === 2);
      await first.close();
      first = await open();
      // The restarted server has found the app's schedules (its folder says so) and checked them several times.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const after = await fetch(`${first.url}/data/classes/_JobStatus?${new URLSearchParams({ where: '{"source":"schedule"}', count: '1', limit: '0' })}`, {
        headers: { 'x-parse-application-id': made.appId, 'x-parse-master-key': made.keys.masterKey },
      });
      expect(((await after.json()) as { count: number }).count).toBe(2);
    } finally {
      await first.close();
      removeHome(home);
    }
  });
});
