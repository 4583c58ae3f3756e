/**
 * A find's objects die young in a real `backyard serve`, also after a burst that made V8 pretenure
 * (src/heapFlags.ts): the server runs under `node --trace-gc --trace-gc-nvp`, a transactional batch
 * of 1,000 creates goes first (the burst), then finds of 100 objects one after the other, and the
 * scavenges during those finds must each move little to the old generation (`promoted`, in bytes).
 * With V8's allocation-site pretenuring on, on PostgreSQL, each of them promoted about 1.9 MB: every
 * request's rows, held from pretenured objects until the next full GC. Without it, about 14 KB.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/mcpClients.js';
import { makeHome, postgresDatabase, removeHome } from './helpers/server.js';
import { freePort } from './helpers/serveProcess.js';

const exec = promisify(execFile);

/** At most this many bytes promoted per scavenge on average while the finds run. */
const PROMOTED_LIMIT = 256 * 1024;

describe('the objects of finds after a burst of creates', () => {
  let child: ChildProcess;
  let home: string;
  let drop: () => Promise<void> = async () => undefined;
  let trace = '';
  let base = '';
  let headers: Record<string, string> = {};

  beforeAll(async () => {
    home = makeHome();
    const database = await postgresDatabase();
    drop = database.drop;
    const env = { ...process.env, BACKYARD_HOME: home, BACKYARD_LOG_LEVEL: 'warn', ...database.env };
    const token = (await exec(process.execPath, [CLI, 'account', 'create', 'gc'], { env })).stdout.trim();
    const port = await freePort();
    child = spawn(process.execPath, ['--trace-gc', '--trace-gc-nvp', CLI, 'serve', '--port', String(port)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (trace += text));
    base = `http://127.0.0.1:${port}`;
    for (let started = Date.now(); ; ) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        if (Date.now() - started > 60_000 || child.exitCode !== null) throw new Error('backyard serve did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const made = await fetch(`${base}/v1/backend-apps`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"appName":"gc"}' });
    const { appId, restKey } = (await made.json()) as { appId: string; restKey: string };
    headers = { 'x-parse-application-id': appId, 'x-parse-rest-api-key': restKey, 'content-type': 'application/json' };
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await drop();
    removeHome(home);
  });

  it('are not promoted by the scavenges', async () => {
    const requests = Array.from({ length: 1000 }, (_, i) => ({ method: 'POST', path: '/data/classes/Item', body: { category: `c${i % 10}`, score: i, title: `item ${i}` } }));
    const batch = await fetch(`${base}/data/batch`, { method: 'POST', headers, body: JSON.stringify({ requests, transaction: true }) });
    expect(batch.status).toBe(200);

    const find = `${base}/data/classes/Item?where=${encodeURIComponent('{"category":"c3"}')}&limit=100`;
    let mark = trace.length;
    /** `promoted` of each scavenge traced since `mark`, from whole lines only. */
    const scavenges = () => [...trace.slice(mark, trace.lastIndexOf('\n')).matchAll(/ gc=s .*?promoted=(\d+)/g)].map((m) => Number(m[1]));
    // Warm up first: what the batch left in the young generation is promoted by the first scavenges.
    while (scavenges().length < 2) await fetch(find, { headers }).then((r) => r.arrayBuffer());
    mark = trace.length;
    while (scavenges().length < 6) {
      const answer = (await (await fetch(find, { headers })).json()) as { results: unknown[] };
      expect(answer.results).toHaveLength(100);
    }
    const promoted = scavenges();
    const average = promoted.reduce((a, b) => a + b, 0) / promoted.length;
    expect(average, `bytes promoted per scavenge: ${promoted.join(', ')}`).toBeLessThan(PROMOTED_LIMIT);
  }, 180_000);
});
