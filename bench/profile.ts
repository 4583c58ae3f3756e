import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { freePort } from './postgres.js';

/**
 * BENCH_PROFILE: `missed` (the default) profiles, after its rounds, each workload that missed its
 * goal; `all` every workload; `off` none. A profiled workload's server and its bare baseline are
 * each loaded once more, for ROUND_SECONDS at the same concurrency, while their main thread is
 * sampled, so that a missed goal comes with where each server spent its time.
 */
export const PROFILE_MODE: 'missed' | 'all' | 'off' = profileMode(process.env.BENCH_PROFILE);

function profileMode(value: string | undefined): 'missed' | 'all' | 'off' {
  if (value === undefined || value === '' || value === 'missed') return 'missed';
  if (value === 'all' || value === 'off') return value;
  throw new Error(`BENCH_PROFILE must be missed, all or off, not ${JSON.stringify(value)}`);
}

/** What Node prints on stderr when an inspector listens or a client attaches and leaves, dropped from a child's stderr. */
const INSPECTOR_NOTICE = /^(Debugger listening on ws:|Debugger attached\.|Debugger ending on ws:|Waiting for the debugger to disconnect|For help, see: https:\/\/nodejs\.org\/en\/docs\/inspector)/;

/**
 * Starts a bench's child server: `node <args>`, with stdout as `stdout` says and stderr passed on
 * line by line to `options.stderr` (process.stderr by default). Unless BENCH_PROFILE is `off`, the
 * child has an inspector on a free loopback port for `profileWhile` (one nobody attached to costs
 * nothing measurable), and Node's notices about it are dropped from its stderr.
 * @returns the child and its inspector's port (undefined when not profiling).
 */
export async function spawnNode(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdout: 'ignore' | 'inherit'; stderr?: Writable },
): Promise<{ child: ChildProcess; inspectPort?: number }> {
  const stderr = options.stderr ?? process.stderr;
  const inspectPort = PROFILE_MODE === 'off' ? undefined : await freePort();
  const inspect = inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectPort}`];
  const child = spawn(process.execPath, [...inspect, ...args], { env: options.env, stdio: ['ignore', options.stdout, 'pipe'] });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!INSPECTOR_NOTICE.test(line)) stderr.write(`${line}\n`);
  });
  return { child, inspectPort };
}

/** A V8 CPU profile as the inspector protocol's `Profiler.stop` gives it (the fields read here). */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a server's main thread spent its time, in microseconds per request answered. */
export interface Breakdown {
  requests: number;
  seconds: number;
  /** By category (CATEGORIES), µs per request. */
  micros: Record<Category, number>;
  /** The server's own functions (Backyard's `src/`, or a bare server's script) with the most self time, µs per request. */
  ownTop: Array<{ name: string; micros: number }>;
  /** Native functions (no script: socket writes and reads, crypto...) with the most self time, µs per request. */
  nativeTop: Array<{ name: string; micros: number }>;
}

/**
 * The categories of a sample, by the function it was taken in (its self time):
 * - own: the server's own code (Backyard's `dist/src/`, a bare server's `node -e` script).
 * - driver: node-postgres, its protocol and pool, better-sqlite3's JavaScript.
 * - libraries: every other package (the router, graphql...).
 * - node: Node.js's own JavaScript (`node:` modules: http, streams, net).
 * - native: functions with no script (the socket's `writev`, which on loopback does the receiver's
 *   TCP work too; reads; crypto; better-sqlite3's `get`, `all` and `run`, which run the statements
 *   on SQLite).
 * - gc, program (V8 itself), idle (waiting for the network, the database or the disk).
 */
export const CATEGORIES = ['own', 'driver', 'libraries', 'node', 'native', 'gc', 'program', 'idle'] as const;
export type Category = (typeof CATEGORIES)[number];

const DRIVERS = /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|better-sqlite3)\//;

function categoryOf(frame: { functionName: string; url: string }): Category {
  const { functionName, url } = frame;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)' || functionName === '(root)') return 'program';
  if (url === '') return 'native';
  if (url.startsWith('node:')) return 'node';
  if (DRIVERS.test(url)) return 'driver';
  if (url.includes('/node_modules/')) return 'libraries';
  return 'own';
}

/** `file.js:line` of a frame's script, from `src/` on for Backyard's. */
const placeOf = (url: string, line: number) => `${url.includes('/src/') ? url.slice(url.lastIndexOf('/src/') + 1) : url}:${line + 1}`;

/**
 * Sums a profile's samples by category and by function, each sample weighted by the time to the
 * next (V8's `timeDeltas`, µs), and divides by the requests answered while it ran.
 */
export function breakdown(profile: CpuProfile, requests: number): Breakdown {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const micros = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const own = new Map<string, number>();
  const native = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]!)!;
    const weight = profile.timeDeltas[i + 1] ?? 0;
    const category = categoryOf(frame);
    micros[category] += weight;
    if (category === 'own') {
      const name = `${frame.functionName || '(anonymous)'} ${placeOf(frame.url, frame.lineNumber)}`;
      own.set(name, (own.get(name) ?? 0) + weight);
    } else if (category === 'native') native.set(frame.functionName, (native.get(frame.functionName) ?? 0) + weight);
  }
  const perRequest = (us: number) => us / Math.max(1, requests);
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, micros: perRequest(us) }));
  for (const c of CATEGORIES) micros[c] = perRequest(micros[c]);
  return { requests, seconds: (profile.endTime - profile.startTime) / 1e6, micros, ownTop: top(own, 4), nativeTop: top(native, 2) };
}

/**
 * Samples the main thread of the Node process whose inspector listens on `inspectPort` (started
 * with `inspectorArgs`) every 500 µs while `during` runs, over the inspector protocol's Profiler
 * domain (https://chromedevtools.github.io/devtools-protocol/v8/Profiler/).
 * @param during loads the server and resolves to the number of requests it answered.
 * @throws Error when the inspector does not answer or refuses a command.
 */
export async function profileWhile(inspectPort: number, during: () => Promise<number>): Promise<Breakdown> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await once(ws, 'open');
  const pending = new Map<number, { resolve: (result: any) => void; reject: (error: Error) => void }>();
  let lastId = 0;
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id!);
    if (message.error) waiting.reject(new Error(`inspector: ${message.error.message}`));
    else waiting.resolve(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve, reject) => {
      pending.set(++lastId, { resolve, reject });
      ws.send(JSON.stringify({ id: lastId, method, params }));
    });
  try {
    await send('Profiler.enable');
    await send('Profiler.setSamplingInterval', { interval: 500 });
    await send('Profiler.start');
    const requests = await during();
    const { profile } = (await send('Profiler.stop')) as { profile: CpuProfile };
    await send('Profiler.disable');
    return breakdown(profile, requests);
  } finally {
    ws.close();
  }
}

const LABELS: Record<Category, string> = {
  own: 'own code',
  driver: 'driver',
  libraries: 'libraries',
  node: 'Node.js',
  native: 'native',
  gc: 'GC',
  program: 'V8',
  idle: 'idle',
};

/**
 * One side's profile as printed lines: µs per request by category (busy ones, then idle), the
 * native functions and the server's own functions with the most time.
 */
export function formatBreakdown(side: string, b: Breakdown): string[] {
  const f = (us: number) => us.toFixed(1);
  const busy = CATEGORIES.filter((c) => c !== 'idle').reduce((sum, c) => sum + b.micros[c], 0);
  const parts = CATEGORIES.filter((c) => c !== 'idle').map((c) => `${LABELS[c]} ${f(b.micros[c])}`);
  const lines = [
    `  profile of ${side} (${b.seconds.toFixed(1)} s, ${b.requests} requests), µs of its main thread per request: busy ${f(busy)} = ${parts.join(', ')}; idle ${f(b.micros.idle)}`,
  ];
  if (b.nativeTop.length) lines.push(`    native: ${b.nativeTop.map((t) => `${t.name} ${f(t.micros)}`).join(', ')}`);
  if (b.ownTop.length) lines.push(`    own code: ${b.ownTop.map((t) => `${t.name} ${f(t.micros)}`).join(', ')}`);
  return lines;
}
