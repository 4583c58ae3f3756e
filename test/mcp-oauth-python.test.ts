/**
 * MCP authorization through the Python `mcp` SDK's OAuth client: a real `backyard serve`
 * process, the SDK in a virtual environment of its own (installed with pip when Python is there),
 * the consent page in Chromium, and the test's client site over HTTPS (the SDK takes only an https
 * client metadata document URL; the served process trusts the test's certificate through
 * NODE_EXTRA_CA_CERTS). The script (test/python/mcp_oauth_client.py) discovers, registers, signs
 * in with PKCE, calls tools, refreshes, and is refused once the grant is revoked.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { clientDocument, consent, startClientSite, type ClientSite } from './helpers/oauthSite.js';
import { makeHome, removeHome } from './helpers/server.js';
import { ServeProcess, freePort } from './helpers/serveProcess.js';

const exec = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, 'python/mcp_oauth_client.py');
/** Reused between runs: installing the SDK takes a while. */
const VENV = path.join(os.tmpdir(), 'backyard-test-python-mcp');
const VENV_PYTHON = path.join(VENV, 'bin', 'python');

/**
 * The virtual environment's Python with the `mcp` SDK (v2 line) importable, made when missing.
 * @returns the interpreter's path, or why there is none (no python3, or pip could not install mcp).
 */
async function pythonWithMcp(): Promise<{ python: string } | { missing: string }> {
  const importable = () => exec(VENV_PYTHON, ['-c', 'import mcp.client.auth, httpx2'], { timeout: 60_000 }).then(() => true, () => false);
  if (await importable()) return { python: VENV_PYTHON };
  try {
    await exec('python3', ['--version']);
  } catch {
    return { missing: 'python3 is not installed' };
  }
  try {
    fs.rmSync(VENV, { recursive: true, force: true });
    await exec('python3', ['-m', 'venv', VENV], { timeout: 120_000 });
    await exec(path.join(VENV, 'bin', 'pip'), ['install', '--quiet', 'mcp>=2.3,<3'], { timeout: 600_000 });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? (error as Error).message).trim().split('\n').slice(-3).join(' ');
    return { missing: `pip could not install the mcp SDK (${stderr})` };
  }
  return (await importable()) ? { python: VENV_PYTHON } : { missing: 'the mcp SDK was installed but does not import' };
}

const found = await pythonWithMcp();
if ('missing' in found) console.warn(`Skipping the Python MCP SDK OAuth tests: ${found.missing}.`);

/** One run of the Python client: its events in order, and a way to answer it. */
class PythonClient {
  private readonly events: Array<Record<string, any>> = [];
  private readonly waiting: Array<(event: Record<string, any>) => void> = [];
  private stderr = '';
  readonly exited: Promise<number | null>;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as Record<string, any>;
      const waiter = this.waiting.shift();
      if (waiter) waiter(event);
      else this.events.push(event);
    });
    child.stderr.on('data', (chunk) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.once('exit', resolve));
  }

  static start(python: string, settings: Record<string, unknown>): PythonClient {
    return new PythonClient(spawn(python, [SCRIPT, JSON.stringify(settings)], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** The next event, which must be `name`; fails with the script's stderr if it exits first. */
  async next(name: string): Promise<Record<string, any>> {
    const event = await Promise.race([
      this.events.length ? Promise.resolve(this.events.shift()!) : new Promise<Record<string, any>>((resolve) => this.waiting.push(resolve)),
      this.exited.then((code) => ({ event: 'exit', code })),
    ]);
    expect(event.event, `waiting for ${name}; stderr: ${this.stderr.slice(-2000)}`).toBe(name);
    return event;
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

describe.skipIf('missing' in found)('the Python mcp SDK as an OAuth client', () => {
  const python = 'python' in found ? found.python : '';
  const CLIENT_NAME = 'Python <i>Client</i>';
  let home: string;
  let work: string;
  let server: ServeProcess;
  let token: string;
  let site: ClientSite;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    home = makeHome();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-oauth-python-'));
    const key = path.join(work, 'key.pem');
    const cert = path.join(work, 'cert.pem');
    await exec('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    // The client site, and its metadata document, are on loopback like the served Backyard.
    const env = () => stdioEnv(home, { NODE_EXTRA_CA_CERTS: cert, BACKYARD_LOG_LEVEL: 'warn', BACKYARD_OAUTH_LOOPBACK_CLIENTS: '1' });
    token = (await exec(process.execPath, [CLI, 'account', 'create', 'alice'], { env: env() })).stdout.trim();
    server = new ServeProcess(await freePort(), token, env);
    await server.start();
    site = await startClientSite(clientDocument(CLIENT_NAME), { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') });
    browser = await launchBrowser();
    // The redirect lands on the test's own https site, whose certificate Chromium does not know.
    context = await browser.newContext({ ignoreHTTPSErrors: true });
  }, 900_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await site?.close();
    if (server?.running) await server.stop('SIGTERM');
    if (home) removeHome(home);
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  /** Runs the script through sign-in: answers its authorization request with the consent page. */
  async function signIn(settings: Record<string, unknown>, choice: Parameters<typeof consent>[4]) {
    const client = PythonClient.start(python, { mcp: `${server.url}/mcp`, redirect: site.callback, client_name: CLIENT_NAME, ...settings });
    const authorize = new URL((await client.next('authorize')).url as string);
    expect(authorize.origin).toBe(server.url);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('resource')).toBe(`${server.url}/mcp`);
    const callback = await consent(context, authorize, site, token, choice);
    expect(callback.searchParams.get('iss')).toBe(server.url);
    client.send({ callback: callback.href });
    return { client, authorize, connected: await client.next('connected') };
  }

  /** Revokes the grant of `refreshToken` as a client does (RFC 7009), then checks the script is refused. */
  async function revokeAndExpectRefusal(client: PythonClient, refreshToken: string, clientId: string) {
    const revoke = await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoke.status).toBe(200);
    client.send({ next: true });
    // Refused: the SDK can only send the person to sign in again, which they decline.
    await client.next('authorize');
    client.send({ abort: true });
    const refused = await client.next('refused');
    expect(refused.error).toBeTruthy();
  }

  it('registers by its https metadata document, signs in with full access, calls a tool, refreshes, and is refused after revocation', async () => {
    const fetchesBefore = site.documentFetches;
    const { client, authorize, connected } = await signIn({ client_metadata_url: site.documentUrl, app_name: 'from-python' }, { access: 'full', expectName: CLIENT_NAME });
    try {
      expect(authorize.searchParams.get('client_id')).toBe(site.documentUrl);
      expect(site.documentFetches).toBeGreaterThan(fetchesBefore);
      expect(connected.client_id).toBe(site.documentUrl);
      expect(connected.scope).toBe('mcp:read mcp:write');
      expect(connected.tools).toContain('createBackendApp');

      const called = await client.next('called');
      expect(called.is_error, called.text).toBe(false);
      expect(called.structured).toMatchObject({ appName: 'from-python', appId: expect.any(String) });

      const refreshed = await client.next('refreshed');
      expect(refreshed.is_error, refreshed.text).toBe(false);
      expect(refreshed.text).toContain('from-python');
      expect(refreshed.access).not.toBe(connected.access);
      expect(refreshed.refresh).not.toBe(connected.refresh);

      await revokeAndExpectRefusal(client, refreshed.refresh, site.documentUrl);
    } finally {
      client.kill();
    }
  }, 180_000);

  it('registers by Dynamic Client Registration, and a read-only grant cannot call createBackendApp', async () => {
    const { client, authorize, connected } = await signIn({ client_metadata_url: null, app_name: 'not-made' }, { access: 'read', expectName: CLIENT_NAME });
    try {
      const clientId = authorize.searchParams.get('client_id')!;
      expect(clientId).not.toBe(site.documentUrl);
      expect(connected.client_id).toBe(clientId);
      expect(connected.scope).toBe('mcp:read');

      const called = await client.next('called');
      expect(called.is_error).toBe(true);
      expect(called.text).toMatch(/mcp:write/);

      const refreshed = await client.next('refreshed');
      expect(refreshed.is_error, refreshed.text).toBe(false);
      expect(refreshed.text).not.toContain('not-made');
      expect(refreshed.access).not.toBe(connected.access);

      await revokeAndExpectRefusal(client, refreshed.refresh, clientId);
    } finally {
      client.kill();
    }
  }, 180_000);
});
