/**
 * Parts of Web Apps that need no Docker engine: the rules on names, folders, paths and variables;
 * `.dockerignore` and the build context; container log frames; the container's Engine API body;
 * the health probe; and the GitHub path of the repository reader and of the auto-deploy poller,
 * run against a local bare repository standing in for GitHub (any git URL behaves the same).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tarEntries } from './helpers/tarEntries.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ManagementError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import type { Account } from '../src/platform/accounts/service.js';
import { openPlatform } from '../src/platform/platform.js';
import type { RepoHostService } from '../src/platform/repohost/service.js';
import { openDatabase } from '../src/shared/sqlite.js';
import { SqliteSql } from '../src/shared/sqliteSql.js';
import { migrations } from '../src/platform/store/migrations.js';
import { AutoDeploy } from '../src/platform/webapps/autodeploy.js';
import { buildContext, isIgnored, parseDockerignore, patternRegex } from '../src/platform/webapps/context.js';
import { healthy, probe, waitHealthy } from '../src/platform/webapps/health.js';
import { imageFilter, imageTag } from '../src/platform/webapps/labels.js';
import { parseContainerLogs } from '../src/platform/webapps/logs.js';
import { checkAppName, checkHealthCheckPath, mergeVariables, normaliseRootDir, subdomainCandidates } from '../src/platform/webapps/names.js';
import { runSpec } from '../src/platform/webapps/runner.js';
import { networkAddress } from '../src/platform/webapps/addresses.js';
import { RepositorySources, SourceError } from '../src/platform/webapps/source.js';
import { WebAppStore } from '../src/platform/webapps/store.js';
import { commit, ok } from './helpers/webapps.js';
import { refusalOf, rejectionOf } from './helpers/refusal.js';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(ManagementError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('names, folders, paths and variables', () => {
  it('app names are DNS labels', () => {
    for (const good of ['a', 'hello-web', 'x1', 'a'.repeat(63), '1app']) expect(() => checkAppName(good)).not.toThrow();
    for (const bad of ['', 'A', 'a_b', '-a', 'a-', 'a.b', 'a'.repeat(64), 'héllo']) expect(refusal(() => checkAppName(bad))).toMatch(/is not a DNS label/);
  });

  it('subdomains: the name, then <name>-2, <name>-3, ..., each a DNS label', () => {
    const gen = subdomainCandidates('shop');
    expect([gen.next().value, gen.next().value, gen.next().value]).toEqual(['shop', 'shop-2', 'shop-3']);
    const long = subdomainCandidates(`${'a'.repeat(60)}-bc`);
    long.next();
    expect(long.next().value).toBe(`${'a'.repeat(60)}-2`);
  });

  it('rootDirPath has one spelling and stays inside the repository', () => {
    expect(['', '.', '/', './', './/'].map(normaliseRootDir)).toEqual(['.', '.', '.', '.', '.']);
    expect(['app', './app/', '/app', 'a//b/./c/'].map(normaliseRootDir)).toEqual(['app', 'app', 'app', 'a/b/c']);
    expect(refusal(() => normaliseRootDir('../x'))).toMatch(/leaves the repository/);
    expect(refusal(() => normaliseRootDir('a/../../b'))).toMatch(/leaves the repository/);
    expect(refusal(() => normaliseRootDir('a\\b'))).toMatch(/backslash/);
  });

  it('health check paths start with one slash', () => {
    for (const good of ['/', '/health', '/a/b?x=1']) expect(() => checkHealthCheckPath(good)).not.toThrow();
    for (const bad of ['health', '//evil.example', '/a b', '/x#y', '']) expect(refusal(() => checkHealthCheckPath(bad))).toMatch(/is not a path/);
  });

  it('variables: remove, then set; a key in both is refused; values never appear in texts', () => {
    const current = [{ key: 'A', value: '1' }, { key: 'B', value: 'secret' }];
    expect(mergeVariables(current, [{ key: 'C', value: '3' }, { key: 'A', value: 'x' }], ['B', 'Z'])).toEqual([{ key: 'A', value: 'x' }, { key: 'C', value: '3' }]);
    expect(refusal(() => mergeVariables(current, [{ key: 'B', value: 'secret2' }], ['B']))).not.toContain('secret');
    const twice = refusal(() => mergeVariables([], [{ key: 'K', value: 'v1-secret' }, { key: 'K', value: 'v2-secret' }], []));
    expect(twice).toMatch(/names the key "K" twice/);
    expect(twice).not.toContain('secret');
  });
});

describe('the build context', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-context-'));
    const files: Record<string, string> = {
      Dockerfile: 'FROM scratch\n',
      '.dockerignore': '# comment\nnode_modules\n*.log\n!keep.log\nsecrets/**\n/Dockerfile\ndocs\n!docs/README.md\n',
      'app.js': 'x',
      'debug.log': 'x',
      'keep.log': 'x',
      'node_modules/a/index.js': 'x',
      'src/node_modules/b.js': 'x',
      'secrets/deep/key.pem': 'x',
      'docs/guide.md': 'x',
      'docs/README.md': 'x',
      '.git/HEAD': 'x',
      'bin/run.sh': '#!/bin/sh\n',
    };
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), content);
    }
    fs.chmodSync(path.join(dir, 'bin/run.sh'), 0o755);
    fs.symlinkSync('app.js', path.join(dir, 'link.js'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('patterns follow Docker: * and ? within a segment, ** across, the last matching rule decides, parents count', () => {
    expect(patternRegex('*.log').test('a.log')).toBe(true);
    expect(patternRegex('*.log').test('dir/a.log')).toBe(false);
    expect(patternRegex('**/*.log').test('dir/sub/a.log')).toBe(true);
    expect(patternRegex('**/*.log').test('a.log')).toBe(true);
    expect(patternRegex('file?.txt').test('file1.txt')).toBe(true);
    expect(patternRegex('[ab].txt').test('b.txt')).toBe(true);
    expect(patternRegex('[!ab].txt').test('b.txt')).toBe(false);
    // A line a repository's author chose to backtrack (exponential in JavaScript's RegExp): linear here.
    const hostile = patternRegex(`${'**a'.repeat(30)}b`);
    const started = process.hrtime.bigint();
    expect(hostile.test('a'.repeat(40))).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(5000);
    const rules = parseDockerignore('node_modules\n*.log\n!keep.log\n');
    expect(isIgnored('node_modules/a/index.js', rules)).toBe(true);
    expect(isIgnored('src/node_modules/b.js', rules)).toBe(false);
    expect(isIgnored('x.log', rules)).toBe(true);
    expect(isIgnored('keep.log', rules)).toBe(false);
  });

  it('tars the folder without what .dockerignore names or .git, keeping modes and links, with the commit\'s time and owner 0', async () => {
    const mtime = new Date('2026-01-02T03:04:05Z');
    const entries = await tarEntries(buildContext(dir, { mtime, skipGit: true }));
    expect([...entries.keys()].sort()).toEqual(
      // `secrets/**` leaves out what is inside the folder, not the folder itself (as Docker).
      ['.dockerignore', 'Dockerfile', 'app.js', 'bin/', 'bin/run.sh', 'docs/README.md', 'keep.log', 'link.js', 'secrets/', 'src/', 'src/node_modules/', 'src/node_modules/b.js'].sort(),
    );
    expect(entries.get('bin/run.sh')!.mode! & 0o777).toBe(0o755);
    expect(entries.get('link.js')).toMatchObject({ type: 'symlink', linkname: 'app.js' });
    expect(entries.get('app.js')).toMatchObject({ uid: 0, gid: 0, size: 1 });
    expect(entries.get('app.js')!.mtime!.getTime()).toBe(mtime.getTime());
  });
});

describe('container logs and the container\'s settings', () => {
  it('splits the engine\'s log frames into rows with millisecond times', () => {
    const frame = (type: number, text: string) => {
      const header = Buffer.alloc(8);
      header[0] = type;
      header.writeUInt32BE(Buffer.byteLength(text), 4);
      return Buffer.concat([header, Buffer.from(text)]);
    };
    const buffer = Buffer.concat([
      frame(1, '2026-11-21T07:00:00.123456789Z listening on 8080\n'),
      frame(2, '2026-11-21T07:00:01.5Z oops\n2026-11-21T07:00:02Z two'),
      frame(2, ' parts\n'),
    ]);
    expect(parseContainerLogs(buffer)).toEqual([
      { source: 'stdout', message: 'listening on 8080', time: '2026-11-21T07:00:00.123Z' },
      { source: 'stderr', message: 'oops', time: '2026-11-21T07:00:01.500Z' },
      { source: 'stderr', message: 'two parts', time: '2026-11-21T07:00:02.000Z' },
    ]);
  });

  it('publishes on loopback only, on its account\'s network, with limits, a restart policy and no privileges', () => {
    const spec = runSpec({ dockerHost: undefined, memoryMb: 64, cpus: 0.5 }, { accountId: 'acc', name: 'n', image: 'i', port: 3000, env: ['A=1'], labels: { l: 'v' } }, 'backyard-net');
    expect(spec.ExposedPorts).toEqual({ '3000/tcp': {} });
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: 'backyard-net',
      PortBindings: { '3000/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
      Memory: 64 * 1024 * 1024,
      MemorySwap: 64 * 1024 * 1024,
      NanoCpus: 5e8,
      Privileged: false,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      RestartPolicy: { Name: 'unless-stopped' },
    });
    expect(spec.HostConfig!.Binds).toBeUndefined();
    expect(spec.HostConfig!.Mounts).toBeUndefined();
  });

  it('reads a container\'s address on the network it was made on, else on the one it has', async () => {
    const listed = (mode: string, networks: Record<string, string>) =>
      ({ HostConfig: { NetworkMode: mode }, NetworkSettings: { Networks: Object.fromEntries(Object.entries(networks).map(([n, ip]) => [n, { IPAddress: ip }])) } }) as never;
    expect(networkAddress(listed('backyard-a', { other: '10.0.0.9', 'backyard-a': '172.18.0.2' }))).toBe('172.18.0.2');
    // Moved onto its account's network after it was made on bridge: NetworkMode still says where it was made.
    expect(networkAddress(listed('default', { 'backyard-a': '172.18.0.3' }))).toBe('172.18.0.3');
    expect(networkAddress(listed('backyard-a', {}))).toBeUndefined();
  });

  it('image names carry a hash of the home, so one home\'s images are found by name', async () => {
    expect(imageTag('/h', 'shop', 'AbC')).toMatch(/^backyard-webapp-[0-9a-f]{8}\/shop:abc$/);
    expect(imageTag('/h', 'shop', 'x').split('/')[0]).not.toBe(imageTag('/other', 'shop', 'x').split('/')[0]);
    expect(imageFilter('/h').reference[0]).toBe(`${imageTag('/h', 'shop', 'x').split('/')[0]}/*`);
  });

  it('the configuration has the documented defaults and checks its values', async () => {
    expect(loadConfig({ home: '/tmp/x' }, {})).toMatchObject({ webappMemoryMb: 512, webappCpus: 1, webappHealthTimeoutMs: 60000, webappBuildTimeoutMs: 900000, webappPollMs: 60000 });
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS: 'soon' })).toThrow(/BACKYARD_WEBAPP_HEALTH_TIMEOUT_MS must be a number/);
    expect(() => loadConfig({ home: '/tmp/x' }, { BACKYARD_WEBAPP_POLL_MS: '10' })).toThrow(/BACKYARD_WEBAPP_POLL_MS must be at least 1000/);
  });
});

describe('the health check', () => {
  let server: http.Server;
  let port: number;
  let answer = 404;
  beforeAll(async () => {
    server = http.createServer(async (req, res) => {
      res.statusCode = req.url === '/redirect' ? 302 : answer;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('passes on 2xx and 3xx (redirects not followed), not on 4xx, 5xx or refused connections', async () => {
    expect(healthy(await probe(port, '/redirect', 1000))).toBe(true);
    expect(healthy(await probe(port, '/', 1000))).toBe(false);
    answer = 503;
    expect(await probe(port, '/', 1000)).toEqual({ status: 503 });
    expect(await probe(1, '/', 1000)).toEqual({ error: 'the connection was refused' });
  });

  it('waits for a passing answer, and fails with what it saw last or when the container exits', async () => {
    answer = 500;
    const running = { id: 'c', running: true, restarting: false, restartCount: 0, exitCode: 0, oomKilled: false, hostPort: port };
    setTimeout(() => (answer = 200), 300);
    expect(await waitHealthy({ path: '/', port: 80, timeoutMs: 3000, state: async () => running })).toBe(port);
    answer = 404;
    await expect(waitHealthy({ path: '/health', port: 80, timeoutMs: 600, state: async () => running })).rejects.toThrow(
      /GET \/health on port 80 got no 2xx or 3xx answer within 1 s \(last try: it answered status 404\)/,
    );
    await expect(waitHealthy({ path: '/', port: 80, timeoutMs: 3000, state: async () => ({ ...running, running: false, exitCode: 7 }) })).rejects.toThrow(
      /the container exited with code 7 before it answered/,
    );
    await expect(waitHealthy({ path: '/', port: 80, timeoutMs: 3000, state: async () => ({ ...running, running: false, oomKilled: true, exitCode: 137 }) })).rejects.toThrow(/ran out of memory/);
  });
});

describe('a GitHub repository (stood in for by a local bare repository)', () => {
  let work: string;
  let bare: string;
  let head: string;
  const account: Account = { id: 'acc', login: 'alice', createdAt: '2026-01-01T00:00:00.000Z' };
  let url = '';
  /** The part of the repository host that Web Apps use, answering as for a linked GitHub account. */
  const listeners: Array<(e: unknown) => void> = [];
  const github = {
    source: async () => ({ host: 'github' as const, url, displayUrl: 'https://github.com/octo/app.git' }),
    hostFor: () => 'github' as const,
    onPush: (listener: (e: unknown) => void) => {
      listeners.push(listener);
      return () => undefined;
    },
  } as unknown as RepoHostService;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-github-standin-'));
    bare = path.join(work, 'app.git');
    await ok(work, ['init', '-q', '--bare', '-b', 'main', bare]);
    head = await commit(path.join(work, 'clone'), { 'web/Dockerfile': 'FROM scratch\n', 'README.md': 'x' });
    await ok(path.join(work, 'clone'), ['push', '-q', bare, 'main']);
    url = pathToFileURL(bare).href;
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('checks the default branch, a branch and the Dockerfile without a clone of the whole repository', async () => {
    const sources = new RepositorySources(github);
    expect(await sources.check(account, 'octo', 'app', undefined, 'web')).toEqual({ branch: 'main', sha: head });
    await expect(sources.check(account, 'octo', 'app', 'nope', 'web')).rejects.toThrow(/The branch "nope" does not exist in octo\/app/);
    await expect(sources.check(account, 'octo', 'app', 'main', '.')).rejects.toThrow(/There is no Dockerfile at Dockerfile on the branch "main" of octo\/app/);
    expect(await sources.headOf(account, { owner: 'octo', repo: 'app', branch: 'main' })).toBe(head);
  });

  it('clones the branch head shallowly and never shows the token of the address in a failure', async () => {
    const sources = new RepositorySources(github);
    const dir = path.join(work, 'checkout');
    const cloned = await sources.checkout(account, { owner: 'octo', repo: 'app', branch: 'main' }, dir, { timeoutMs: 30_000 });
    expect(cloned.sha).toBe(head);
    expect(fs.readFileSync(path.join(dir, 'web', 'Dockerfile'), 'utf8')).toBe('FROM scratch\n');
    expect((await ok(dir, ['rev-list', '--count', 'HEAD'])).trim()).toBe('1');
    await expect(sources.checkout(account, { owner: 'octo', repo: 'app', branch: 'gone' }, path.join(work, 'gone'), { timeoutMs: 30_000 })).rejects.toThrow(
      /the branch "gone" does not exist in octo\/app any more/,
    );

    const saved = url;
    url = 'http://x-access-token:ghs_SECRETTOKEN@127.0.0.1:1/octo/app.git';
    try {
      const error = await sources.checkout(account, { owner: 'octo', repo: 'app', branch: 'main' }, path.join(work, 'refused'), { timeoutMs: 30_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceError);
      expect((error as Error).message).toMatch(/git clone of https:\/\/github\.com\/octo\/app\.git failed/);
      expect((error as Error).message).not.toContain('SECRETTOKEN');
    } finally {
      url = saved;
    }
  });

  it('the poller deploys an autoDeploy app when the branch head moves, once per new head', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-poller-'));
    const db = new SqliteSql(openDatabase(path.join(home, 'platform.db'), migrations));
    try {
      await db.run("INSERT INTO accounts (id, login, created_at) VALUES ('acc', 'alice', '2026-01-01T00:00:00.000Z')");
      const store = new WebAppStore(db);
      await store.insertApp({
        id: 'w1', account_id: 'acc', app_name: 'app', subdomain: 'app', repository_owner_login: 'octo', repository_name: 'app', branch_name: 'main',
        root_dir_path: 'web', environment_variables: '[]', port: null, health_check_path: '/', auto_deploy: 1, last_seen_sha: head, created_at: '2026-01-01T00:00:00.000Z', replicas: 1,
      });
      const deployed: string[] = [];
      const auto = new AutoDeploy(store, github, new RepositorySources(github), async (app, trigger) => deployed.push(`${app.id}:${trigger}`), createLogger('silent'));
      await auto.pollOnce();
      expect(deployed).toEqual([]);
      const next = await commit(path.join(work, 'clone'), { 'README.md': 'y' });
      await ok(path.join(work, 'clone'), ['push', '-q', bare, 'main']);
      await auto.pollOnce();
      await auto.pollOnce();
      expect(deployed).toEqual(['w1:poll']);
      expect((await store.appById('w1'))!.last_seen_sha).toBe(next);
      // Apps without autoDeploy are not polled.
      await store.updateSettings('w1', { auto_deploy: 0 });
      await commit(path.join(work, 'clone'), { 'README.md': 'z' });
      await ok(path.join(work, 'clone'), ['push', '-q', bare, 'main']);
      await auto.pollOnce();
      expect(deployed).toEqual(['w1:poll']);
      auto.close();
    } finally {
      await db.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('deployment log rows', () => {
  it('answers the last rows in time order, and pruning keeps the last ones', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-logs-'));
    const db = new SqliteSql(openDatabase(path.join(home, 'platform.db'), migrations));
    try {
      await db.run("INSERT INTO accounts (id, login, created_at) VALUES ('acc', 'alice', '2026-01-01T00:00:00.000Z')");
      const store = new WebAppStore(db);
      await store.insertApp({
        id: 'w1', account_id: 'acc', app_name: 'app', subdomain: 'app', repository_owner_login: 'alice', repository_name: 'app', branch_name: 'main',
        root_dir_path: '.', environment_variables: '[]', port: null, health_check_path: '/', auto_deploy: 0, last_seen_sha: '', created_at: '2026-01-01T00:00:00.000Z', replicas: 1,
      });
      await store.insertDeployment({ id: 'd1', web_app_id: 'w1', trigger: 'create', owner: 'me', created_at: '2026-01-01T00:00:00.000Z' });
      await store.insertLogs('d1', 'build', Array.from({ length: 30 }, (_, i) => ({ source: 'build', message: `line ${i}`, time: new Date(1_800_000_000_000 + i).toISOString() })));
      await store.insertLog('d1', 'container', { source: 'stdout', message: 'other kind', time: '2026-01-01T00:00:00.000Z' });
      expect((await store.lastLogs('d1', 'build', 3)).map((r) => r.message)).toEqual(['line 27', 'line 28', 'line 29']);
      await store.pruneLogs('d1', 'build', 5);
      expect((await store.lastLogs('d1', 'build', 100)).map((r) => r.message)).toEqual(['line 25', 'line 26', 'line 27', 'line 28', 'line 29']);
      expect(await store.lastLogs('d1', 'container', 100)).toHaveLength(1);
      expect(await store.route('app')).toMatchObject({ id: 'w1', active_deployment_id: null, last_status: 'queued' });
      await store.finish('d1', 'failed', 'x', '2026-01-01T00:00:01.000Z');
      expect((await store.route('app'))!.last_status).toBe('failed');
      // A route read that is under way when a write begins is not remembered: the next read sees the write.
      await store.insertDeployment({ id: 'd2', web_app_id: 'w1', trigger: 'manual', owner: 'me', created_at: '2026-01-01T00:00:02.000Z' });
      await store.setStatus('d2', 'starting', '2026-01-01T00:00:02.000Z');
      await store.setPorts('d2', 8080, 40000);
      const readDuring = store.route('app');
      const activated = store.activate('w1', 'd2', '2026-01-01T00:00:03.000Z');
      await Promise.all([readDuring, activated]);
      expect(await store.route('app')).toMatchObject({ active_deployment_id: 'd2', host_port: 40000 });
    } finally {
      await db.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});


describe('the listing of a Web App\'s deployments (the dashboard\'s read)', () => {
  it('lists newest first (in the order queued), at most `limit`, and refuses another account\'s app as unknown', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-deployments-'));
    const platform = await openPlatform(loadConfig({ home }, { BACKYARD_LOG_LEVEL: 'silent' }), createLogger('silent'));
    try {
      const alice = (await platform.services.accounts.create('alice')).account.id;
      const bob = (await platform.services.accounts.create('bob')).account.id;
      // Rows written as the service writes them; no deployment runs (no Docker here).
      const store = new WebAppStore(platform.db);
      await store.insertApp({
        id: 'w1', account_id: alice, app_name: 'app', subdomain: 'app', repository_owner_login: 'alice', repository_name: 'app', branch_name: 'main',
        root_dir_path: '.', environment_variables: '[]', port: null, health_check_path: '/', auto_deploy: 0, last_seen_sha: '', created_at: '2026-01-01T00:00:00.000Z', replicas: 1,
      });
      const at = '2026-01-01T00:00:01.000Z'; // one millisecond for all: the order queued decides
      await store.insertDeployment({ id: 'd1', web_app_id: 'w1', trigger: 'create', owner: 'elsewhere/1/x', created_at: at });
      await store.insertDeployment({ id: 'd2', web_app_id: 'w1', trigger: 'manual', owner: 'elsewhere/1/x', created_at: at });
      await store.insertDeployment({ id: 'd3', web_app_id: 'w1', trigger: 'update', owner: 'elsewhere/1/x', created_at: at });
      await store.finish('d1', 'failed', 'no Dockerfile', '2026-01-01T00:00:02.000Z');
      await store.finish('d2', 'superseded', '', '2026-01-01T00:00:03.000Z');

      const webApps = platform.services.webApps;
      expect((await webApps.deployments(alice, 'w1')).map((x) => x.id)).toEqual(['d3', 'd2', 'd1']);
      expect((await webApps.deployments(alice, 'w1', 2)).map((x) => x.id)).toEqual(['d3', 'd2']);
      expect(await webApps.deployments(alice, 'w1', 1)).toEqual([
        { id: 'd3', commitSHA: '', createdAt: at, status: 'queued', error: '', trigger: 'update', finishedAt: null },
      ]);
      expect((await webApps.deployments(alice, 'w1')).at(-1)).toEqual({
        id: 'd1', commitSHA: '', createdAt: at, status: 'failed', error: 'no Dockerfile', trigger: 'create', finishedAt: '2026-01-01T00:00:02.000Z',
      });
      const others = (await rejectionOf(() => webApps.deployments(bob, 'w1')));
      expect(others.kind).toBe('notFound');
      // The same answer as for an id that does not exist: nothing tells bob that the app exists.
      expect(others.message).toBe((await rejectionOf(() => webApps.deployments(bob, 'nope'))).message.replace('nope', 'w1'));
      expect((await rejectionOf(() => webApps.deployments(alice, 'w1', 0))).kind).toBe('invalid');
    } finally {
      await platform.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
