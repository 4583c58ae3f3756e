import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { request } from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { CLI, modernStdioClient, stdioEnv } from './helpers/mcpClients.js';
import { makeHome, removeHome } from './helpers/server.js';

const exec = promisify(execFile);
const homes: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const home of homes.splice(0)) removeHome(home);
});

const newHome = () => {
  const home = makeHome();
  homes.push(home);
  return home;
};

const backyard = (home: string, args: string[], env: Record<string, string> = {}) =>
  exec(process.execPath, [CLI, ...args], { env: { ...stdioEnv(home), ...env } });

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** Starts `backyard serve` and resolves once it answers /healthz (within 60 s: a loaded machine starts Node slowly). */
async function serve(home: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], { env: { ...stdioEnv(home), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`http://localhost:${port}/healthz`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`backyard serve did not start (exit code ${child.exitCode})`);
}

/** Resolves once `child` has written a line matching `pattern` on stderr. */
const stderrLine = (child: ChildProcess, pattern: RegExp) =>
  new Promise<void>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (pattern.test(seen)) {
        child.stderr!.off('data', onData);
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited (${code}) before writing ${pattern} on stderr; it wrote: ${seen}`)));
  });

describe('backyard account', () => {
  it('create prints the token alone on stdout, stores only its hash, and list shows the account', async () => {
    const home = newHome();
    const { stdout, stderr } = await backyard(home, ['account', 'create', 'dana']);
    expect(stdout).toMatch(/^by_[A-Za-z0-9_-]{43}\n$/);
    const token = stdout.trim();
    const db = new Database(path.join(home, 'platform.db'), { readonly: true });
    const raw = fs.readFileSync(path.join(home, 'platform.db'));
    expect(raw.includes(Buffer.from(token))).toBe(false);
    expect(db.prepare('SELECT count(*) AS n FROM account_tokens').get()).toEqual({ n: 1 });
    db.close();
    expect(stderr).not.toContain(token);

    const list = await backyard(home, ['account', 'list']);
    expect(list.stdout).toMatch(/^dana\t\d{4}-\d\d-\d\dT/m);
  });

  it('refuses a duplicate or malformed login with exit code 1 and one line on stderr', async () => {
    const home = newHome();
    await backyard(home, ['account', 'create', 'erin']);
    await expect(backyard(home, ['account', 'create', 'erin'])).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/already exists/) });
    await expect(backyard(home, ['account', 'create', '-bad-'])).rejects.toMatchObject({ code: 1 });
  });

  it('rejects an invalid configuration naming the variable', async () => {
    const home = newHome();
    await expect(backyard(home, ['account', 'list'], { BACKYARD_PORT: 'eighty' })).rejects.toMatchObject({
      stderr: expect.stringMatching(/BACKYARD_PORT \(--port\) must be a number/),
    });
  });
});

describe('backyard serve', () => {
  it('serves the API on the given port, uses BACKYARD_HOME, and exits cleanly on SIGTERM', async () => {
    const home = newHome();
    const token = (await backyard(home, ['account', 'create', 'fay'])).stdout.trim();
    const port = await freePort();
    const child = await serve(home, port, { BACKYARD_LOG_LEVEL: 'info' });
    const res = await fetch(`http://localhost:${port}/v1/backend-apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'served' }),
    });
    expect(res.status).toBe(201);
    const { appId } = (await res.json()) as { appId: string };
    expect(fs.existsSync(path.join(home, 'run', 'server.json'))).toBe(true);

    // A request in flight when SIGTERM arrives still gets its answer: its body is only half sent then.
    const body = JSON.stringify({ appName: 'in-flight' });
    const req = request(`http://localhost:${port}/v1/backend-apps`, {
      method: 'POST',
      // 100-continue: the server's interim answer says that it has read the headers and holds the request.
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    req.flushHeaders();
    await new Promise((resolve) => req.once('continue', resolve));
    req.write(body.slice(0, 5));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const stopping = stderrLine(child, /stopping: finishing requests in flight/);
    child.kill('SIGTERM');
    await stopping;
    expect(child.exitCode).toBeNull(); // it took the signal and still waits for the request
    req.end(body.slice(5));
    expect(await answered).toBe(201);
    expect(await exited).toBe(0);
    expect(fs.existsSync(path.join(home, 'run', 'server.json'))).toBe(false);

    // The app is on disk: keys come back from a new process.
    const keys = await backyard(home, ['app', 'keys', appId]);
    for (const name of ['applicationId', 'restKey', 'javascriptKey', 'clientKey', 'dotnetKey', 'webhookKey', 'fileKey', 'masterKey']) {
      expect(keys.stdout).toMatch(new RegExp(`^${name}\\t[A-Za-z0-9_-]{32}$`, 'm'));
    }
    expect(keys.stdout).toContain(`applicationId\t${appId}`);
    // Letters and digits only: an id starting with - would read as an option right here.
    expect(appId).toMatch(/^[A-Za-z0-9]{32}$/);
  });

  it('refuses to start a second server on a home that a live one serves, and leaves the first one\'s record alone', async () => {
    const home = newHome();
    const port = await freePort();
    await serve(home, port);
    const record = fs.readFileSync(path.join(home, 'run', 'server.json'), 'utf8');
    const second = await backyard(home, ['serve', '--port', String(await freePort())]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`^backyard: A Backyard is already serving .* at http://localhost:${port} \\(pid \\d+\\)\\. Use that one`));
    expect(fs.readFileSync(path.join(home, 'run', 'server.json'), 'utf8')).toBe(record);
    expect((await fetch(`http://localhost:${port}/healthz`)).ok).toBe(true);
  });

  it('names --port and BACKYARD_PORT when the port is taken by another program', async () => {
    const home = newHome();
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const failed = await backyard(home, ['serve', '--port', String(port)]).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe(`backyard: Port ${port} on 127.0.0.1 is taken by another program. Pick a free one with --port <port> or BACKYARD_PORT.\n`);
    } finally {
      blocker.close();
    }
  });

  it('app keys of an unknown app fails with a clear message', async () => {
    const home = newHome();
    await expect(backyard(home, ['app', 'keys', 'nope'])).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/No Backend App/) });
  });
});

describe('backyard mcp next to a running backyard serve on the same home', () => {
  it('forwards tool calls to it instead of failing on the taken port, and revokes its token at exit', async () => {
    const home = newHome();
    const port = await freePort();
    await serve(home, port);
    const client = await modernStdioClient(stdioEnv(home, { BACKYARD_PORT: String(port) }));
    const result = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'forwarded' } });
    expect(result.isError ?? false).toBe(false);
    const app = result.structuredContent as { appId: string; dashboardURL: string };
    expect(app.dashboardURL).toBe(`http://localhost:${port}/dashboard/apps/${app.appId}`);

    // The served process owns the app: visible over its REST API as the local account.
    const token = (await backyard(home, ['account', 'token', 'local'])).stdout.trim();
    const list = await fetch(`http://localhost:${port}/v1/backend-apps?app-name=forwarded`, { headers: { authorization: `Bearer ${token}` } });
    expect(await list.json()).toEqual([{ appId: app.appId, appName: 'forwarded' }]);

    const error = await client.callTool({ name: 'createBackendApp', arguments: { appName: 'forwarded' } });
    expect(error.isError).toBe(true);
    expect((error.content as Array<{ text: string }>)[0]!.text).toMatch(/already exists/);

    // Progress crosses the forwarding: the served process reports, the stdio one relays.
    const heard: string[] = [];
    const deployed = await (client as unknown as ModernClient).callTool(
      { name: 'deployCloudCode', arguments: { appId: app.appId, changes: [{ path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: "Parse.Cloud.define('hi', () => 'there');\n" }] } },
      { onprogress: (p) => heard.push(p.message ?? '') },
    );
    expect(deployed.isError ?? false, JSON.stringify(deployed.content)).toBe(false);
    expect((deployed.structuredContent as { message: string }).message).toMatch(/The cloud code was reloaded/);
    expect(heard).toEqual([expect.stringMatching(/^Saved 1 change; reloading the cloud code\.$/)]);
    // A text result stays text; a refused argument keeps the server's words.
    const file = await client.callTool({ name: 'getCloudCode', arguments: { appId: app.appId, path: 'cloud/main.js' } });
    expect(file.content).toEqual([{ type: 'text', text: "Parse.Cloud.define('hi', () => 'there');\n" }]);
    const bad = await client.callTool({ name: 'getCloudCode', arguments: { appId: app.appId, path: 7 } });
    expect(bad.isError).toBe(true);
    expect((bad.content as Array<{ text: string }>)[0]!.text).toMatch(/path/);

    await client.close();
    // The stdio process revokes its forwarding token as it exits, which close() does not wait for.
    const db = new Database(path.join(home, 'platform.db'), { readonly: true });
    const forwardTokens = db.prepare("SELECT count(*) AS n FROM account_tokens WHERE kind = 'forward'");
    await expect.poll(() => forwardTokens.get(), { timeout: 30_000, interval: 50 }).toEqual({ n: 0 });
    db.close();
  }, 180_000); // a serve and an mcp process, each loading Backyard, beside the other suites

  it('fails with a clear message when the port is held by another program', async () => {
    const home = newHome();
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const child = spawn(process.execPath, [CLI, 'mcp'], { env: stdioEnv(home, { BACKYARD_PORT: String(port) }), stdio: ['pipe', 'pipe', 'pipe'] });
      children.push(child);
      let stderr = '';
      let stdout = '';
      child.stderr!.on('data', (d) => (stderr += d));
      child.stdout!.on('data', (d) => (stdout += d));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toMatch(new RegExp(`Port ${port} is taken.*BACKYARD_PORT`));
      expect(stdout).toBe('');
    } finally {
      blocker.close();
    }
  });
});
