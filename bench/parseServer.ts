import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../src/packageRoot.js';

/**
 * Parse Server 9 (the devDependency) on a throwaway PostgreSQL cluster: the oracle of the
 * differential test (issue 13) and the peer of the data API bench (issue 16). PostgreSQL comes from
 * Debian's `postgresql` and `postgresql-postgis` packages (.ci/run installs them;
 * shared/notes/parse-protocol.md, "Running Parse Server 9.10 itself here").
 */
export interface ParseServerPeer {
  /** The data API root, e.g. `http://127.0.0.1:<port>/parse`. */
  url: string;
  keys: { appId: string; restKey: string; masterKey: string; javascriptKey: string };
  /** Runs SQL on Parse Server's database with psql (seeding a bench); throws with psql's error. */
  sql(statement: string): void;
  close(): Promise<void>;
}

const ROOT = packageRoot();
const KEYS = { appId: 'oracle', restKey: 'oracleRest', masterKey: 'oracleMaster', javascriptKey: 'oracleJs' };

/** The bin folder of the newest PostgreSQL Debian installs, or undefined when there is none. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Runs a PostgreSQL program, as the `postgres` user when we are root (PostgreSQL refuses root). */
function pgRun(bin: string, program: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'runuser' : path.join(bin, program);
  const argv = asRoot ? ['-u', 'postgres', '--', path.join(bin, program), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8', cwd: os.tmpdir() });
  if (result.status !== 0) throw new Error(`${program} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

async function waitFor(check: () => Promise<boolean>, what: string, ms: number, child?: ChildProcess, log?: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${what}: the process exited (${child.exitCode}): ${log?.()}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not answer within ${ms / 1000} s: ${log?.() ?? ''}`);
}

/**
 * Starts PostgreSQL and Parse Server 9 on ports of their own.
 * @param options.durable keep PostgreSQL's fsync on, as a bench against a server that syncs each
 *   write must (the oracle turns it off: it checks answers, not speed).
 * @throws Error when PostgreSQL is not installed (naming the packages), or when either does not start.
 */
export async function startParseServer(options: { durable?: boolean } = {}): Promise<ParseServerPeer> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql postgresql-postgis (.ci/run does this)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-oracle-'));
  if (process.getuid?.() === 0) spawnSync('chown', ['-R', 'postgres', dir]);
  const data = path.join(dir, 'data');
  pgRun(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
  const pgPort = await freePort();
  const fsync = options.durable ? '' : ' -c fsync=off';
  pgRun(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'postgres.log'), '-w', '-o', `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1${fsync}`, 'start']);
  const stopPostgres = () => {
    try {
      pgRun(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } catch {
      // already stopped
    }
  };
  try {
    pgRun(bin, 'createdb', ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', 'parse']);
    pgRun(bin, 'psql', ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', '-d', 'parse', '-c', 'CREATE EXTENSION postgis']);
  } catch (error) {
    stopPostgres();
    throw error;
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/parse`;
  const config = {
    appId: KEYS.appId,
    masterKey: KEYS.masterKey,
    restAPIKey: KEYS.restKey,
    javascriptKey: KEYS.javascriptKey,
    databaseURI: `postgres://postgres@127.0.0.1:${pgPort}/parse`,
    port,
    host: '127.0.0.1',
    mountPath: '/parse',
    serverURL: url,
    filesAdapter: { module: '@parse/fs-files-adapter', options: { filesSubDirectory: 'oracle' } },
    masterKeyIps: ['0.0.0.0/0', '::/0'],
    allowClientClassCreation: true,
    logLevel: 'error',
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  let log = '';
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/parse-server/bin/parse-server'), path.join(dir, 'config.json')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const close = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    stopPostgres();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(`${url}/health`)).ok, 'Parse Server', 90_000, child, () => log);
  } catch (error) {
    await close();
    throw error;
  }
  const sql = (statement: string) => pgRun(bin, 'psql', ['-h', '127.0.0.1', '-p', String(pgPort), '-U', 'postgres', '-d', 'parse', '-v', 'ON_ERROR_STOP=1', '-c', statement]);
  return { url, keys: KEYS, sql, close };
}
