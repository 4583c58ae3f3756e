import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A throwaway PostgreSQL cluster on a port of its own, from Debian's `postgresql` packages (.ci/run
 * installs them): the database of Parse Server as oracle and bench peer (parseServer.ts), and of
 * Backyard's PostgreSQL adapter in tests and benches.
 */
export interface Postgres {
  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  url: string;
  /** The cluster's folder (its data, log and socket), removed by `stop`. */
  dir: string;
  /** Runs SQL on the database with psql; throws with psql's error. */
  sql(statement: string): void;
  /** Creates another database in the cluster (with PostGIS when asked): its URL and a psql runner. */
  createDatabase(name: string, options?: { postgis?: boolean }): { url: string; sql(statement: string): void };
  /** Stops the cluster at once and removes its folder. */
  stop(): void;
}

/** The bin folder of the newest PostgreSQL Debian installs, or undefined when there is none. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], 'bin') : undefined;
}

export async function freePort(): Promise<number> {
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

/**
 * Starts a cluster (UTF-8, trust authentication on loopback) and creates `database`.
 * @param options.durable keep fsync on, as a bench against a server that syncs each write must
 *   (tests turn it off: they check answers, not survival of a power cut).
 * @param options.postgis create the PostGIS extension (Parse Server needs it).
 * @throws Error when PostgreSQL is not installed (naming the packages) or does not start.
 */
export async function startPostgres(options: { durable?: boolean; database?: string; postgis?: boolean } = {}): Promise<Postgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql postgresql-postgis (.ci/run does this)');
  const database = options.database ?? 'backyard';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-postgres-'));
  if (process.getuid?.() === 0) spawnSync('chown', ['-R', 'postgres', dir]);
  const data = path.join(dir, 'data');
  pgRun(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const fsync = options.durable ? '' : ' -c fsync=off';
  pgRun(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'postgres.log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${fsync}`, 'start']);
  const stop = () => {
    try {
      pgRun(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } catch {
      // already stopped
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const psql = (db: string, statement: string) =>
    pgRun(bin, 'psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-c', statement]);
  try {
    pgRun(bin, 'createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database]);
    if (options.postgis) psql(database, 'CREATE EXTENSION postgis');
  } catch (error) {
    stop();
    throw error;
  }
  const createDatabase = (name: string, more: { postgis?: boolean } = {}) => {
    pgRun(bin, 'createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
    if (more.postgis) psql(name, 'CREATE EXTENSION postgis');
    return { url: `postgres://postgres@127.0.0.1:${port}/${name}`, sql: (statement: string) => psql(name, statement) };
  };
  return { url: `postgres://postgres@127.0.0.1:${port}/${database}`, dir, sql: (statement) => psql(database, statement), stop, createDatabase };
}
