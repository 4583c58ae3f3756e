/**
 * Logs a person reads (BACKYARD_LOG_FORMAT): `backyard serve` and `backyard mcp` write readable
 * lines (pino-pretty) on a terminal and JSON lines into a pipe or file, unless told which; always on
 * stderr, so `backyard mcp`'s stdout carries nothing but the MCP messages. Runs the built CLI
 * (`npm run build` first); the terminal is a real pseudo-terminal made by util-linux's `script`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { makeHome, removeHome } from './helpers/server.js';

const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const home of homes.splice(0)) removeHome(home);
});

function newHome(): string {
  const home = makeHome();
  homes.push(home);
  return home;
}

/** A readable line: `[HH:MM:SS.mmm] INFO: <message>` (pino-pretty with translateTime and singleLine). */
const READABLE = /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Backyard is listening \{"url":"http:\/\/localhost:\d+"/m;
const ANSI = /\u001b\[\d+m/;

/** Runs `args` of the CLI with stdin closed at once; resolves with what it wrote once it exits (within 60 s). */
function runToExit(command: string, args: string[], env: Record<string, string>, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not exit within 60 s; stderr: ${stderr}`)), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'log-format-test', version: '1' } },
})}\n`;

describe('BACKYARD_LOG_FORMAT', () => {
  it('backyard mcp on a terminal: readable, colored lines', async () => {
    if (!fs.existsSync('/usr/bin/script')) throw new Error('util-linux `script` is needed at /usr/bin/script to give the CLI a terminal (apt-get install util-linux).');
    const env = stdioEnv(newHome(), { BACKYARD_LOG_LEVEL: 'info' });
    // `script` runs the command on a new pseudo-terminal and copies what it writes there to its stdout.
    const run = await runToExit('/usr/bin/script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} mcp`, '/dev/null'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(ANSI);
    const plain = run.stdout.replace(/\u001b\[\d+m/g, '').replace(/\r/g, '');
    expect(plain).toMatch(READABLE);
    expect(plain).not.toMatch(/^\{"level"/m);
  }, 90_000);

  it('backyard mcp into a pipe: JSON lines on stderr, and stdout holds only MCP messages', async () => {
    const run = await runToExit(process.execPath, [CLI, 'mcp'], stdioEnv(newHome(), { BACKYARD_LOG_LEVEL: 'info' }), initialize);
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(parsed.some((entry) => entry.msg === 'Backyard is listening' && entry.level === 30)).toBe(true);
    expect(run.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { jsonrpc: string; id: number }).id)).toEqual([1]);
  }, 90_000);

  it('pretty when asked, into a pipe: readable lines without colors, and still nothing on stdout but MCP', async () => {
    const run = await runToExit(process.execPath, [CLI, 'mcp'], stdioEnv(newHome(), { BACKYARD_LOG_LEVEL: 'info', BACKYARD_LOG_FORMAT: 'pretty' }), initialize);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(READABLE);
    expect(run.stderr).not.toMatch(ANSI);
    expect(run.stderr).not.toMatch(/^\{/m);
    expect(run.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { jsonrpc: string }).jsonrpc)).toEqual(['2.0']);
  }, 90_000);

  it('backyard serve, pretty when asked: readable lines, one per request', async () => {
    const home = newHome();
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
      env: stdioEnv(home, { BACKYARD_LOG_LEVEL: 'info', BACKYARD_LOG_FORMAT: 'pretty' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const deadline = Date.now() + 60_000;
    while (!READABLE.test(stderr)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no readable start line; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const url = /"url":"(http:\/\/localhost:\d+)"/.exec(stderr)![1]!;
    expect((await fetch(`${url}/healthz`)).ok).toBe(true);
    while (!/INFO: request \{"method":"GET","url":"\/healthz","status":200/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`no request line; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/^\{/m);
  }, 90_000);

  it('refuses an unknown format, naming the variable', async () => {
    const run = await runToExit(process.execPath, [CLI, 'mcp'], stdioEnv(newHome(), { BACKYARD_LOG_FORMAT: 'fancy' }));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/BACKYARD_LOG_FORMAT must be auto, json or pretty/);
    expect(run.stdout).toBe('');
  }, 60_000);
});
