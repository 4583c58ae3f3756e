import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { GitHubAppHost } from '../src/platform/repohost/github.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { api, makeHome, removeHome, startTestServer, type TestServer } from './helpers/server.js';

const exec = promisify(execFile);
const APP_ID = '12345';

/** What the stand-in saw: each request with the verdict on its JWT. */
interface Seen {
  method: string;
  path: string;
  jwt: 'valid' | 'bad-signature' | 'bad-claims' | 'missing';
  claims?: { iss?: unknown; iat?: number; exp?: number };
}

/**
 * A stand-in for the GitHub REST endpoints Backyard uses, answering as GitHub's documentation shows
 * ("Get a user installation for the authenticated app", "Get an organization installation for the
 * authenticated app", "Create an installation access token for an app"). It verifies the app JWT:
 * RS256 signed by the app's key, `iss` = the app id, `iat` not in the future, `exp` in the future
 * and at most ten minutes after `iat`.
 */
function gitHubStandIn(appPublicKey: KeyObject) {
  const seen: Seen[] = [];
  const users = new Map([['alice-gh', 101]]);
  const orgs = new Map([['acme', 202]]);
  const issued: string[] = [];

  const installation = (id: number, login: string, type: 'User' | 'Organization') => ({
    id,
    account: { login, id: id * 10, node_id: 'MDQ6VXNlcjE=', type, site_admin: false, url: `https://api.github.com/users/${login}` },
    access_tokens_url: `https://api.github.com/app/installations/${id}/access_tokens`,
    repositories_url: 'https://api.github.com/installation/repositories',
    html_url: `https://github.com/settings/installations/${id}`,
    app_id: Number(APP_ID),
    app_slug: 'backyard-test',
    target_id: id * 10,
    target_type: type,
    permissions: { contents: 'write', metadata: 'read' },
    events: ['push'],
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    repository_selection: 'all',
    suspended_by: null,
    suspended_at: null,
  });

  const checkJwt = (authorization: string | undefined): Seen['jwt'] | { claims: Seen['claims'] } => {
    const match = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/i.exec(authorization ?? '');
    if (!match) return 'missing';
    const [, header, payload, signature] = match as unknown as [string, string, string, string];
    const head = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string };
    if (head.alg !== 'RS256') return 'bad-signature';
    const good = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), appPublicKey, Buffer.from(signature, 'base64url'));
    if (!good) return 'bad-signature';
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as NonNullable<Seen['claims']>;
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims;
    if (String(claims.iss) !== APP_ID || typeof iat !== 'number' || typeof exp !== 'number') return 'bad-claims';
    if (iat > now + 60 || exp <= now || exp - iat > 600) return 'bad-claims';
    return { claims };
  };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json' });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: http.ServerResponse, doc: string) =>
    send(res, 404, { message: 'Not Found', documentation_url: `https://docs.github.com/rest/apps/apps#${doc}`, status: '404' });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const verdict = checkJwt(req.headers.authorization);
    const record: Seen = { method: req.method ?? '', path: url.pathname, jwt: typeof verdict === 'string' ? verdict : 'valid' };
    if (typeof verdict !== 'string') record.claims = verdict.claims;
    seen.push(record);
    if (!req.headers['user-agent']) return send(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.' });
    if (typeof verdict === 'string') {
      return send(res, 401, {
        message: verdict === 'bad-claims' ? "'Expiration time' claim ('exp') is too far in the future" : 'A JSON web token could not be decoded',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    let m: RegExpExecArray | null;
    if (req.method === 'GET' && (m = /^\/users\/([^/]+)\/installation$/.exec(url.pathname))) {
      const id = users.get(m[1]!.toLowerCase());
      return id ? send(res, 200, installation(id, m[1]!, 'User')) : notFound(res, 'get-a-user-installation-for-the-authenticated-app');
    }
    if (req.method === 'GET' && (m = /^\/orgs\/([^/]+)\/installation$/.exec(url.pathname))) {
      const id = orgs.get(m[1]!.toLowerCase());
      return id ? send(res, 200, installation(id, m[1]!, 'Organization')) : notFound(res, 'get-an-organization-installation-for-the-authenticated-app');
    }
    if (req.method === 'POST' && (m = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname))) {
      const id = Number(m[1]);
      if (![...users.values(), ...orgs.values()].includes(id)) return notFound(res, 'create-an-installation-access-token-for-an-app');
      const token = `ghs_${randomBytes(18).toString('hex')}`;
      issued.push(token);
      // GitHub answers whole seconds: "2016-07-11T22:14:10Z".
      const expires = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000).toISOString().replace('.000Z', 'Z');
      return send(res, 201, { token, expires_at: expires, permissions: { contents: 'write', metadata: 'read' }, repository_selection: 'all' });
    }
    return send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  });
  return { server, seen, issued };
}

const pem = (key: KeyObject, type: 'pkcs1' | 'pkcs8') => key.export({ type, format: 'pem' }).toString();

let standIn: ReturnType<typeof gitHubStandIn>;
let apiUrl: string;
let appKeys: { publicKey: KeyObject; privateKey: KeyObject };
let otherKeys: { publicKey: KeyObject; privateKey: KeyObject };
let server: TestServer;
const homes: string[] = [];

beforeAll(async () => {
  appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  otherKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  standIn = gitHubStandIn(appKeys.publicKey);
  await new Promise<void>((resolve) => standIn.server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(standIn.server.address() as AddressInfo).port}`;
  // GitHub hands out PKCS#1 ("BEGIN RSA PRIVATE KEY"); Backyard takes it as it is.
  server = await startTestServer({ BACKYARD_GITHUB_APP_ID: APP_ID, BACKYARD_GITHUB_PRIVATE_KEY: pem(appKeys.privateKey, 'pkcs1'), BACKYARD_GITHUB_API_URL: apiUrl });
  const alice = (await server.platform.services.accounts.findByLogin('alice'))!;
  await server.platform.services.repoHost.githubLinks.link(alice.id, 'alice-gh');
  await server.platform.services.repoHost.githubLinks.link(alice.id, 'acme');
  await server.platform.services.repoHost.githubLinks.link(alice.id, 'ghost-gh');
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => standIn?.server.close(resolve));
  for (const home of homes) removeHome(home);
});

const mint = (token: string, accountLogin?: string) =>
  api(server, 'POST', '/repohost-installation-access-token', { token, body: accountLogin === undefined ? {} : { accountLogin } });

describe('createRepohostInstallationAccessToken with a GitHub App', () => {
  it('creates an installation token on a linked user account, with a JWT signed by the app key', async () => {
    standIn.seen.length = 0;
    const response = await mint(server.alice, 'alice-gh');
    expect(response.status, response.text).toBe(201);
    const body = response.json() as { token: string; expiresAt: string };
    expect(body.token).toBe(standIn.issued.at(-1));
    expect(body.token).toMatch(/^ghs_/);
    expect(body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect(standIn.seen.map((s) => `${s.method} ${s.path} ${s.jwt}`)).toEqual([
      'GET /users/alice-gh/installation valid',
      'POST /app/installations/101/access_tokens valid',
    ]);
    const claims = standIn.seen[0]!.claims!;
    expect(String(claims.iss)).toBe(APP_ID);
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(600);
  });

  it('finds an organisation installation when the login is no user', async () => {
    standIn.seen.length = 0;
    const response = await mint(server.alice, 'ACME');
    expect(response.status, response.text).toBe(201);
    expect(standIn.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /users/acme/installation',
      'GET /orgs/acme/installation',
      'POST /app/installations/202/access_tokens',
    ]);
  });

  it('a linked login where the app is not installed: 400 that says so', async () => {
    const response = await mint(server.alice, 'ghost-gh');
    expect(response.status).toBe(400);
    expect(response.text).toContain('not installed on the GitHub account "ghost-gh"');
  });

  it('a login not linked to the caller: 400 that lists the linked ones; nothing is asked of GitHub', async () => {
    standIn.seen.length = 0;
    const response = await mint(server.bob, 'alice-gh');
    expect(response.status).toBe(400);
    expect(response.text).toContain('"alice-gh" is not linked');
    expect(response.text).toContain('"bob" (the built-in git host)');
    expect(standIn.seen).toEqual([]);
    const other = await mint(server.alice, 'stranger');
    expect(other.status).toBe(400);
    expect(other.text).toContain('"acme" (GitHub), "alice-gh" (GitHub), "ghost-gh" (GitHub)');
  });

  it('without accountLogin the built-in host answers (the caller\'s own login is not linked on GitHub)', async () => {
    const response = await mint(server.alice);
    expect(response.status).toBe(201);
    expect((response.json() as { token: string }).token).toMatch(/^byr_/);
  });

  it('gives Web Apps a GitHub clone address with a fresh installation token', async () => {
    const host = server.platform.services.repoHost;
    const alice = (await server.platform.services.accounts.findByLogin('alice'))!;
    expect(await host.hostFor(alice, 'alice-gh')).toBe('github');
    expect(await host.hostFor(alice, 'alice')).toBe('builtin');
    const source = await host.source(alice, 'alice-gh', 'site');
    expect(source.host).toBe('github');
    expect(source.url).toBe(`${apiUrl.replace('http://', `http://x-access-token:${standIn.issued.at(-1)}@`)}/alice-gh/site.git`);
    expect(source.displayUrl).toBe(`${apiUrl}/alice-gh/site.git`);
  });

  it('a JWT signed with another key is refused by the stand-in, and Backyard answers 500 naming the credentials', async () => {
    const home = makeHome();
    homes.push(home);
    const keyFile = path.join(home, 'wrong-key.pem');
    fs.writeFileSync(keyFile, pem(otherKeys.privateKey, 'pkcs8'));
    const wrong = await startTestServer({ BACKYARD_GITHUB_APP_ID: APP_ID, BACKYARD_GITHUB_PRIVATE_KEY_FILE: keyFile, BACKYARD_GITHUB_API_URL: apiUrl });
    try {
      const alice = (await wrong.platform.services.accounts.findByLogin('alice'))!;
      await wrong.platform.services.repoHost.githubLinks.link(alice.id, 'alice-gh');
      standIn.seen.length = 0;
      const response = await api(wrong, 'POST', '/repohost-installation-access-token', { token: wrong.alice, body: { accountLogin: 'alice-gh' } });
      expect(response.status).toBe(500);
      expect(response.text).toContain('GitHub refused the Backyard GitHub App\'s credentials');
      expect(standIn.seen.length).toBeGreaterThan(0);
      expect(standIn.seen.every((s) => s.jwt === 'bad-signature')).toBe(true);
      expect(standIn.seen.some((s) => s.path.endsWith('/access_tokens'))).toBe(false);
    } finally {
      await wrong.close();
    }
  });
});

describe('GitHub App configuration', () => {
  const base = { BACKYARD_LOG_LEVEL: 'silent' };

  it('is off without variables, and needs both the app id and one private key', () => {
    expect(loadConfig({ home: '/tmp/x' }, base).github).toBeUndefined();
    expect(() => loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_APP_ID: '1' })).toThrow(/private key/);
    expect(() => loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_PRIVATE_KEY: pem(appKeys.privateKey, 'pkcs1') })).toThrow(/BACKYARD_GITHUB_APP_ID/);
    expect(() => loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_APP_ID: '1', BACKYARD_GITHUB_PRIVATE_KEY: 'nope' })).toThrow(ConfigError);
    expect(() => loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_APP_ID: '1', BACKYARD_GITHUB_PRIVATE_KEY_FILE: '/nonexistent/key.pem' })).toThrow(
      /BACKYARD_GITHUB_PRIVATE_KEY_FILE cannot be read/,
    );
    expect(() => loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_APP_ID: '1', BACKYARD_GITHUB_PRIVATE_KEY: pem(appKeys.privateKey, 'pkcs1'), BACKYARD_GITHUB_API_URL: 'ftp://x' })).toThrow(
      /BACKYARD_GITHUB_API_URL/,
    );
  });

  it('takes a one-line PEM with \\n escapes, converts it to PKCS#8 and defaults to api.github.com', () => {
    const oneLine = pem(appKeys.privateKey, 'pkcs1').replace(/\n/g, '\\n');
    const config = loadConfig({ home: '/tmp/x' }, { ...base, BACKYARD_GITHUB_APP_ID: '77', BACKYARD_GITHUB_PRIVATE_KEY: oneLine });
    expect(config.github).toEqual({ appId: '77', privateKey: pem(appKeys.privateKey, 'pkcs8'), apiUrl: 'https://api.github.com' });
  });

  it('clone addresses point at github.com, or at the GitHub Enterprise host', () => {
    const log = createLogger('silent');
    const key = pem(appKeys.privateKey, 'pkcs8');
    const dotcom = new GitHubAppHost({ appId: '1', privateKey: key, apiUrl: 'https://api.github.com' }, log);
    expect(dotcom.cloneUrl('octo', 'site', 'ghs_x')).toBe('https://x-access-token:ghs_x@github.com/octo/site.git');
    const ghes = new GitHubAppHost({ appId: '1', privateKey: key, apiUrl: 'https://ghe.example.com/api/v3' }, log);
    expect(ghes.webUrl).toBe('https://ghe.example.com');
  });
});

describe('backyard account link', () => {
  it('links, lists and unlinks GitHub logins', async () => {
    const home = makeHome();
    homes.push(home);
    const env = stdioEnv(home, { BACKYARD_LOG_LEVEL: 'silent' });
    const cli = (args: string[]) =>
      exec(process.execPath, [CLI, ...args], { env }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );
    expect((await cli(['account', 'create', 'dana'])).code).toBe(0);
    const linked = await cli(['account', 'link', 'dana', '--github', 'dana-gh']);
    expect(linked.code).toBe(0);
    expect(linked.stderr).toContain('no GitHub App is configured');
    expect((await cli(['account', 'link', 'dana', '--github', 'acme'])).code).toBe(0);
    expect((await cli(['account', 'links', 'dana'])).stdout).toBe('github\tacme\ngithub\tdana-gh\n');
    expect((await cli(['account', 'unlink', 'dana', '--github', 'acme'])).code).toBe(0);
    expect((await cli(['account', 'links', 'dana'])).stdout).toBe('github\tdana-gh\n');
    const again = await cli(['account', 'unlink', 'dana', '--github', 'acme']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not linked');
    expect((await cli(['account', 'link', 'nobody', '--github', 'x'])).code).toBe(1);
    expect((await cli(['account', 'link', 'dana', '--github', '-bad-'])).code).toBe(1);
  }, 180_000); // `backyard` command-line processes, each loading Backyard, beside the other suites
});
