import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { openPlatform } from '../src/platform/platform.js';
import { startBackyard } from '../src/serve.js';

/**
 * The cost of management operations over real HTTP, as ratios against a baseline
 * measured in the same run on the same server (GET /healthz: the HTTP stack alone), because these
 * machines are noisy and absolute times mean little. Prints one line per case: median microseconds
 * per request and the ratio to the baseline.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000);

async function measure(run: (i: number) => Promise<unknown>, rounds = ROUNDS): Promise<number> {
  for (let i = 0; i < 100; i++) await run(-i - 1); // warm up
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    await run(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

export async function managementBench(): Promise<void> {
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-'));
const config = loadConfig({ home, port: 0, host: '127.0.0.1' }, { BACKYARD_LOG_LEVEL: 'silent' });
const platform = await openPlatform(config, createLogger('silent'));
const { token } = await platform.services.accounts.create('bench');
const server = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
const auth = { authorization: `Bearer ${token}` };
const get = async (p: string) => (await fetch(`${server.url}${p}`, { headers: auth })).arrayBuffer();

try {
  for (let i = 0; i < 200; i++) await platform.services.backendApps.create((await platform.services.accounts.findByLogin('bench'))!.id, `seed-${i}`);
  const baseline = await measure(() => get('/healthz'));
  const cases: Array<[string, (i: number) => Promise<unknown>, number?]> = [
    ['GET /v1/backend-apps (200 apps)', () => get('/v1/backend-apps')],
    ['GET /v1/backend-apps?app-name=…', () => get('/v1/backend-apps?app-name=seed-7')],
    ['GET /v1/guides/<title>', () => get(`/v1/guides/${platform.services.guides.titles()[0]}`)],
    ['POST /v1/backend-apps (fsync per app)', (i) =>
      fetch(`${server.url}/v1/backend-apps`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ appName: `bench-${i}` }),
      }).then((r) => r.arrayBuffer()), Math.min(ROUNDS, 500)],
  ];
  console.log(`baseline GET /healthz: ${baseline.toFixed(0)} µs median over ${ROUNDS} requests`);
  for (const [name, run, rounds] of cases) {
    const median = await measure(run, rounds);
    console.log(`${name.padEnd(40)} ${median.toFixed(0).padStart(6)} µs  ${(median / baseline).toFixed(2)}× baseline`);
  }
} finally {
  await server.close();
  await platform.close();
  fs.rmSync(home, { recursive: true, force: true });
}
}
