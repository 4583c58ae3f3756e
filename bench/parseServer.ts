import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../src/packageRoot.js';
import os from 'node:os';
import { freePort, startPostgres, type Postgres } from './postgres.js';

export { postgresBin } from './postgres.js';

/**
 * Parse Server 9 (the devDependency) on a throwaway PostgreSQL cluster: the oracle of the
 * differential test and the peer of the data API bench. PostgreSQL comes from
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
const KEYS = { appId: 'oracle', restKey: 'oracleRest', masterKey: 'oracleMaster', javascriptKey: 'oracleJs', fileKey: 'oracleFile' };

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
 * @param options.graphQL mount Parse's GraphQL API too, at `/graphql` beside `/parse`.
 * @param options.config more of Parse Server's options (its `cloud` file, `logLevel`...), over the ones set here;
 *   relative paths are read from the server's working directory (`dir` below).
 * @param options.durable keep PostgreSQL's fsync on, as a bench against a server that syncs each
 *   write must (the oracle turns it off: it checks answers, not speed).
 * @throws Error when PostgreSQL is not installed (naming the packages), or when either does not start.
 */
export async function startParseServer(
  options: { durable?: boolean; postgres?: Postgres; liveQueryClassNames?: string[]; graphQL?: boolean; config?: Record<string, unknown> } = {},
): Promise<ParseServerPeer> {
  // On a cluster given (shared with Backyard on PostgreSQL, bench/data-api.ts), in a database of its own.
  const shared = options.postgres;
  const pg = shared
    ? { ...shared.createDatabase('parse', { postgis: true }), dir: fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-parse-')), stop: () => undefined }
    : await startPostgres({ durable: options.durable, database: 'parse', postgis: true });
  const dir = pg.dir;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/parse`;
  const config = {
    appId: KEYS.appId,
    masterKey: KEYS.masterKey,
    // Every Backend App has a file key, which names legacy files' hosts in their URLs (files.parsetfss.com).
    fileKey: KEYS.fileKey,
    restAPIKey: KEYS.restKey,
    javascriptKey: KEYS.javascriptKey,
    databaseURI: pg.url,
    port,
    host: '127.0.0.1',
    mountPath: '/parse',
    serverURL: url,
    // Parse Server's password reset and email verification need it (the links in their mails); files' URLs use it too.
    publicServerURL: url,
    filesAdapter: { module: '@parse/fs-files-adapter', options: { filesSubDirectory: 'oracle' } },
    masterKeyIps: ['0.0.0.0/0', '::/0'],
    allowClientClassCreation: true,
    logLevel: 'error',
    // Answers GET /security (409 without it), for the differential test's dashboard cases.
    security: { enableCheck: true },
    // Parse's GraphQL API at http://127.0.0.1:<port>/graphql, for test/graphql-differential.test.ts.
    ...(options.graphQL ? { mountGraphQL: true, graphQLPath: '/graphql' } : {}),
    // Its LiveQuery server on the same HTTP server (ws://127.0.0.1:<port>/parse), for bench/livequery.ts.
    ...(options.liveQueryClassNames ? { startLiveQueryServer: true, liveQuery: { classNames: options.liveQueryClassNames } } : {}),
    ...options.config,
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
    pg.stop();
    if (shared) fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(`${url}/health`)).ok, 'Parse Server', 90_000, child, () => log);
  } catch (error) {
    await close();
    throw error;
  }
  return { url, keys: KEYS, sql: pg.sql, close };
}
