import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import type autocannon from 'autocannon';
import { postgresBin, startParseServer, type ParseServerPeer } from './parseServer.js';
import { freePort, type Postgres } from './postgres.js';
import { spawnNode } from './profile.js';
import { classTable } from '../src/data/storage/sqlite/layout.js';
import { classTableDdl, fieldIndexDdl } from '../src/data/storage/sqlite/classTables.js';
import { DATABASES, startBackyard, waitFor, type DatabaseKind } from './backyardServer.js';
import { BARE_POSTGRES, BARE_SQLITE, startBarePostgresInsert, startBareSqliteInsert } from './bareServers.js';
import { load, median, ROUNDS, ROUND_SECONDS, runWorkload, startBareServer, toParse, WORKLOAD_HEADER, type Goal, type Workload } from './rounds.js';

/**
 * The data API under load: Backyard (`backyard serve`, a child process) and, in the same
 * run, a bare `node:http` server answering a fixed JSON body and the peer, Parse Server 9 on
 * PostgreSQL with fsync on (skipped with a message when PostgreSQL is not installed, or
 * with BENCH_PEER=none), each seeded with the same objects and indexes and loaded by autocannon from
 * this process; creates also beside a bare server committing one durable INSERT per request on the
 * app's database (bareServers.ts: the same PostgreSQL cluster, or SQLite with group commit); reads
 * also beside a bare server running the same statement on the same driver (BARE_READ_SERVER), which
 * shows what any Node server pays for that answer. For each workload: requests per second, p50 and
 * p99 latency, and the ratio of its rate to the bare server's and to Parse Server's at the same
 * concurrency.
 */
/**
 * The data sizes, each seeded into a class of its own (`Item<size>`) so that one run measures both:
 * apps with a few thousand objects and apps with a hundred thousand answer from differently shaped
 * indexes and caches.
 */
const SIZES = (process.env.BENCH_SIZES ?? process.env.BENCH_OBJECTS ?? '2000,100000').split(',').map(Number);

/**
 * The baseline of reads: a bare `node:http` server that answers a GET of `/<key>` by running one
 * prepared statement on the app's own table and sending its rows as the data API answers objects:
 * `{results: [...]}` of objectId, createdAt, updatedAt and the data's fields (ACL when set), or
 * `{results: [], count}`. argv[2]: `postgres` (argv[3] the database's URL, argv[4] where
 * node-postgres is) or `sqlite` (argv[3] the app's `data.db`, opened read-only, argv[4] where
 * better-sqlite3 is); argv[5]: JSON of `{key: {text, values, count?}}`. The statements are those
 * Backyard's compiler writes for the same query (bareReadStatements), so this is what any Node server
 * on the same driver pays for the same answer, without a data API around it.
 */
const BARE_READ_SERVER = `
  const [kind, target, driver, json] = process.argv.slice(2);
  const statements = JSON.parse(json);
  const toObject = (r) => Object.assign({ objectId: r.objectId, createdAt: r.createdAt, updatedAt: r.updatedAt }, r.data, r.acl ? { ACL: r.acl } : {});
  let run;
  if (kind === 'postgres') {
    const pool = new (require(driver).Pool)({ connectionString: target, max: 16 });
    run = async (key, s) => (await pool.query({ name: key, text: s.text, values: s.values })).rows;
  } else {
    const db = new (require(driver))(target, { readonly: true });
    const prepared = new Map();
    run = (key, s) => {
      if (!prepared.has(key)) prepared.set(key, db.prepare(s.text));
      return prepared.get(key).all(...s.values).map((r) => (s.count ? r : { ...r, data: JSON.parse(r.data), acl: r.acl === null ? null : JSON.parse(r.acl) }));
    };
  }
  require('node:http').createServer(async (req, res) => {
    const key = req.url.slice(1);
    const statement = statements[key];
    if (!statement) { res.writeHead(404); return res.end(); }
    const rows = await run(key, statement);
    const body = statement.count ? { results: [], count: rows[0].n } : { results: rows.map(toObject) };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }).listen(Number(process.argv[1]), '127.0.0.1');
`;

const bareReadName = (database: DatabaseKind) => (database === 'postgres' ? 'bare + PostgreSQL select' : 'bare + SQLite select');

/**
 * A `data.db` of its own for BARE_READ_SERVER on SQLite (the app's own is held open exclusively by
 * Backyard: src/shared/sqlite.ts): each size's class table and indexes made by Backyard's own DDL
 * (src/data/storage/sqlite/classTables.ts), with objects of the same shape as the seeding's, the
 * first of them under the objectId Backyard gave its own first object. @returns the file.
 */
function seedBareSqlite(file: string, firstIds: Record<number, string>): string {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const now = new Date().toISOString();
  for (const size of SIZES) {
    const className = itemClass(size);
    db.exec(classTableDdl(classTable(className)));
    db.exec(fieldIndexDdl(className, 'by_category', { category: 1 }));
    db.exec(fieldIndexDdl(className, 'by_score', { score: 1 }));
    const insert = db.prepare(`INSERT INTO ${classTable(className)} (objectId, createdAt, updatedAt, data, acl, publicRead) VALUES (?, ?, ?, ?, NULL, 1)`);
    const { categories } = seedShape(size);
    db.transaction(() => {
      for (let i = 0; i < size; i++) {
        const objectId = i === 0 ? firstIds[size]! : createHash('md5').update(`bare ${i}`).digest('hex').slice(0, 10);
        insert.run(objectId, now, now, JSON.stringify({ category: `c${i % categories}`, score: i % 10_000, title: `item ${i}` }));
      }
    })();
    // No ANALYZE, as Backyard runs none on an app's data.db: with SQLite's STAT4 samples, each run
    // of a statement comparing an indexed expression with a bound value is prepared again.
  }
  db.close();
  return file;
}

/**
 * The statements of BARE_READ_SERVER for the read workloads of one size, by key, as Backyard's
 * compiler writes them for the app's class table (PostgreSQL: `"app_<appId>"."cls_<className>"` with
 * its typed columns, src/data/storage/postgres/layout.ts; SQLite: `"cls_<className>"` in the app's
 * `data.db`, src/data/storage/sqlite/classTables.ts).
 */
function bareReadStatements(database: DatabaseKind, appId: string, size: number, objectId: string, width: number): Record<string, { text: string; values: unknown[]; count?: boolean }> {
  const columns = 't."objectId", t."createdAt", t."updatedAt", t.data, t.acl';
  if (database === 'postgres') {
    const table = `"app_${appId}"."cls_${itemClass(size)}" AS t`;
    return {
      [`get${size}`]: { text: `SELECT ${columns} FROM ${table} WHERE t."objectId" = $1`, values: [objectId] },
      [`equality${size}`]: { text: `SELECT ${columns} FROM ${table} WHERE (t."_s:category" = $1) AND t."_publicRead" LIMIT 100 OFFSET $2`, values: ['c3', 0] },
      [`range${size}`]: {
        text: `SELECT ${columns} FROM ${table} WHERE (t."_n:score" >= $1::float8 AND t."_n:score" < $2::float8) AND t."_publicRead" ORDER BY t."_n:score" DESC NULLS LAST LIMIT 10 OFFSET $3`,
        values: [500, 600, 0],
      },
      [`countEquality${size}`]: { text: `SELECT count(*)::int AS n FROM ${table} WHERE (t."_s:category" = $1) AND t."_publicRead"`, values: ['c7'], count: true },
      [`countRange${size}`]: { text: `SELECT count(*)::int AS n FROM ${table} WHERE (t."_n:score" >= $1::float8 AND t."_n:score" < $2::float8) AND t."_publicRead"`, values: [0, width], count: true },
    };
  }
  const table = `"cls_${itemClass(size)}" AS t`;
  const score = `json_extract(t.data, '$."score"')`;
  const scoreRange = `(${score} >= ? AND json_type(t.data, '$."score"') IN ('integer','real') AND ${score} < ?)`;
  return {
    [`get${size}`]: { text: `SELECT ${columns} FROM ${table} WHERE t."objectId" = ?`, values: [objectId] },
    [`equality${size}`]: { text: `SELECT ${columns} FROM ${table} WHERE (json_extract(t.data, '$."category"') = ?) AND t.publicRead = 1 LIMIT 100 OFFSET ?`, values: ['c3', 0] },
    [`range${size}`]: { text: `SELECT ${columns} FROM ${table} WHERE ${scoreRange} AND t.publicRead = 1 ORDER BY ${score} DESC LIMIT 10 OFFSET ?`, values: [500, 600, 0] },
    [`countEquality${size}`]: { text: `SELECT count(*) AS n FROM ${table} WHERE (json_extract(t.data, '$."category"') = ?) AND t.publicRead = 1`, values: ['c7'], count: true },
    [`countRange${size}`]: { text: `SELECT count(*) AS n FROM ${table} WHERE ${scoreRange} AND t.publicRead = 1`, values: [0, width], count: true },
  };
}

/**
 * Median microseconds of a write and an `fdatasync` in `folder`: 4 KiB over the start of a file (a
 * WAL reused after a checkpoint) and 8 KiB appended (a WAL that grows, as after each open).
 */
function fdatasyncMicros(folder: string): { overwrite: number; append: number } {
  const file = path.join(folder, 'bench-sync.tmp');
  const fd = fs.openSync(file, 'w+');
  try {
    fs.writeSync(fd, Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
    fs.fdatasyncSync(fd);
    const timed = (write: (i: number) => void) =>
      median(
        Array.from({ length: 200 }, (_, i) => {
          const start = performance.now();
          write(i);
          fs.fdatasyncSync(fd);
          return (performance.now() - start) * 1000;
        }),
      );
    const overwrite = timed((i) => fs.writeSync(fd, Buffer.alloc(4096, 1), 0, 4096, (i % 16) * 4096));
    let end = 64 * 1024;
    const append = timed(() => {
      fs.writeSync(fd, Buffer.alloc(8192, 2), 0, 8192, end);
      end += 8192;
    });
    return { overwrite, append };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}

/** Parse Server as the bench's peer, seeded, with the headers its REST API takes. */
interface PeerTarget {
  server: ParseServerPeer;
  headers: Record<string, string>;
}

/**
 * How the objects of a size are made, alike on both sides: `category` has size/100 values, so an
 * equality matches 100 objects; `score` runs over 0..9999 (each value size/10,000 times when the
 * size is larger), so a range of RANGE_COUNT(size) values matches about 1,500.
 */
const seedShape = (size: number) => ({ categories: Math.max(1, Math.floor(size / 100)), perScore: Math.max(1, Math.floor(size / 10_000)) });
/** The width of the `score` range that matches about 1,500 objects of a size. */
const rangeWidth = (size: number) => Math.ceil(1500 / seedShape(size).perScore);

/** The class of a size's objects. */
const itemClass = (size: number) => `Item${size}`;

/**
 * Starts Parse Server on PostgreSQL (fsync on) and gives it what Backyard was given: for each size,
 * class `Item<size>` with `category` and `score` indexed and that many objects of the same shape,
 * written with SQL into the table Parse Server made (through its REST API it would take minutes),
 * public as Parse Server writes an object without an ACL.
 * @returns undefined, having said why, when BENCH_PEER=none or PostgreSQL is not installed.
 */
async function startPeer(cluster: Postgres | undefined): Promise<PeerTarget | undefined> {
  if (process.env.BENCH_PEER === 'none') return undefined;
  if (!postgresBin()) {
    console.log('peer skipped: PostgreSQL is not installed (apt-get install postgresql postgresql-postgis; .ci/run does)');
    return undefined;
  }
  const server = await startParseServer({ durable: true, postgres: cluster });
  const headers = { 'x-parse-application-id': server.keys.appId, 'x-parse-rest-api-key': server.keys.restKey, 'content-type': 'application/json' };
  for (const size of SIZES) {
    const made = await fetch(`${server.url}/schemas/${itemClass(size)}`, {
      method: 'POST',
      headers: { ...headers, 'x-parse-master-key': server.keys.masterKey },
      body: JSON.stringify({ fields: { category: { type: 'String' }, score: { type: 'Number' }, title: { type: 'String' } }, indexes: { by_category: { category: 1 }, by_score: { score: 1 } } }),
    });
    if (!made.ok) throw new Error(`Parse Server refused the schema: ${await made.text()}`);
    const { categories } = seedShape(size);
    server.sql(
      `INSERT INTO "${itemClass(size)}" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", category, score, title)
       SELECT substr(md5(i::text), 1, 10), now(), now(), '{*}', '{*}', 'c' || (i % ${categories}), i % 10000, 'item ' || i FROM generate_series(0, ${size - 1}) AS i;`,
    );
    // Vacuumed as autovacuum leaves a table some time after its inserts (Backyard's too, below): an
    // index-only scan reads the heap of pages not yet marked all-visible.
    server.sql(`VACUUM ANALYZE "${itemClass(size)}"`);
  }
  console.log(`peer: Parse Server 9 on PostgreSQL (fsync on) at ${server.url}, seeded with the same objects and indexes`);
  return { server, headers };
}

/** The objectId the peer's seeding gave object 0 (md5 of its number, as the SQL above). */
const PEER_OBJECT_ID = createHash('md5').update('0').digest('hex').slice(0, 10);

export async function dataApiBench(): Promise<void> {
  for (const database of DATABASES) {
    if (database === 'postgres' && !postgresBin()) {
      console.log('\n### PostgreSQL skipped: PostgreSQL is not installed (apt-get install postgresql postgresql-postgis; .ci/run does)');
      continue;
    }
    console.log(`\n### the app on ${database === 'postgres' ? 'PostgreSQL' : 'SQLite'}`);
    await benchOn(database);
  }
}

/** Every workload with the app on `database`, each size in turn. */
async function benchOn(database: DatabaseKind): Promise<void> {
  const children: ChildProcess[] = [];
  let peer: PeerTarget | undefined;
  // A cloud function, written before the app's first data API call so its worker loads it.
  const backyard = await startBackyard(database, (home, appId) => {
    const cloudMain = path.join(home, 'apps', appId, 'cloud', 'cloud', 'main.js');
    fs.mkdirSync(path.dirname(cloudMain), { recursive: true });
    fs.writeFileSync(cloudMain, "Parse.Cloud.define('echo', (request) => ({ echo: request.params.value }));\n");
  });
  const { cluster, home, data, headers } = backyard;
  const masterKey = backyard.app.masterKey;
  if (cluster) console.log(`Backyard keeps the app on PostgreSQL (fsync on) at ${cluster.url}`);
  try {
    const bareServer = await startBareServer();
    children.push(bareServer.child);
    const durableServer = await startBareServer(path.join(home, 'bare-durable.tmp'));
    children.push(durableServer.child);
    // Creates are also set beside a bare server that commits one INSERT per request, durably, on the
    // app's database: PostgreSQL's cluster, or a data.db of its own on SQLite's disk.
    const bareInsertName = cluster ? BARE_POSTGRES : BARE_SQLITE;
    const bareInsert = cluster ? await startBarePostgresInsert(cluster) : await startBareSqliteInsert(path.join(home, 'bare-insert.db'), classTableDdl('bare'));
    children.push(bareInsert.child);
    const bare = bareServer.url;

    // Each size's objects through the API itself, in transactional batches of 1,000.
    const ids: Record<number, string> = {};
    for (const size of SIZES) {
      const className = itemClass(size);
      await fetch(`${data}/schemas/${className}`, {
        method: 'POST',
        headers: { ...headers, 'x-parse-master-key': masterKey },
        body: JSON.stringify({ fields: { category: { type: 'String' }, score: { type: 'Number' }, title: { type: 'String' } }, indexes: { by_category: { category: 1 }, by_score: { score: 1 } } }),
      });
      const { categories } = seedShape(size);
      const started = Date.now();
      for (let i = 0; i < size; i += 1000) {
        const requests = Array.from({ length: Math.min(1000, size - i) }, (_, j) => ({
          method: 'POST',
          path: `/data/classes/${className}`,
          body: { category: `c${(i + j) % categories}`, score: (i + j) % 10_000, title: `item ${i + j}` },
        }));
        const res = await fetch(`${data}/batch`, { method: 'POST', headers, body: JSON.stringify({ requests, transaction: true }) });
        if (!res.ok) throw new Error(`seeding failed: ${await res.text()}`);
      }
      console.log(`seeded ${size} objects into ${className} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const one = (await (await fetch(`${data}/classes/${className}?limit=1`, { headers })).json()) as { results: Array<{ objectId: string }> };
      ids[size] = one.results[0]!.objectId;
    }
    // As the peer's tables are vacuumed and analyzed after their seeding, so that both planners know
    // the row counts and both tables are as autovacuum leaves them.
    cluster?.sql('VACUUM ANALYZE');
    peer = await startPeer(cluster);
    // Reads are also set beside the bare server that runs the same statement on the app's table.
    const bareReadPort = await freePort();
    const statements = Object.assign({}, ...SIZES.map((size) => bareReadStatements(database, backyard.app.appId, size, ids[size]!, rangeWidth(size))));
    const bareReadArgs = cluster
      ? ['postgres', cluster.url, createRequire(import.meta.url).resolve('pg')]
      : ['sqlite', seedBareSqlite(path.join(home, 'bare-read.db'), ids), createRequire(import.meta.url).resolve('better-sqlite3')];
    const bareReadInspector = await spawnNode(['-e', BARE_READ_SERVER, String(bareReadPort), ...bareReadArgs, JSON.stringify(statements)], { stdout: 'inherit' });
    children.push(bareReadInspector.child);
    const bareReadRoot = `http://127.0.0.1:${bareReadPort}`;
    await waitFor(`${bareReadRoot}/get${SIZES[0]}`);

    const bareOptions = (connections: number): autocannon.Options => ({ url: bare, connections, method: 'POST', body: '{}' });
    const durableOptions: autocannon.Options = { url: durableServer.url, connections: 1, method: 'POST', body: '{}' };
    /** The bare insert at `connections`, as a baseline of creates. */
    const onBareInsert = (connections: number): Record<string, autocannon.Options> => ({ [bareInsertName]: bareInsert.options(connections, { title: 'x', n: 1 }) });
    /** What BENCH_PROFILE profiles of a create workload: Backyard and the bare insert. */
    const createsInspect = { Backyard: backyard.inspectPort, [bareInsertName]: bareInsert.inspectPort };
    const bare1 = await load(bareOptions(1));
    const bare16 = await load(bareOptions(16));
    const durable1 = await load(durableOptions);
    console.log(`bare node:http: ${bare1.rps.toFixed(0)} req/s (1 connection), ${bare16.rps.toFixed(0)} req/s (16 connections)`);
    console.log(`bare node:http + a 4 KiB overwrite and fdatasync before each answer: ${durable1.rps.toFixed(0)} req/s (1 connection), the ceiling for durable sequential writes here`);
    if (database === 'sqlite') {
      // A create answers once its commit is on disk (durability.ts), so one connection waits for one
      // fdatasync per create: with the bare round trip, that bounds sequential creates on this disk.
      const sync = fdatasyncMicros(path.join(home, 'apps', backyard.app.appId));
      console.log(
        `write + fdatasync in the app's folder (median of 200): ${sync.overwrite.toFixed(0)} µs for a 4 KiB overwrite, ${sync.append.toFixed(0)} µs for an 8 KiB append; ` +
          `one append sync per create bounds sequential creates at ${(1e6 / (1e6 / bare1.rps + sync.append)).toFixed(0)}/s`,
      );
    }
    // Cloud functions: a round trip through the worker, against a plain GET by id at the same concurrency.
    const firstSize = SIZES[0]!;
    const getById = await load({ url: `${data}/classes/${itemClass(firstSize)}/${ids[firstSize]}`, connections: 1, headers });
    const fn = await load({ url: `${data}/functions/echo`, connections: 1, method: 'POST', headers, body: JSON.stringify({ value: 42 }) });
    console.log(
      `function round trip (1 connection): ${fn.rps.toFixed(0)} req/s, p50 ${fn.p50.toFixed(2)} ms; GET by id: ${getById.rps.toFixed(0)} req/s; ratio ${(fn.rps / getById.rps).toFixed(2)}×${fn.errors ? ` (${fn.errors} errors)` : ''}`,
    );

    const creates = (root: string, h: Record<string, string>, connections: number): autocannon.Options => ({ url: `${root}/classes/Created`, connections, method: 'POST', headers: h, body: JSON.stringify({ title: 'x', n: 1 }) });
    /** The same request to Parse Server, as a baseline, when the peer runs. */
    const onPeer = (make: (root: string, h: Record<string, string>) => autocannon.Options): Record<string, autocannon.Options> =>
      peer ? { 'Parse Server': make(peer.server.url, peer.headers) } : {};
    const query = (root: string, className: string, where: unknown, extra: Record<string, string>) =>
      `${root}/classes/${className}?${new URLSearchParams({ where: JSON.stringify(where), ...extra })}`;
    /** A read of `className` at `connections`, the same on both sides but for the root, the headers and the objectId. */
    /** The same read from the bare server that runs its statement (BARE_READ_SERVER). */
    const onBareRead = (key: string, connections: number): Record<string, autocannon.Options> => ({ [bareReadName(database)]: { url: `${bareReadRoot}/${key}`, connections } });
    const read = (name: string, connections: number, goal: Goal, url: (root: string, objectId: string) => string, objectId: string, bareKey: string, answer?: Workload['answer']): Workload => ({
      name,
      options: { url: url(data, objectId), connections, headers },
      baselines: { bare: bareOptions(connections), ...onBareRead(bareKey, connections), ...onPeer((r, h) => ({ url: url(r, PEER_OBJECT_ID), connections, headers: h })) },
      goal,
      answer,
      inspect: { Backyard: backyard.inspectPort, [bareReadName(database)]: bareReadInspector.inspectPort },
    });
    const sections: Array<{ title: string; workloads: Workload[] }> = [
      {
        title: 'creates (class Created)',
        workloads: [
          {
            name: 'sequential creates',
            options: creates(data, headers, 1),
            baselines: { bare: bareOptions(1), ...(cluster ? {} : { 'bare + fdatasync': durableOptions }), ...onBareInsert(1), ...onPeer((r, h) => creates(r, h, 1)) },
            goal: { baseline: bareInsertName, sqlite: 0.9, postgres: 0.9 },
            inspect: createsInspect,
          },
          {
            name: '16 concurrent creates',
            options: creates(data, headers, 16),
            baselines: { bare: bareOptions(16), ...onBareInsert(16), ...onPeer((r, h) => creates(r, h, 16)) },
            goal: toParse(10, 5),
            inspect: createsInspect,
          },
        ],
      },
      ...SIZES.map((size) => {
        const className = itemClass(size);
        const width = rangeWidth(size);
        return {
          title: `reads of ${size} objects (class ${className}; an equality matches 100, the count's range about 1,500)`,
          workloads: [
            read('GET by id (1 connection)', 1, toParse(10, 4), (r, objectId) => `${r}/classes/${className}/${objectId}`, ids[size]!, `get${size}`),
            read('GET by id (16 connections)', 16, toParse(10, 4), (r, objectId) => `${r}/classes/${className}/${objectId}`, ids[size]!, `get${size}`),
            read('where equality, 100 rows', 1, toParse(10, 4), (r) => query(r, className, { category: 'c3' }, { limit: '100' }), '', `equality${size}`, (b) => b.results?.length === 100),
            read('range + order + limit 10', 1, toParse(10, 4), (r) => query(r, className, { score: { $gte: 500, $lt: 600 } }, { order: '-score', limit: '10' }), '', `range${size}`, (b) => b.results?.length === 10),
            read('count, equality (100 rows)', 1, toParse(10, 4), (r) => query(r, className, { category: 'c7' }, { count: '1', limit: '0' }), '', `countEquality${size}`, (b) => b.count === 100),
            read(`count, range (${width * seedShape(size).perScore} rows)`, 1, toParse(10, 4), (r) => query(r, className, { score: { $gte: 0, $lt: width } }, { count: '1', limit: '0' }), '', `countRange${size}`, (b) => b.count === width * seedShape(size).perScore),
          ],
        };
      }),
    ];
    console.log(`each workload: ${ROUNDS} rounds of ${ROUND_SECONDS} s, each round next to its baselines at the same concurrency; medians over the rounds, ratios taken per round`);
    for (const { title, workloads } of sections) {
      console.log(`\n${title}`);
      console.log(WORKLOAD_HEADER);
      for (const workload of workloads) await runWorkload(workload, database, { bare: bareInsertName in workload.baselines ? bareInsertName : bareReadName(database), peer: 'Parse Server' });
    }
  } finally {
    await peer?.server.close();
    for (const child of children) child.kill('SIGTERM');
    await backyard.close();
  }
}
