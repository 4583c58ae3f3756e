import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { freePort } from './postgres.js';
import { formatBreakdown, PROFILE_MODE, profileWhile } from './profile.js';
import { waitFor } from './backyardServer.js';
import type { DatabaseKind } from './backyardServer.js';

/** Seconds of a single `load` when its options give none (BENCH_SECONDS). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/**
 * Each workload runs in ROUNDS rounds, each next to its baselines: on a machine whose speed drifts
 * from one second to the next, a ratio taken within a round compares like with like.
 */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 2);
/**
 * Seconds each side of a workload is loaded before its rounds, unmeasured (BENCH_WARMUP_SECONDS):
 * a server's first thousands of requests of a new kind run before V8 has optimized their path
 * (measured here: a find of 100 rows ran at half its later rate for its first 3 s), on Backyard
 * and Parse Server alike.
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One autocannon run: mean requests per second, p50 and p99 latency (ms), and failed or non-2xx answers. */
export interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Loads one target with autocannon for BENCH_SECONDS (or `options.duration`) from this process. */
export async function load(options: autocannon.Options): Promise<Result> {
  const r = await autocannon({ duration: SECONDS, ...options });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/**
 * The baselines: a bare `node:http` server answering a fixed JSON body; given a file (argv[2]), the
 * same server made durable in the cheapest way there is: before each answer it overwrites 4 KiB of
 * that file (written in full beforehand, as a reused WAL is) and waits for `fdatasync` on the event
 * loop. No server that answers a write only once it is on disk can beat the second one here.
 */
const BARE_SERVER = `
  const fs = require('node:fs');
  const body = JSON.stringify({ objectId: 'abcdefghij', createdAt: '2026-11-21T00:00:00.000Z' });
  const file = process.argv[2];
  const fd = file ? fs.openSync(file, 'w+') : undefined;
  const page = Buffer.alloc(4096, 1);
  if (fd !== undefined) { fs.writeSync(fd, Buffer.alloc(4 * 1024 * 1024)); fs.fdatasyncSync(fd); }
  let n = 0;
  require('node:http').createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (fd !== undefined) { fs.writeSync(fd, page, 0, page.length, (n++ % 1024) * 4096); fs.fdatasyncSync(fd); }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  }).listen(Number(process.argv[1]), '127.0.0.1');
`;

/**
 * Starts the bare server (BARE_SERVER above) as a child process; with `durableFile`, the durable one
 * writing that file. @returns its URL and the child, once it answers.
 */
export async function startBareServer(durableFile?: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', BARE_SERVER, String(port), ...(durableFile ? [durableFile] : [])], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}/`;
  await waitFor(url);
  return { url, child };
}

/**
 * A bench goal, as a ratio of a workload's rate to a baseline's (`baseline` names one of the
 * workload's baselines), per database.
 */
export interface Goal {
  baseline: string;
  sqlite: number;
  postgres: number;
}
export const toParse = (sqlite: number, postgres: number): Goal => ({ baseline: 'Parse Server', sqlite, postgres });

/** A workload: Backyard's request and, by name, the baselines' requests at the same concurrency. */
export interface Workload {
  name: string;
  options: autocannon.Options;
  baselines: Record<string, autocannon.Options>;
  goal?: Goal;
  /**
   * What one answer (its JSON body) must hold, checked on Backyard and on every baseline but `bare`
   * and those in `unchecked` before the rounds: a bench of the wrong rows measures nothing.
   */
  answer?: (body: any) => boolean;
  /** Baselines that answer a shape of their own (a bare durable write), whose answers `answer` does not check. */
  unchecked?: readonly string[];
  /**
   * The inspector port of each side that BENCH_PROFILE may profile (profile.ts `inspectorArgs`), by
   * side: `Backyard`, or a baseline's name.
   */
  inspect?: Record<string, number | undefined>;
}

/**
 * Runs a workload for ROUNDS rounds, each next to its baselines, and prints one line: the medians of
 * rate and latency, the median ratio to each baseline, and the goal with whether it was met.
 * `ceilingOf`, when both baselines ran, adds how far the second was below the first (how far Parse
 * Server was below a bare insert).
 * @throws Error when an answer does not hold what `answer` wants.
 */
export async function runWorkload(workload: Workload, database: DatabaseKind, ceilingOf?: { bare: string; peer: string }): Promise<void> {
  const { name, options, baselines, goal, answer, unchecked = [] } = workload;
  if (answer) {
    for (const [side, o] of Object.entries({ Backyard: options, ...baselines }).filter(([side]) => side !== 'bare' && !unchecked.includes(side))) {
      const res = await fetch(o.url, { method: o.method ?? 'GET', headers: o.headers as Record<string, string>, body: o.body as string | undefined });
      const body = await res.json().catch(() => undefined);
      if (!answer(body)) throw new Error(`${name}: ${side} answered ${res.status} ${JSON.stringify(body).slice(0, 300)}, not what the workload is about`);
    }
  }
  if (WARMUP_SECONDS > 0) for (const o of [options, ...Object.values(baselines)]) await load({ ...o, duration: WARMUP_SECONDS });
  const rounds: Result[] = [];
  const ratios: Record<string, number[]> = Object.fromEntries(Object.keys(baselines).map((b) => [b, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const r = await load({ ...options, duration: ROUND_SECONDS });
    rounds.push(r);
    for (const [baseline, baselineOptions] of Object.entries(baselines)) ratios[baseline]!.push(r.rps / (await load({ ...baselineOptions, duration: ROUND_SECONDS })).rps);
  }
  const errors = rounds.reduce((n, r) => n + r.errors, 0);
  const vs = Object.entries(ratios)
    .map(([baseline, xs]) => `${median(xs).toFixed(2)}× ${baseline}`)
    .join(', ');
  const column = (pick: (r: Result) => number, digits: number, width: number) => median(rounds.map(pick)).toFixed(digits).padStart(width);
  // The bare server's own ratio to the peer, round by round: Backyard's ratio to the peer over its ratio to the bare server.
  const bareToPeer = ceilingOf && ratios[ceilingOf.bare] && ratios[ceilingOf.peer] ? median(ratios[ceilingOf.peer]!.map((toPeer, i) => toPeer / ratios[ceilingOf.bare]![i]!)) : undefined;
  const ceiling = bareToPeer === undefined ? '' : `; the ${ceilingOf!.bare} was ${bareToPeer.toFixed(2)}× ${ceilingOf!.peer}`;
  let verdict = '';
  let why: string | undefined;
  if (goal && ratios[goal.baseline]) {
    const wanted = goal[database];
    const made = median(ratios[goal.baseline]!);
    const missed = made < wanted;
    // A ratio just under the goal prints as the goal at two decimals (4.995 as 5.00): then it shows three.
    const close = missed && Number(made.toFixed(2)) >= wanted ? ` (${made.toFixed(3)}×)` : '';
    verdict = `; goal ≥ ${wanted}× ${goal.baseline}: ${missed ? `NOT met${close}` : 'met'}`;
    if (missed) why = whyMissed(wanted, goal.baseline, ratios, ceilingOf, bareToPeer);
  }
  console.log(`${name.padEnd(34)} ${column((r) => r.rps, 0, 8)} ${column((r) => r.p50, 2, 7)} ${column((r) => r.p99, 2, 7)}  ${vs}${ceiling}${verdict}${errors ? `  (${errors} errors)` : ''}`);
  if (why) console.log(`  why: ${why}`);
  if (PROFILE_MODE === 'all' || (PROFILE_MODE === 'missed' && why !== undefined)) await profileSides(workload);
}

/**
 * Why a goal was missed, in one sentence: when the bare server that does the same job (`ceilingOf.bare`)
 * was itself below the goal, no Node server in Backyard's place reached it on this machine; otherwise
 * Backyard did less than the bare server, and its profile (printed after) shows where its time went.
 */
export function whyMissed(wanted: number, baseline: string, ratios: Record<string, number[]>, ceilingOf: { bare: string; peer: string } | undefined, bareToPeer: number | undefined): string {
  if (ceilingOf && bareToPeer !== undefined && baseline === ceilingOf.peer && bareToPeer < wanted) {
    return `the ${ceilingOf.bare} itself made ${bareToPeer.toFixed(2)}× ${ceilingOf.peer}, below the goal: past what the driver, the database and the disk allow here`;
  }
  const profiles = PROFILE_MODE === 'off' ? '' : '; the profiles below show where its time went';
  if (!ceilingOf || !ratios[ceilingOf.bare]) return `no bare server of the same job ran beside it${profiles}`;
  const toBare = median(ratios[ceilingOf.bare]!);
  const made = `Backyard made ${toBare.toFixed(2)}× the ${ceilingOf.bare}`;
  // Medians of different rounds: Backyard may keep up with the bare server and still miss a goal the bare server met.
  if (toBare >= 1 && baseline === ceilingOf.peer) return `${made}, as fast as the bare server, whose own rounds met the goal: the machine's drift between rounds`;
  const above = baseline === ceilingOf.peer ? ', which was above the goal' : '';
  return `${made}${above}${profiles}`;
}

/** Loads each side of `workload` that has an inspector once more, for ROUND_SECONDS, sampled (profile.ts), and prints where its time went. */
async function profileSides({ options, baselines, inspect = {} }: Workload): Promise<void> {
  const sides: Record<string, autocannon.Options> = { Backyard: options, ...baselines };
  for (const [side, port] of Object.entries(inspect)) {
    if (port === undefined || !sides[side]) continue;
    const profiled = await profileWhile(port, async () => {
      const r = await autocannon({ ...sides[side]!, duration: ROUND_SECONDS });
      return r.requests.total;
    });
    for (const line of formatBreakdown(side, profiled)) console.log(line);
  }
}

/** The header line above `runWorkload`'s lines. */
export const WORKLOAD_HEADER = `${'workload'.padEnd(34)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}  ratio to the baseline; goal`;
