import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type autocannon from 'autocannon';
import { waitFor } from './backyardServer.js';
import { freePort, type Postgres } from './postgres.js';
import { spawnNode } from './profile.js';

/** The name of the bare PostgreSQL insert baseline in a workload's baselines. */
export const BARE_POSTGRES = 'bare + PostgreSQL insert';

/**
 * The baseline of creates on PostgreSQL: a bare `node:http` server that, before each answer, runs one
 * prepared INSERT of the request's body into a table keyed by a random id (argv[2]: the database's
 * URL; argv[3]: where node-postgres is) and commits it, as PostgreSQL does a statement sent alone. No
 * server that answers a create only once PostgreSQL committed it can beat this one on that cluster.
 */
const BARE_POSTGRES_SERVER = `
  const crypto = require('node:crypto');
  const pg = require(process.argv[3]);
  const pool = new pg.Pool({ connectionString: process.argv[2], max: 16 });
  pool.query('CREATE TABLE IF NOT EXISTS bare ("objectId" text COLLATE "C" PRIMARY KEY, data jsonb NOT NULL)').then(() => {
    require('node:http').createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        const objectId = crypto.randomBytes(8).toString('base64url');
        await pool.query({ name: 'insert', text: 'INSERT INTO bare ("objectId", data) VALUES ($1, $2::jsonb)', values: [objectId, Buffer.concat(chunks).toString() || '{}'] });
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ objectId, createdAt: new Date().toISOString() }));
      });
    }).listen(Number(process.argv[1]), '127.0.0.1');
  });
`;

/**
 * Starts the bare PostgreSQL insert server (BARE_POSTGRES_SERVER) on a database `database` of its own
 * in `cluster`, answering once it listens.
 * @returns its process (for the caller to kill) and the autocannon options of a POST of `body` at
 *   `connections`.
 */
export async function startBarePostgresInsert(cluster: Postgres, database = 'bare'): Promise<InsertServer> {
  return startInsertServer(BARE_POSTGRES_SERVER, [cluster.createDatabase(database).url, createRequire(import.meta.url).resolve('pg')]);
}

/** A bare insert server: the child process running `code` (its argv: the port, then `args`), and how to load it. */
interface InsertServer {
  child: ChildProcess;
  /** The autocannon options of a POST of `body` at `connections`. */
  options: (connections: number, body: unknown) => autocannon.Options;
  /** The port of its inspector when BENCH_PROFILE is set (profile.ts). */
  inspectPort?: number;
}

/** Starts `code` with `node -e` on a free loopback port, answering once it listens. */
async function startInsertServer(code: string, args: string[]): Promise<InsertServer> {
  const port = await freePort();
  const { child, inspectPort } = await spawnNode(['-e', code, String(port), ...args], { stdout: 'inherit' });
  const url = `http://127.0.0.1:${port}/`;
  await waitFor(url);
  return { child, inspectPort, options: (connections, body) => ({ url, connections, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) };
}

/** The name of the bare SQLite insert baseline in a workload's baselines. */
export const BARE_SQLITE = 'bare + SQLite insert';

/**
 * The baseline of creates on SQLite: a bare `node:http` server that inserts the request's body into a
 * class table made by Backyard's own DDL (argv[3], run on argv[2], a `data.db` of its own; argv[4]:
 * where better-sqlite3 is), with the pragmas Backyard sets on an app's `data.db`
 * (src/data/storage/sqlite/database.ts), and answers once an `fdatasync` of the WAL that started
 * after its commit has finished. Concurrent requests share one sync in libuv's thread pool (group
 * commit), as Backyard's do (src/data/storage/sqlite/durability.ts); the request of a client
 * connected alone syncs on the event loop. So this is the durable create any Node server on that
 * driver and disk can reach, at any concurrency.
 */
const BARE_SQLITE_SERVER = `
  const crypto = require('node:crypto');
  const fs = require('node:fs');
  const [port, file, ddl, driver] = process.argv.slice(1);
  const db = new (require(driver))(file);
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 10000');
  db.exec(ddl);
  const insert = db.prepare('INSERT INTO bare (objectId, createdAt, updatedAt, data, acl, publicRead) VALUES (?, ?, ?, ?, NULL, 1)');
  let wal;
  let written = 0, synced = 0, running;
  const syncOnce = () => new Promise((resolve, reject) => {
    const target = written;
    fs.fdatasync(wal, (e) => { if (e) return reject(e); synced = Math.max(synced, target); resolve(); });
  });
  // Alone: one client connected. Requests in flight would not tell, as an inline sync holds the
  // others' requests unread in their sockets (src/data/rest/traffic.ts).
  let sockets = 0;
  const durable = async () => {
    const target = written;
    wal ??= fs.openSync(file + '-wal', 'r');
    if (sockets === 1 && !running) { fs.fdatasyncSync(wal); synced = Math.max(synced, target); return; }
    while (synced < target) {
      if (!running) running = syncOnce().finally(() => (running = undefined));
      await running;
    }
  };
  const server = require('node:http').createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const data = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      const objectId = crypto.randomBytes(8).toString('base64url').slice(0, 10);
      const now = new Date().toISOString();
      insert.run(objectId, now, now, JSON.stringify(data));
      written++;
      await durable();
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ objectId, createdAt: now }));
    });
  });
  server.on('connection', (socket) => { sockets++; socket.on('close', () => sockets--); });
  server.listen(Number(port), '127.0.0.1');
`;

/**
 * Starts the bare SQLite insert server (BARE_SQLITE_SERVER) on `file`, a database of its own, with the
 * class table `ddl` makes (Backyard's, for a table named `bare`), answering once it listens.
 * @returns its process (for the caller to kill) and the autocannon options of a POST of `body` at
 *   `connections`.
 */
export async function startBareSqliteInsert(file: string, ddl: string): Promise<InsertServer> {
  return startInsertServer(BARE_SQLITE_SERVER, [file, ddl, createRequire(import.meta.url).resolve('better-sqlite3')]);
}
