/**
 * A find's objects die young in a real `backyard serve`, also after a burst that made V8 pretenure
 * (src/heapFlags.ts): the server runs under `node --trace-gc --trace-gc-nvp`, a transactional batch
 * of 1,000 creates goes first (the burst), then finds of 100 objects one after the other, and the
 * scavenges during those finds must each move little to the old generation (`promoted`, in bytes).
 * With V8's allocation-site pretenuring on, on PostgreSQL, each of them promoted about 1.9 MB: every
 * request's rows, held from pretenured objects until the next full GC. Without it, about 14 KB.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/mcpClients.js';
import { makeHome, postgresDatabase, removeHome } from './helpers/server.js';
import { freePort, ServeProcess } from './helpers/serveProcess.js';

const exec = promisify(execFile);

/** At most this many bytes promoted per scavenge on average while the finds run. */
const PROMOTED_LIMIT = 256 * 1024;
/** Finds sent at most while waiting for scavenges (one comes every 40 to 70 finds of 100 objects). */
const MAX_FINDS = 20_000;

describe('the objects of finds after a burst of creates', () => {
  let server: ServeProcess | undefined;
  let home: string;
  let drop: () => Promise<void> = async () => undefined;
  let trace = '';
  let headers: Record<string, string> = {};

  beforeAll(async () => {
    home = makeHome();
    const database = await postgresDatabase();
    drop = database.drop;
    const env = { ...process.env, BACKYARD_HOME: home, BACKYARD_LOG_LEVEL: 'warn', ...database.env };
    const token = (await exec(process.execPath, [CLI, 'account', 'create', 'gc'], { env })).stdout.trim();
    server = new ServeProcess(await freePort(), token, () => env);
    await server.serve([], { nodeArgs: ['--trace-gc', '--trace-gc-nvp'], stdout: (text) => (trace += text) });
    const made = await fetch(`${server.url}/v1/backend-apps`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"appName":"gc"}' });
    expect(made.status).toBe(201);
    const { appId, restKey } = (await made.json()) as { appId: string; restKey: string };
    headers = { 'x-parse-application-id': appId, 'x-parse-rest-api-key': restKey, 'content-type': 'application/json' };
  }, 120_000);

  afterAll(async () => {
    if (server?.running) await server.stop('SIGTERM');
    await drop();
    removeHome(home);
  });

  it('are not promoted by the scavenges', async () => {
    const requests = Array.from({ length: 1000 }, (_, i) => ({ method: 'POST', path: '/data/classes/Item', body: { category: `c${i % 10}`, score: i, title: `item ${i}` } }));
    const base = server!.url;
    const batch = await fetch(`${base}/data/batch`, { method: 'POST', headers, body: JSON.stringify({ requests, transaction: true }) });
    expect(batch.status).toBe(200);

    const find = `${base}/data/classes/Item?where=${encodeURIComponent('{"category":"c3"}')}&limit=100`;
    let mark = trace.length;
    /** `promoted` of each scavenge traced since `mark`, from whole lines only. */
    const scavenges = () => [...trace.slice(mark, trace.lastIndexOf('\n')).matchAll(/ gc=s .*?promoted=(\d+)/g)].map((m) => Number(m[1]));
    // Warm up first: what the batch left in the young generation is promoted by the first scavenges.
    let finds = 0;
    while (scavenges().length < 2 && finds++ < MAX_FINDS) await fetch(find, { headers }).then((r) => r.arrayBuffer());
    mark = trace.length;
    for (finds = 0; scavenges().length < 6 && finds < MAX_FINDS; finds++) {
      const answer = (await (await fetch(find, { headers })).json()) as { results: unknown[] };
      expect(answer.results).toHaveLength(100);
    }
    expect(scavenges().length, `scavenges traced during ${finds} finds (is --trace-gc-nvp's output reaching the test?)`).toBeGreaterThanOrEqual(6);
    const promoted = scavenges();
    const average = promoted.reduce((a, b) => a + b, 0) / promoted.length;
    expect(average, `bytes promoted per scavenge: ${promoted.join(', ')}`).toBeLessThan(PROMOTED_LIMIT);
  }, 180_000);
});
