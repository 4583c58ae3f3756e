/**
 * The bench's profiles (bench/profile.ts, BENCH_PROFILE): a real Node server started with an
 * inspector, sampled over the inspector protocol while it answers real HTTP requests, each sample
 * put in its category and divided by the requests answered.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { breakdown, formatBreakdown, PROFILE_MODE, profileWhile, spawnNode } from '../bench/profile.js';
import { whyMissed } from '../bench/rounds.js';
import { freePort } from '../bench/postgres.js';
import { waitFor } from '../bench/backyardServer.js';

// Each request runs `spinForAWhile` for 2 ms of the server's own code: the profile must find it. The
// clock is read once per 100,000 steps of arithmetic: a loop around process.hrtime.bigint() spent
// most samples in Node's own wrapper of it, which made 'node' the largest category now and then.
// It says on stderr when it listens and when it is asked to exit (GET /exit).
const SERVER = `
  function spinForAWhile() {
    const end = process.hrtime.bigint() + 2_000_000n; let x = 0;
    do { for (let i = 0; i < 100000; i++) x = (x * 31 + i) | 0; } while (process.hrtime.bigint() < end);
    return x;
  }
  require('node:http').createServer((req, res) => {
    if (req.url === '/exit') { console.error('spinner: bye'); res.end('bye', () => process.exit(0)); return; }
    res.end(String(spinForAWhile()));
  }).listen(Number(process.argv[1]), '127.0.0.1', () => console.error('spinner: listening'));
`;

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

describe('bench profiles', () => {
  it('samples a server through its inspector and names the function its requests spend their time in', async () => {
    // BENCH_PROFILE is unset here: `missed`, so spawnNode gives the child an inspector.
    expect(PROFILE_MODE).toBe('missed');
    const port = await freePort();
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (chunk) => (text += String(chunk)));
    // Without inlining: once optimized, V8 may inline spinForAWhile into the handler, and its samples then name the
    // handler (`(anonymous) [eval]:3`), which made this test fail now and then.
    const started = await spawnNode(['--no-turbo-inlining', '-e', SERVER, String(port)], { stdout: 'ignore', stderr });
    child = started.child;
    const inspectPort = started.inspectPort!;
    expect(inspectPort).toBeGreaterThan(0);
    await waitFor(`http://127.0.0.1:${port}/`);
    const profiled = await profileWhile(inspectPort, async () => {
      for (let i = 0; i < 100; i++) await (await fetch(`http://127.0.0.1:${port}/`)).text();
      return 100;
    });
    expect(profiled.requests).toBe(100);
    expect(profiled.ownTop[0]?.name).toMatch(/^spinForAWhile \[eval\]:2$/);
    // Its own code is where the busy time went.
    const busy = Object.entries(profiled.micros).filter(([c]) => c !== 'idle');
    const [largest] = busy.sort((a, b) => b[1] - a[1])[0]!;
    expect(largest).toBe('own');
    expect(profiled.ownTop[0]!.micros).toBeGreaterThan(0);
    expect(formatBreakdown('spinner', profiled)[0]).toMatch(/^ {2}profile of spinner \(\d+\.\d s, 100 requests\)/);
    // The child's own lines came through; Node's notices about the inspector (listening, attached, ending) did not.
    // 'close': the child exited and its stdio streams are closed, every line of them read.
    const closed = once(child, 'close');
    await (await fetch(`http://127.0.0.1:${port}/exit`)).text();
    await closed;
    expect(text).toBe('spinner: listening\nspinner: bye\n');
  });

  it('says why a goal was missed: the bare server below it, or Backyard below the bare server', () => {
    const ceiling = { bare: 'bare + SQLite select', peer: 'Parse Server' };
    // Backyard 5×, 6×, 4× Parse Server at 0.8× the bare server: the bare server made 6.25×, 7.5×, 5×.
    const ratios = { 'bare + SQLite select': [0.8, 0.8, 0.8], 'Parse Server': [5, 6, 4] };
    expect(whyMissed(10, 'Parse Server', ratios, ceiling, 6.25)).toBe(
      'the bare + SQLite select itself made 6.25× Parse Server, below the goal: past what the driver, the database and the disk allow here',
    );
    expect(whyMissed(6, 'Parse Server', ratios, ceiling, 6.25)).toBe(
      'Backyard made 0.80× the bare + SQLite select, which was above the goal; the profiles below show where its time went',
    );
    expect(whyMissed(0.9, 'bare + SQLite select', ratios, ceiling, 6.25)).toBe('Backyard made 0.80× the bare + SQLite select; the profiles below show where its time went');
    expect(whyMissed(10, 'Parse Server', { 'bare + SQLite select': [1.05, 1.1], 'Parse Server': [9.9, 9.8] }, ceiling, 11.7)).toBe(
      "Backyard made 1.10× the bare + SQLite select, as fast as the bare server, whose own rounds met the goal: the machine's drift between rounds",
    );
    expect(whyMissed(5, 'Parse Server', { 'Parse Server': [4] }, undefined, undefined)).toBe('no bare server of the same job ran beside it; the profiles below show where its time went');
  });

  it('puts each function in its category and gives microseconds per request', () => {
    const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 9 } });
    const nodes = [
      frame(1, '(root)', ''),
      frame(2, '(idle)', ''),
      frame(3, '(garbage collector)', ''),
      frame(4, 'writev', ''),
      frame(5, 'end', 'node:_http_outgoing'),
      frame(6, 'query', 'file:///x/node_modules/pg/lib/client.js'),
      frame(7, 'find', 'file:///x/node_modules/find-my-way/index.js'),
      frame(8, 'findText', 'file:///x/dist/src/data/engine.js'),
    ];
    // Sample i lasts until sample i + 1 (V8's timeDeltas); the last one's length is unknown and is not counted.
    const samples = [2, 3, 4, 5, 6, 7, 8, 8, 1];
    const timeDeltas = [0, 100, 200, 300, 400, 500, 600, 700, 800];
    const b = breakdown({ nodes, samples, timeDeltas, startTime: 0, endTime: 3_600 }, 10);
    expect(b.micros).toEqual({ idle: 10, gc: 20, native: 30, node: 40, driver: 50, libraries: 60, own: 70 + 80, program: 0 });
    expect(b.ownTop).toEqual([{ name: 'findText src/data/engine.js:10', micros: 150 }]);
    expect(b.nativeTop).toEqual([{ name: 'writev', micros: 30 }]);
  });
});
