import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { openPlatform, type Platform } from '../src/platform/platform.js';
import { startBackyard } from '../src/serve.js';

/**
 * Cloud code workers: the first call of an app (a worker's cold start), a function round
 * trip, a data API call made from cloud code, and the memory of many apps called once and left idle,
 * for the sandbox and for Node's permission model alone, each against baselines measured in the same
 * run: a bare `node -e 0` start (what any worker costs at least) and the server with no worker.
 * `BENCH_CLOUD_APPS` apps (default 100) are called once each; workers stop after 2 s idle here.
 */
const APPS = Number(process.env.BENCH_CLOUD_APPS ?? 100);
const MAIN = [
  "Parse.Cloud.define('hi', () => 'hi');",
  "Parse.Cloud.define('count', () => new Parse.Query('Thing').count({ useMasterKey: true }));",
  "Parse.Cloud.define('spin', () => { const end = Date.now() + 3000; while (Date.now() < end) {} return 'spun'; });",
  '',
].join('\n');

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Resident memory, in MiB, of every process below this one (the workers and their sandboxes). */
function childrenRssMib(): number {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,rss=,comm='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] !== 'ps') // not the ps that reads the table
    .map((cols) => cols.slice(0, 3).map(Number) as [number, number, number]);
  const below = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of rows) if (below.has(ppid) && !below.has(pid)) (below.add(pid), (grew = true));
  }
  return rows.filter(([pid]) => pid !== process.pid && below.has(pid)).reduce((sum, [, , rss]) => sum + rss, 0) / 1024;
}

/** Median milliseconds of `node -e 0`: the floor of any worker's start. */
async function bareNodeStart(rounds = 10): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    await new Promise((resolve) => spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' }).once('exit', resolve));
    samples.push(ms(start));
  }
  return median(samples);
}

async function measureMode(confinement: 'sandbox' | 'none', bare: number): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-cloud-'));
  const config = loadConfig(
    { home, port: 0, host: '127.0.0.1' },
    { BACKYARD_LOG_LEVEL: 'silent', BACKYARD_CLOUD_CONFINEMENT: confinement, BACKYARD_CLOUD_IDLE_MS: '2000' },
  );
  const platform: Platform = await openPlatform(config, createLogger('silent'));
  const server = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
  const { cloud, backendApps, accounts } = platform.services;
  const owner = (await accounts.ensure('bench')).id;
  try {
    const apps: string[] = [];
    const cold: number[] = [];
    for (let i = 0; i < APPS; i++) {
      const { appId } = await backendApps.create(owner, `cloud-${i}`);
      fs.writeFileSync(path.join(home, 'apps', appId, 'cloud', 'cloud', 'main.js'), MAIN);
      apps.push(appId);
      const start = process.hrtime.bigint();
      await cloud.run(appId, 'function', 'hi', { params: {} });
      cold.push(ms(start));
    }
    // Workers of the first apps may already have gone idle: count those live at this moment.
    const busyWorkers = apps.reduce((n, a) => n + cloud.liveWorkers(a), 0);
    const busyMib = childrenRssMib();
    const roundTrip: number[] = [];
    const dataCall: number[] = [];
    for (let i = 0; i < 300; i++) {
      let start = process.hrtime.bigint();
      await cloud.run(apps[0]!, 'function', 'hi', { params: {} });
      roundTrip.push(ms(start));
      if (i % 3 === 0) {
        start = process.hrtime.bigint();
        await cloud.run(apps[0]!, 'function', 'count', { params: {} });
        dataCall.push(ms(start));
      }
    }
    // While one call loops for 3 s, 20 calls of another function of the same app: how long they wait.
    const spinning = cloud.run(apps[0]!, 'function', 'spin', { params: {} });
    const held = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const start = process.hrtime.bigint();
        await cloud.run(apps[0]!, 'function', 'hi', { params: {} });
        return ms(start);
      }),
    );
    await spinning;
    // Left idle: every worker stops, and the memory goes back to that of a server with none.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && apps.some((a) => cloud.liveWorkers(a) > 0)) await new Promise((r) => setTimeout(r, 200));
    const idleWorkers = apps.reduce((n, a) => n + cloud.liveWorkers(a), 0);
    const idleMib = childrenRssMib();
    const coldMedian = median(cold);
    console.log(
      `${confinement.padEnd(8)} cold start ${coldMedian.toFixed(0)} ms (${(coldMedian / bare).toFixed(1)}× a bare node start)` +
        ` · round trip ${median(roundTrip).toFixed(2)} ms · data API call from cloud code ${median(dataCall).toFixed(2)} ms` +
        ` · 20 calls beside a 3 s loop: median ${median(held).toFixed(0)} ms, slowest ${Math.max(...held).toFixed(0)} ms` +
        ` · ${APPS} apps called once, ${busyWorkers} workers still live: ${busyMib.toFixed(0)} MiB (${(busyMib / Math.max(1, busyWorkers)).toFixed(1)} per worker)` +
        ` · idle 2 s later: ${idleWorkers} workers, ${idleMib.toFixed(0)} MiB (a server with no worker: 0)`,
    );
  } finally {
    await server.close();
    await platform.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

export async function cloudBench(): Promise<void> {
  const bare = await bareNodeStart();
  console.log(`bare node -e 0 start: ${bare.toFixed(0)} ms`);
  await measureMode('none', bare);
  await measureMode('sandbox', bare);
}
