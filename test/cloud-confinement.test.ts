/**
 * Cloud code is untrusted code: in the bubblewrap sandbox it reaches its
 * own app's data API and public addresses through Backyard, and nothing else of the host: no Unix
 * socket, no loopback or private address, no other process, no host file. Each escape is tried for
 * real, from a deployed function and, for the layer under Node's permission model, from a bare
 * `node` started with the sandbox's own argv.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxSockets, sandboxArgv } from '../src/data/cloud/sandbox.js';
import { createLogger } from '../src/log.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { api, makeHome, postgresDatabase, removeHome, startTestServer, type TestServer, dashboardCookie } from './helpers/server.js';
import { loadConfig } from '../src/config.js';
import { openPlatform } from '../src/platform/platform.js';
import { startBackyard } from '../src/serve.js';

const PROBES = `
const net = require('net');
const attempt = (connect) => new Promise((resolve) => {
  const socket = connect();
  socket.setTimeout(3000, () => { socket.destroy(); resolve('timed out'); });
  socket.once('connect', () => { socket.destroy(); resolve('connected'); });
  socket.once('error', (e) => resolve(e.code || e.message));
});
const outcome = async (promise) => { try { const r = await promise; return 'ok ' + (r.status ?? r); } catch (e) { return 'error ' + (e.cause?.message || e.message); } };
Parse.Cloud.define('socket', (req) => attempt(() => net.connect(req.params.path)));
Parse.Cloud.define('tcp', (req) => attempt(() => net.connect(req.params.port, req.params.host)));
Parse.Cloud.define('fetch', async (req) => outcome(fetch(req.params.url).then(async (r) => ({ status: r.status + ' ' + (await r.text()) }))));
Parse.Cloud.define('httpRequest', async (req) => outcome(Parse.Cloud.httpRequest({ url: req.params.url }).then((r) => ({ status: r.status + ' ' + r.text }))));
Parse.Cloud.define('signal', (req) => { try { process.kill(req.params.pid, 0); return 'visible'; } catch (e) { return e.code; } });
Parse.Cloud.define('whoami', () => ({ pid: process.pid, ppid: process.ppid }));
Parse.Cloud.define('count', async () => new Parse.Query('Thing').count({ useMasterKey: true }));
Parse.Cloud.define('killParent', () => { process.kill(process.ppid, 'SIGKILL'); return 'sent'; });
`;

/** A loopback HTTP server answering "probe", like a service of the host that cloud code must not reach. */
async function probeServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end('probe'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((r) => server.close(() => r())) };
}

async function deploy(server: TestServer, app: TestApp, main: string): Promise<void> {
  const tree = path.join(server.home, 'apps', app.appId, 'cloud', 'cloud');
  fs.writeFileSync(path.join(tree, 'main.js'), main);
  await server.platform.services.cloud.reload(app.appId);
}

describe('cloud code in the sandbox', () => {
  let server: TestServer;
  let app: TestApp;
  let bystander: TestApp;
  let allowed: Awaited<ReturnType<typeof probeServer>>;
  let forbidden: Awaited<ReturnType<typeof probeServer>>;
  const run = async (fn: string, params: Record<string, unknown> = {}) => {
    const answer = await app.call('POST', `/functions/${fn}`, { body: params });
    return answer.body as { result?: any; code?: number; error?: string };
  };

  beforeAll(async () => {
    allowed = await probeServer();
    forbidden = await probeServer();
    server = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'sandbox', BACKYARD_CLOUD_ALLOW_HOSTS: `127.0.0.1:${allowed.port}` });
    app = await createTestApp(server, 'confined');
    bystander = await createTestApp(server, 'bystander');
    await deploy(server, app, PROBES);
    await deploy(server, bystander, "Parse.Cloud.define('hello', () => 'still here');\n");
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await allowed?.close();
    await forbidden?.close();
  });

  it('is in force', () => {
    expect(server.platform.services.cloud.confinement()).toEqual({ mode: 'sandbox' });
  });

  it('reaches its own data API (through the bound socket)', async () => {
    await app.call('POST', '/classes/Thing', { body: { n: 1 }, master: true });
    expect(await run('count')).toEqual({ result: 1 });
  });

  it('cannot open the Docker socket or any Unix socket of the host', async () => {
    const hostSocket = path.join(os.tmpdir(), `backyard-probe-${process.pid}.sock`);
    const listener = net.createServer().listen(hostSocket);
    try {
      expect((await run('socket', { path: hostSocket })).result).toBe('ENOENT');
      expect((await run('socket', { path: '/var/run/docker.sock' })).result).toBe('ENOENT');
      const local = await new Promise<string>((resolve) => net.connect(hostSocket).once('connect', () => resolve('connected')).once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')));
      expect(local).toBe('connected'); // the socket is there for the host's own processes
    } finally {
      listener.close();
    }
  });

  it('cannot connect to loopback or private addresses, Backyard\'s own port included', async () => {
    const port = Number(new URL(server.url).port);
    expect((await run('tcp', { host: '127.0.0.1', port })).result).toBe('ECONNREFUSED');
    expect((await run('tcp', { host: '127.0.0.1', port: forbidden.port })).result).toBe('ECONNREFUSED');
    expect((await run('tcp', { host: '10.1.2.3', port: 80 })).result).toMatch(/ENETUNREACH|EHOSTUNREACH/);
    // Through Backyard's egress: refused with the reason, for fetch and for Parse.Cloud.httpRequest.
    expect((await run('fetch', { url: `http://127.0.0.1:${forbidden.port}/` })).result).toMatch(/^error Backyard refused the connection to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is not a public internet address/);
    expect((await run('httpRequest', { url: `http://localhost:${port}/healthz` })).result).toMatch(/^error Backyard refused the connection to localhost:\d+: localhost is not a public internet address/);
    expect((await run('fetch', { url: 'http://10.1.2.3/' })).result).toMatch(/^error Backyard refused .*not a public internet address/);
    expect((await run('fetch', { url: 'http://[::ffff:127.0.0.1]:80/' })).result).toMatch(/^error Backyard refused .*not a public internet address/);
  });

  it('reaches an address the operator allows, through the egress proxy', async () => {
    expect((await run('fetch', { url: `http://127.0.0.1:${allowed.port}/` })).result).toBe('ok 200 probe');
    expect((await run('httpRequest', { url: `http://127.0.0.1:${allowed.port}/` })).result).toBe('ok 200 probe');
  });

  it('sees and signals no process but its own', async () => {
    const { result } = await run('whoami');
    expect(result).toEqual({ pid: 2, ppid: 1 }); // its own pid namespace, under the sandbox's init
    expect(await run('signal', { pid: process.pid })).toEqual({ result: 'ESRCH' });
    // Its parent is the namespace's init, which takes no SIGKILL from inside: nothing of the host is hit.
    expect(await run('killParent')).toEqual({ result: 'sent' });
    expect((await fetch(`${server.url}/healthz`)).ok).toBe(true);
    expect(await bystander.call('POST', '/functions/hello', { body: {} }).then((r) => r.body)).toEqual({ result: 'still here' });
    expect(await run('count')).toEqual({ result: 1 }); // a new worker for the next call
  });
});

describe('cloud code with BACKYARD_CLOUD_NETWORK=none', () => {
  let server: TestServer;
  let app: TestApp;
  let allowed: Awaited<ReturnType<typeof probeServer>>;
  beforeAll(async () => {
    allowed = await probeServer();
    server = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'sandbox', BACKYARD_CLOUD_NETWORK: 'none', BACKYARD_CLOUD_ALLOW_HOSTS: `127.0.0.1:${allowed.port}` });
    app = await createTestApp(server, 'offline');
    await deploy(server, app, PROBES);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await allowed?.close();
  });

  it('reaches its data API and nothing else, not even an allowed host', async () => {
    expect((await app.call('POST', '/functions/count', { body: {} })).body).toEqual({ result: 0 });
    const { body } = await app.call('POST', '/functions/fetch', { body: { url: `http://127.0.0.1:${allowed.port}/` } });
    expect(body).toEqual({ result: expect.stringMatching(/^error fetch http:\/\/127\.0\.0\.1:\d+: cloud code has no network access here \(BACKYARD_CLOUD_NETWORK=none\)/) });
  });
});

describe('the confinement in force, on the dashboard', () => {
  /** The dashboard's overview page as `server`'s alice sees it. */
  const overview = async (server: TestServer) => {
    const cookie = await dashboardCookie(server);
    return (await fetch(`${server.url}/dashboard`, { headers: { cookie } })).text();
  };

  it('warns when cloud code runs unconfined, and says nothing when it is sandboxed', async () => {
    const unconfined = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'none' });
    const sandboxed = await startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'sandbox' });
    try {
      expect(await overview(unconfined)).toMatch(/id="confinement">Cloud code is not confined by the kernel on this machine \(BACKYARD_CLOUD_CONFINEMENT=none\)/);
      expect(await overview(sandboxed)).not.toContain('id="confinement"');
    } finally {
      await unconfined.close();
      await sandboxed.close();
    }
  });
});

describe('the sandbox itself, without Node\'s permission model', () => {
  let sockets: SandboxSockets;
  beforeAll(async () => {
    sockets = new SandboxSockets({ network: 'none', allow: [], log: createLogger('silent') });
    await sockets.ready();
  });
  afterAll(() => sockets?.close());

  it('holds no host file, no other process and no host network', () => {
    const script = [
      "const fs = require('fs');",
      "const tryRead = (p) => { try { fs.readFileSync(p); return 'read'; } catch (e) { return e.code; } };",
      `console.log(JSON.stringify({ passwd: tryRead('/etc/passwd'), environ: tryRead('/proc/${process.pid}/environ'), home: tryRead('${os.homedir()}'),`,
      "  procs: fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).length, interfaces: Object.keys(require('os').networkInterfaces()) }));",
    ].join('\n');
    const result = spawnSync('bwrap', sandboxArgv([], sockets, [process.execPath, '-e', script]), { encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ passwd: 'ENOENT', environ: 'ENOENT', home: 'ENOENT', procs: 2, interfaces: ['lo'] }); // its own loopback only
  });
});

describe('BACKYARD_CLOUD_CONFINEMENT=auto where no sandbox can be made', () => {
  const MAIN = "Parse.Cloud.define('hello', () => 'unconfined hello');\n";
  const REFUSAL = /^Cloud code does not run on this server: no bubblewrap sandbox can be made here \(bubblewrap \(bwrap\) is not installed: apt-get install bubblewrap\), and with (\d+) accounts .*Install bubblewrap \(apt-get install bubblewrap\) and restart Backyard, or, knowing that, set BACKYARD_CLOUD_CONFINEMENT=none to run it unconfined\.$/;

  /**
   * Starts a server as if bubblewrap were not installed: the sandbox is tried once, at start, with a
   * PATH that leads to no `bwrap` (the server's PATH is put back once it has decided).
   */
  async function withoutBwrap<T>(start: () => Promise<T>): Promise<T> {
    const saved = process.env.PATH;
    process.env.PATH = (saved ?? '').split(path.delimiter).filter((dir) => dir && !fs.existsSync(path.join(dir, 'bwrap'))).join(path.delimiter);
    try {
      return await start();
    } finally {
      process.env.PATH = saved;
    }
  }

  /** A server of one account (alice), the single-user install. */
  async function oneAccountServer(env: NodeJS.ProcessEnv = {}): Promise<TestServer> {
    const home = makeHome();
    const database = await postgresDatabase();
    const config = loadConfig({ home, port: 0, host: '127.0.0.1' }, { BACKYARD_LOG_LEVEL: 'silent', ...database.env, ...env });
    const platform = await openPlatform(config, createLogger(config.logLevel));
    const alice = (await platform.services.accounts.create('alice')).token;
    const http = await startBackyard(platform, { port: 0, host: '127.0.0.1' });
    return {
      home, platform, http, url: http.url, alice, bob: '',
      close: async () => {
        await http.close();
        await platform.close();
        removeHome(home);
        await database.drop();
      },
    };
  }

  /** Deploys `main` as the app's cloud/main.js through the management API; answers the deploy's warnings. */
  async function deployThroughApi(server: TestServer, app: TestApp): Promise<string[]> {
    const res = await api(server, 'POST', `/backend-apps/${app.appId}/cloud-code`, {
      token: server.alice,
      body: { changes: [{ path: 'cloud/main.js', operation: 'write', writeMode: 'overwrite', data: MAIN }] },
    });
    expect(res.status, res.text).toBe(200);
    return (res.json() as { warnings: string[] }).warnings;
  }

  it('refuses cloud code in a home of two accounts, saying how to install bubblewrap or choose none', async () => {
    const server = await withoutBwrap(() => startTestServer());
    try {
      expect(server.platform.services.cloud.confinement()).toEqual({ mode: 'none', why: 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' });
      const app = await createTestApp(server, 'refused');
      // The template's hello, through the data API: 141 with the text.
      const templateCall = await app.call('POST', '/functions/hello', { body: { name: 'Ada' } });
      expect(templateCall.status).toBe(400);
      expect(templateCall.body).toEqual({ code: 141, error: expect.stringMatching(REFUSAL) });
      expect(REFUSAL.exec(templateCall.body.error)![1]).toBe('2');
      // deployCloudCode says it where the user first meets it.
      const warnings = await deployThroughApi(server, app);
      expect(warnings).toEqual([expect.stringMatching(/^The files were saved, but the cloud code could not be reloaded: Cloud code does not run on this server: .*apt-get install bubblewrap.*BACKYARD_CLOUD_CONFINEMENT=none/)]);
      const call = await app.call('POST', '/functions/hello', { body: {} });
      expect(call.body).toEqual({ code: 141, error: expect.stringMatching(REFUSAL) });
      // Other data API calls of an app whose cloud code cannot run are refused alike (its triggers would not run).
      expect((await app.call('POST', '/classes/Note', { body: { text: 'x' } })).body).toEqual({ code: 141, error: expect.stringMatching(REFUSAL) });
    } finally {
      await server.close();
    }
  });

  it('runs cloud code in a home of one account, and stops once a second account exists', async () => {
    const server = await withoutBwrap(() => oneAccountServer());
    try {
      expect(server.platform.services.cloud.confinement().mode).toBe('none');
      const app = await createTestApp(server, 'single-user');
      expect(await deployThroughApi(server, app)).toEqual([]);
      expect((await app.call('POST', '/functions/hello', { body: {} })).body).toEqual({ result: 'unconfined hello' });
      await server.platform.services.accounts.create('bob');
      // The live worker too: refused once the number of accounts is read again (a second at most).
      await expect
        .poll(async () => (await app.call('POST', '/functions/hello', { body: {} })).body, { timeout: 10_000, interval: 100 })
        .toEqual({ code: 141, error: expect.stringMatching(REFUSAL) });
    } finally {
      await server.close();
    }
  });

  it('runs cloud code in a home of two accounts when the operator chose BACKYARD_CLOUD_CONFINEMENT=none', async () => {
    const server = await withoutBwrap(() => startTestServer({ BACKYARD_CLOUD_CONFINEMENT: 'none' }));
    try {
      const app = await createTestApp(server, 'chosen-none');
      expect(await deployThroughApi(server, app)).toEqual([]);
      expect((await app.call('POST', '/functions/hello', { body: {} })).body).toEqual({ result: 'unconfined hello' });
    } finally {
      await server.close();
    }
  });
});
