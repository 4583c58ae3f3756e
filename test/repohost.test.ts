import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushEvent } from '../src/platform/repohost/service.js';
import { ZERO_SHA } from '../src/platform/repohost/names.js';
import { CLI, stdioEnv } from './helpers/mcpClients.js';
import { api, startTestServer, type TestServer } from './helpers/server.js';
import { git as gitIn, ok as gitOk } from './helpers/webapps.js';

const exec = promisify(execFile);

let server: TestServer;
let work: string;
const events: PushEvent[] = [];

/** The host's real `git`, with HOME in this suite's work folder. */
const git = (cwd: string, args: string[]) => gitIn(cwd, args, work);
const ok = (cwd: string, args: string[]) => gitOk(cwd, args, work);

/** The address of a built-in repository with `secret` as the password. */
const remote = (owner: string, repo: string, secret?: string) => {
  const url = new URL(`${server.url}/git/${owner}/${repo}.git`);
  if (secret !== undefined) {
    url.username = 'x-access-token';
    url.password = secret;
  }
  return url.toString();
};

/** Mints an access token through operation 7 as the holder of `accountToken`. */
async function mint(accountToken: string, body: Record<string, unknown> = {}) {
  const response = await api(server, 'POST', '/repohost-installation-access-token', { token: accountToken, body });
  expect(response.status, response.text).toBe(201);
  return response.json() as { token: string; expiresAt: string };
}

/** A new working repository with one commit on `main`. */
async function newWorkingRepo(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  await ok(dir, ['init', '-q', '-b', 'main']);
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
  await ok(dir, ['add', '.']);
  await ok(dir, ['commit', '-q', '-m', 'first']);
  return dir;
}

const basic = (secret: string) => `Basic ${Buffer.from(`anyone:${secret}`).toString('base64')}`;

beforeAll(async () => {
  server = await startTestServer();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-git-'));
  await server.platform.services.repoHost.onPush((event) => {
    events.push(event);
  });
});

afterAll(async () => {
  await server?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('createRepohostInstallationAccessToken (built-in host)', () => {
  it('mints a random one-hour token for the caller\'s own login, stored only as a hash', async () => {
    const before = Date.now();
    const a = await mint(server.alice);
    const b = await mint(server.alice, { accountLogin: 'alice' });
    expect(a.token).toMatch(/^byr_[A-Za-z0-9_-]{43}$/);
    expect(a.token).not.toBe(b.token);
    const expires = Date.parse(a.expiresAt);
    expect(a.expiresAt).toBe(new Date(expires).toISOString());
    expect(expires - before).toBeGreaterThan(3590_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(3600_000);
    const rows = (await server.platform.db.all('SELECT token_hash FROM repohost_access_tokens')) as Array<{ token_hash: Buffer }>;
    const hash = createHash('sha256').update(a.token).digest();
    expect(rows.some((r) => r.token_hash.equals(hash))).toBe(true);
    const raw = fs.readFileSync(path.join(server.home, 'platform.db'));
    const wal = fs.existsSync(path.join(server.home, 'platform.db-wal')) ? fs.readFileSync(path.join(server.home, 'platform.db-wal')) : Buffer.alloc(0);
    expect(raw.includes(Buffer.from(a.token)) || wal.includes(Buffer.from(a.token))).toBe(false);
  });

  it('refuses another login with a 400 that names the linked one', async () => {
    const response = await api(server, 'POST', '/repohost-installation-access-token', { token: server.alice, body: { accountLogin: 'bob' } });
    expect(response.status).toBe(400);
    expect(response.contentType).toMatch(/^text\/plain/);
    expect(response.text).toContain('"bob" is not linked');
    expect(response.text).toContain('"alice" (the built-in git host)');
  });

  it('needs the caller\'s token (401)', async () => {
    const response = await api(server, 'POST', '/repohost-installation-access-token', { body: {} });
    expect(response.status).toBe(401);
  });
});

describe('the built-in git host over HTTP', () => {
  let first: string;
  let second: string;
  let clone: string;

  it('a push with an access token creates a missing repository of one\'s own login and fires the push event', async () => {
    const { token } = await mint(server.alice);
    const dir = await newWorkingRepo('hello', { Dockerfile: 'FROM scratch\n', 'app/index.html': '<p>hi</p>\n' });
    first = (await ok(dir, ['rev-parse', 'HEAD'])).trim();
    const host = server.platform.services.repoHost;
    expect(host.exists('alice', 'hello')).toBe(false);
    events.length = 0;

    await ok(dir, ['push', remote('alice', 'hello', token), 'main']);

    expect(host.exists('alice', 'hello')).toBe(true);
    expect(fs.existsSync(path.join(server.home, 'git', 'alice', 'hello.git', 'HEAD'))).toBe(true);
    expect(host.localPath('alice', 'hello')).toBe(path.join(server.home, 'git', 'alice', 'hello.git'));
    expect(events).toEqual([{ owner: 'alice', repo: 'hello', pusher: 'alice', refs: [{ ref: 'refs/heads/main', before: ZERO_SHA, after: first }] }]);
    // The token stays out of the repository's config.
    expect(fs.readFileSync(path.join(host.localPath('alice', 'hello'), 'config'), 'utf8')).not.toContain(token);
  });

  it('git clone gets it back, with main as the default branch', async () => {
    const { token } = await mint(server.alice);
    clone = path.join(work, 'hello-clone');
    await ok(work, ['clone', '-q', remote('alice', 'hello', token), clone]);
    expect(fs.readFileSync(path.join(clone, 'app', 'index.html'), 'utf8')).toBe('<p>hi</p>\n');
    expect((await ok(clone, ['rev-parse', 'HEAD'])).trim()).toBe(first);
    expect((await ok(clone, ['symbolic-ref', '--short', 'HEAD'])).trim()).toBe('main');
  });

  it('a second push is fetched by the clone, and the event carries before and after', async () => {
    const { token } = await mint(server.alice);
    const dir = path.join(work, 'hello');
    fs.writeFileSync(path.join(dir, 'app', 'index.html'), '<p>second</p>\n');
    await ok(dir, ['commit', '-q', '-am', 'second']);
    await ok(dir, ['tag', 'v1']);
    second = (await ok(dir, ['rev-parse', 'HEAD'])).trim();
    events.length = 0;

    await ok(dir, ['push', remote('alice', 'hello', token), 'main', 'v1']);

    expect(events).toHaveLength(1);
    expect(events[0]!.refs).toEqual([
      { ref: 'refs/heads/main', before: first, after: second },
      { ref: 'refs/tags/v1', before: ZERO_SHA, after: second },
    ]);
    await ok(clone, ['fetch', '-q', remote('alice', 'hello', token), 'main']);
    expect((await ok(clone, ['rev-parse', 'FETCH_HEAD'])).trim()).toBe(second);
  });

  it('a push that changes nothing fires no event; deleting a branch reports the zero SHA after', async () => {
    const { token } = await mint(server.alice);
    const dir = path.join(work, 'hello');
    events.length = 0;
    await ok(dir, ['push', remote('alice', 'hello', token), 'main']);
    expect(events).toEqual([]);
    await ok(dir, ['push', remote('alice', 'hello', token), 'main:refs/heads/feature']);
    await ok(dir, ['push', remote('alice', 'hello', token), ':refs/heads/feature']);
    expect(events.map((e) => e.refs)).toEqual([
      [{ ref: 'refs/heads/feature', before: ZERO_SHA, after: second }],
      [{ ref: 'refs/heads/feature', before: second, after: ZERO_SHA }],
    ]);
  });

  it('answers what Web Apps ask: default branch, branch heads and files', async () => {
    const host = server.platform.services.repoHost;
    expect(await host.defaultBranch('alice', 'hello')).toBe('main');
    expect(await host.resolveBranch('alice', 'hello', 'main')).toBe(second);
    expect(await host.resolveBranch('alice', 'hello', 'nope')).toBeUndefined();
    expect(await host.resolveBranch('alice', 'hello', '--all')).toBeUndefined();
    expect(await host.resolveBranch('alice', 'missing', 'main')).toBeUndefined();
    expect(await host.hasFile('alice', 'hello', 'main', 'Dockerfile')).toBe(true);
    expect(await host.hasFile('alice', 'hello', 'main', './app/index.html')).toBe(true);
    expect(await host.hasFile('alice', 'hello', 'main', 'app')).toBe(false); // a folder
    expect(await host.hasFile('alice', 'hello', 'main', 'app/Dockerfile')).toBe(false);
    expect(await host.hasFile('alice', 'hello', 'main', '../hello.git/HEAD')).toBe(false);
    expect(await host.hasFile('alice', 'hello', first, 'Dockerfile')).toBe(true);
    expect((await host.builtin.readFile('alice', 'hello', 'main', 'app/index.html'))?.toString()).toBe('<p>second</p>\n');
    // In-process clone from the local path needs no token.
    await ok(work, ['clone', '-q', '--branch', 'main', host.localPath('alice', 'hello'), path.join(work, 'local-clone')]);
    expect(fs.existsSync(path.join(work, 'local-clone', 'Dockerfile'))).toBe(true);
  });

  it('an account token works as the password too, and the .git ending may be left out', async () => {
    const result = await git(work, ['ls-remote', remote('alice', 'hello', server.alice).replace(/\.git$/, ''), 'refs/heads/main']);
    expect(result.stdout).toBe(`${second}\trefs/heads/main\n`);
  });

  it('streams large pushes (chunked, beyond the server\'s body limit) and gzip-encoded requests', async () => {
    const { token } = await mint(server.alice);
    const dir = await newWorkingRepo('big', { 'blob.bin': randomBytes(17 * 1024 * 1024).toString('base64') });
    await ok(dir, ['push', remote('alice', 'big', token), 'main']);
    const head = (await ok(dir, ['rev-parse', 'HEAD'])).trim();
    expect(await server.platform.services.repoHost.resolveBranch('alice', 'big', 'main')).toBe(head);

    // A gzip-encoded upload-pack request, as git sends large negotiations.
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const body = gzipSync(Buffer.from(`${pkt(`want ${second} ofs-delta\n`)}0000${pkt('done\n')}`));
    const response = await fetch(`${server.url}/git/alice/hello.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        authorization: basic(token),
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
        accept: 'application/x-git-upload-pack-result',
      },
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const answer = Buffer.from(await response.arrayBuffer());
    expect(answer.subarray(0, 8).toString()).toBe('0008NAK\n');
    expect(answer.includes(Buffer.from('PACK'))).toBe(true);
  });
});

describe('refused credentials', () => {
  it('no credential: 401 with a Basic challenge, even for a repository that does not exist', async () => {
    for (const target of ['/git/alice/hello.git/info/refs?service=git-upload-pack', '/git/alice/nothing.git/info/refs?service=git-receive-pack']) {
      const response = await fetch(`${server.url}${target}`);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="backyard"');
    }
    const result = await git(work, ['ls-remote', remote('alice', 'hello')]);
    expect(result.code).not.toBe(0);
  });

  it('malformed and unknown tokens: 401', async () => {
    const url = `${server.url}/git/alice/hello.git/info/refs?service=git-upload-pack`;
    for (const authorization of ['Basic !!!', 'Basic ' + Buffer.from('no-colon').toString('base64'), basic(''), basic('byr_nonsense'), basic('by_nonsense'), 'Bearer byr_x', 'Digest abc']) {
      const response = await fetch(url, { headers: { authorization } });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="backyard"');
    }
    const result = await git(work, ['ls-remote', remote('alice', 'hello', 'byr_not-a-real-token')]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Authentication failed/);
  });

  it('an expired token is refused', async () => {
    const { token } = await mint(server.alice);
    expect((await git(work, ['ls-remote', remote('alice', 'hello', token)])).code).toBe(0);
    const hash = createHash('sha256').update(token).digest();
    await server.platform.db.run('UPDATE repohost_access_tokens SET expires_at = ? WHERE token_hash = ?', new Date(Date.now() - 1000).toISOString(), hash);
    const result = await git(work, ['ls-remote', remote('alice', 'hello', token)]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Authentication failed/);
    const response = await fetch(`${server.url}/git/alice/hello.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(token) } });
    expect(response.status).toBe(401);
  });

  it('a foreign token (bob\'s) answers 404 for alice\'s repositories, existing or not, and creates nothing', async () => {
    const bobs = await mint(server.bob);
    for (const secret of [bobs.token, server.bob]) {
      const read = await git(work, ['ls-remote', remote('alice', 'hello', secret)]);
      expect(read.code).not.toBe(0);
      expect(read.stderr).toMatch(/not found/i);
      const push = await git(path.join(work, 'hello'), ['push', remote('alice', 'hello', secret), 'main:refs/heads/bob']);
      expect(push.code).not.toBe(0);
      const create = await git(path.join(work, 'hello'), ['push', remote('alice', 'made-by-bob', secret), 'main']);
      expect(create.code).not.toBe(0);
    }
    const existing = await fetch(`${server.url}/git/alice/hello.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(bobs.token) } });
    const missing = await fetch(`${server.url}/git/alice/nothing.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(bobs.token) } });
    expect(existing.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(server.platform.services.repoHost.exists('alice', 'made-by-bob')).toBe(false);
    expect(await server.platform.services.repoHost.resolveBranch('alice', 'hello', 'bob')).toBeUndefined();
  });

  it('reading a missing repository of one\'s own does not create it; odd paths and methods are refused', async () => {
    const { token } = await mint(server.alice);
    const result = await git(work, ['ls-remote', remote('alice', 'ghost', token)]);
    expect(result.code).not.toBe(0);
    expect(server.platform.services.repoHost.exists('alice', 'ghost')).toBe(false);
    const headers = { authorization: basic(token) };
    expect((await fetch(`${server.url}/git/alice/hello.git/info/refs`, { headers })).status).toBe(403); // dumb protocol
    expect((await fetch(`${server.url}/git/alice/hello.git/HEAD`, { headers })).status).toBe(404);
    expect((await fetch(`${server.url}/git/alice/..%2F..%2Fetc.git/info/refs?service=git-upload-pack`, { headers })).status).toBe(404);
    expect((await fetch(`${server.url}/git/alice/x.git.git/info/refs?service=git-upload-pack`, { headers })).status).toBe(404);
    expect((await fetch(`${server.url}/git/alice/hello.git/git-upload-pack`, { headers })).status).toBe(403); // GET
  });
});

describe('backyard repo create', () => {
  const cli = (args: string[]) =>
    exec(process.execPath, [CLI, ...args], { env: stdioEnv(server.home, { BACKYARD_PORT: '4000', BACKYARD_LOG_LEVEL: 'silent' }) }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('creates an empty bare repository with main as default branch and prints its address', async () => {
    const made = await cli(['repo', 'create', 'alice/cli-made']);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toBe('http://localhost:4000/git/alice/cli-made.git\n');
    const host = server.platform.services.repoHost;
    expect(host.exists('alice', 'cli-made')).toBe(true);
    expect(await host.defaultBranch('alice', 'cli-made')).toBe('main');
    // Reachable at once through the running server, and empty.
    const { token } = await mint(server.alice);
    const listed = await git(work, ['ls-remote', remote('alice', 'cli-made', token)]);
    expect(listed).toMatchObject({ code: 0, stdout: '' });

    const again = await cli(['repo', 'create', 'alice/cli-made']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    const nobody = await cli(['repo', 'create', 'nobody/x']);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('No Backyard account has the login "nobody"');
    const bad = await cli(['repo', 'create', 'alice/../x']);
    expect(bad.code).toBe(1);
    const list = await cli(['repo', 'list', 'alice']);
    expect(list.stdout).toContain('alice/cli-made\thttp://localhost:4000/git/alice/cli-made.git\n');
  }, 180_000); // `backyard` command-line processes, each loading Backyard, beside the other suites
});
