import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { packageRoot } from '../src/packageRoot.js';
import { postgresBin, startParseServer, type ParseServerPeer } from './parseServer.js';
import { freePort } from './postgres.js';
import { waitFor } from './backyardServer.js';

/**
 * LiveQuery: `SUBSCRIBERS` WebSocket clients subscribed to one class; a REST create is
 * timed from its send to each subscriber's receipt of the `create` event (p50, p99 over every
 * receipt), then a burst of creates from 8 writers measures the events one process delivers per
 * second. The same against the bare limit (a bare node:http + ws server that broadcasts each POST to
 * its clients) and, when PostgreSQL is installed, Parse Server 9's LiveQuery server, in the same run.
 */
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100);
const WRITES = Number(process.env.BENCH_LQ_WRITES ?? 200);
const BURST = Number(process.env.BENCH_LQ_BURST ?? 500);
const CLI = path.join(packageRoot(), 'dist/src/cli.js');

/** A bare node:http + ws server: a POST's body is sent to every connected socket, then answered. */
const BARE = `
const http = require('node:http');
const { WebSocketServer } = require(${JSON.stringify(path.join(packageRoot(), 'node_modules/ws'))});
let n = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const objectId = String(++n);
    const event = JSON.stringify({ op: 'create', requestId: 1, object: { ...JSON.parse(body || '{}'), objectId } });
    for (const ws of wss.clients) ws.send(event);
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ objectId }));
  });
});
const wss = new WebSocketServer({ server });
wss.on('connection', (ws) => ws.on('message', (m) => {
  const msg = JSON.parse(m.toString());
  ws.send(JSON.stringify(msg.op === 'connect' ? { op: 'connected', clientId: 1 } : { op: 'subscribed', requestId: msg.requestId }));
}));
server.listen(Number(process.argv[1]), '127.0.0.1');
`;

interface Target {
  name: string;
  rest: string;
  ws: string;
  headers: Record<string, string>;
  connect: Record<string, string>;
}

interface Measured {
  p50: number;
  p99: number;
  eventsPerSecond: number;
}

/** Opens the subscribers, then times single creates and a burst. */
async function measure(target: Target): Promise<Measured> {
  const receipts = new Map<string, number[]>();
  const waiters = new Map<string, () => void>();
  const sockets: WebSocket[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const ws = new WebSocket(target.ws);
    await new Promise<void>((resolve, reject) => {
      ws.on('error', reject);
      ws.on('message', (raw) => {
        const msg = JSON.parse(raw.toString()) as { op: string; object?: { objectId: string } };
        if (msg.op === 'connected') ws.send(JSON.stringify({ op: 'subscribe', requestId: 1, query: { className: 'Live', where: {} } }));
        else if (msg.op === 'subscribed') resolve();
        else if (msg.op === 'create' && msg.object) {
          const list = receipts.get(msg.object.objectId) ?? [];
          list.push(performance.now());
          receipts.set(msg.object.objectId, list);
          if (list.length === SUBSCRIBERS) waiters.get(msg.object.objectId)?.();
        } else if (msg.op === 'error') reject(new Error(JSON.stringify(msg)));
      });
      ws.on('open', () => ws.send(JSON.stringify({ op: 'connect', ...target.connect })));
    });
    sockets.push(ws);
  }
  const create = async (): Promise<{ objectId: string; sent: number }> => {
    const sent = performance.now();
    const response = await fetch(`${target.rest}/classes/Live`, { method: 'POST', headers: target.headers, body: JSON.stringify({ n: 1 }) });
    const { objectId } = (await response.json()) as { objectId: string };
    return { objectId, sent };
  };
  const delivered = (objectId: string) =>
    (receipts.get(objectId)?.length ?? 0) >= SUBSCRIBERS ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(objectId, resolve));

  const latencies: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const { objectId, sent } = await create();
    await delivered(objectId);
    for (const at of receipts.get(objectId)!) latencies.push(at - sent);
  }
  latencies.sort((a, b) => a - b);

  const started = performance.now();
  const ids: string[] = [];
  let issued = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (issued < BURST) {
        issued++;
        ids.push((await create()).objectId);
      }
    }),
  );
  await Promise.all(ids.map(delivered));
  const seconds = (performance.now() - started) / 1000;
  for (const ws of sockets) ws.close();
  return { p50: latencies[Math.floor(latencies.length / 2)]!, p99: latencies[Math.floor(latencies.length * 0.99)]!, eventsPerSecond: (BURST * SUBSCRIBERS) / seconds };
}

export async function liveQueryBench(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-lq-'));
  const children: ChildProcess[] = [];
  let peer: ParseServerPeer | undefined;
  try {
    const env = { ...process.env, BACKYARD_HOME: home, BACKYARD_LOG_LEVEL: 'warn' };
    const token = execFileSync(process.execPath, [CLI, 'account', 'create', 'bench'], { env }).toString().trim();
    const port = await freePort();
    children.push(spawn(process.execPath, [CLI, 'serve', '--port', String(port)], { env, stdio: 'inherit' }));
    const base = `http://localhost:${port}`;
    await waitFor(`${base}/healthz`);
    const app = (await (
      await fetch(`${base}/v1/backend-apps`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"appName":"bench"}' })
    ).json()) as { appId: string; restKey: string; javascriptKey: string };
    execFileSync(process.execPath, [CLI, 'app', 'config', app.appId, 'liveQuery.classNames=["Live"]'], { env });

    const barePort = await freePort();
    children.push(spawn(process.execPath, ['-e', BARE, String(barePort)], { stdio: 'inherit' }));
    await waitFor(`http://127.0.0.1:${barePort}/`);

    const targets: Target[] = [
      {
        name: 'Backyard',
        rest: `${base}/data`,
        ws: `ws://localhost:${port}/data`,
        headers: { 'x-parse-application-id': app.appId, 'x-parse-rest-api-key': app.restKey, 'content-type': 'application/json' },
        connect: { applicationId: app.appId, javascriptKey: app.javascriptKey },
      },
      { name: 'bare', rest: `http://127.0.0.1:${barePort}`, ws: `ws://127.0.0.1:${barePort}/`, headers: { 'content-type': 'application/json' }, connect: {} },
    ];
    if (process.env.BENCH_PEER !== 'none' && postgresBin()) {
      peer = await startParseServer({ durable: true, liveQueryClassNames: ['Live'] });
      targets.push({
        name: 'Parse Server',
        rest: peer.url,
        ws: peer.url.replace(/^http/, 'ws'),
        headers: { 'x-parse-application-id': peer.keys.appId, 'x-parse-rest-api-key': peer.keys.restKey, 'content-type': 'application/json' },
        connect: { applicationId: peer.keys.appId, javascriptKey: peer.keys.javascriptKey },
      });
    }
    console.log(`${SUBSCRIBERS} subscribers of one class; ${WRITES} sequential creates timed from send to each receipt; then ${BURST} creates from 8 writers`);
    const results = new Map<string, Measured>();
    for (const target of targets) results.set(target.name, await measure(target));
    for (const [name, r] of results) {
      // Ratios of Backyard to each baseline: its latency over theirs (lower is better), its events/s over theirs.
      const vs = name === 'Backyard' ? [...results].filter(([n]) => n !== name).map(([n, o]) => `p50 ${(r.p50 / o.p50).toFixed(2)}× and events/s ${(r.eventsPerSecond / o.eventsPerSecond).toFixed(2)}× ${n}`).join('; ') : '';
      console.log(`${name.padEnd(14)} p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.eventsPerSecond.toFixed(0)} events/s${vs ? `  (${vs})` : ''}`);
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await peer?.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}
