import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startPostgres, type Postgres } from './postgres.js';
import { spawnNode } from './profile.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/cli.js');

/** The database a bench keeps its Backend App on (BENCH_DATABASE: `sqlite`, `postgres` or `both`, the default). */
export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASES: DatabaseKind[] =
  process.env.BENCH_DATABASE === 'postgres' ? ['postgres'] : process.env.BENCH_DATABASE === 'sqlite' ? ['sqlite'] : ['sqlite', 'postgres'];

/** `backyard serve` as a child process with one account and one Backend App, for a bench to load. */
export interface BenchBackyard {
  /** The server's root, e.g. `http://localhost:<port>`. */
  base: string;
  /** The data API's root: `<base>/data`. */
  data: string;
  /** The throwaway `BACKYARD_HOME`. */
  home: string;
  /** The app's id, REST key and master key, and the REST headers of a client (id, REST key, JSON). */
  app: { appId: string; restKey: string; masterKey: string };
  headers: Record<string, string>;
  /** The PostgreSQL cluster the app is on (fsync on), when it is on PostgreSQL. */
  cluster?: Postgres;
  /** Where the child's environment is, for more `backyard` commands or children (BACKYARD_HOME, BACKYARD_DATABASE_URL). */
  env: NodeJS.ProcessEnv;
  /** The port of the server's inspector when BENCH_PROFILE is set (profile.ts), for `Workload.inspect`. */
  inspectPort?: number;
  /** Stops the server (SIGTERM), the cluster, and removes the home. */
  close(): Promise<void>;
}

/**
 * Starts `backyard serve` (from `dist/`, so `npm run build` first) in a fresh home on a free loopback
 * port, on SQLite or on a throwaway PostgreSQL cluster with fsync on, and creates an account and an app
 * through the management API. `beforeFirstCall(home, appId)` runs before the app's first data API
 * call (a bench writes cloud code there, which the app's worker loads on that call).
 * @throws Error when the server does not answer within 10 s or refuses the app.
 */
export async function startBackyard(database: DatabaseKind, beforeFirstCall?: (home: string, appId: string) => void): Promise<BenchBackyard> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-'));
  const cluster = database === 'postgres' ? await startPostgres({ durable: true, database: 'backyard' }) : undefined;
  const env = { ...process.env, BACKYARD_HOME: home, BACKYARD_LOG_LEVEL: 'warn', ...(cluster ? { BACKYARD_DATABASE_URL: cluster.url } : {}) };
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    cluster?.stop();
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    const token = execFileSync(process.execPath, [CLI, 'account', 'create', 'bench'], { env }).toString().trim();
    const port = await freePort();
    const started = await spawnNode([CLI, 'serve', '--port', String(port)], { env, stdout: 'ignore' });
    child = started.child;
    const { inspectPort } = started;
    const base = `http://localhost:${port}`;
    await waitFor(`${base}/healthz`);
    const made = await fetch(`${base}/v1/backend-apps`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"appName":"bench"}' });
    if (!made.ok) throw new Error(`Backyard refused the app: ${await made.text()}`);
    const { appId, restKey } = (await made.json()) as { appId: string; restKey: string };
    const keys = execFileSync(process.execPath, [CLI, 'app', 'keys', appId], { env }).toString();
    const masterKey = /^masterKey\t(.+)$/m.exec(keys)![1]!;
    beforeFirstCall?.(home, appId);
    const headers = { 'x-parse-application-id': appId, 'x-parse-rest-api-key': restKey, 'content-type': 'application/json' };
    return { base, data: `${base}/data`, home, app: { appId, restKey, masterKey }, headers, cluster, env, inspectPort, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Resolves once `url` answers at all (a child server has started); throws after 10 s. */
export async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${url} did not answer`);
}
