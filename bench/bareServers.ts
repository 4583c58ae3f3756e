import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type autocannon from 'autocannon';
import { waitFor } from './backyardServer.js';
import { freePort, type Postgres } from './postgres.js';

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
export async function startBarePostgresInsert(
  cluster: Postgres,
  database = 'bare',
): Promise<{ child: ChildProcess; options: (connections: number, body: unknown) => autocannon.Options }> {
  const port = await freePort();
  const pgModule = createRequire(import.meta.url).resolve('pg');
  const child = spawn(process.execPath, ['-e', BARE_POSTGRES_SERVER, String(port), cluster.createDatabase(database).url, pgModule], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}/`;
  await waitFor(url);
  return { child, options: (connections, body) => ({ url, connections, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) };
}
