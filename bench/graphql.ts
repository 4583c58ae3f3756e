import { printSchema, validateSchema } from 'graphql';
import { buildSchema, type SchemaClass } from '../src/data/graphql/schema.js';
import { DEFAULT_FIELDS, type FieldType } from '../src/data/types.js';
import { postgresBin, startParseServer, type ParseServerPeer } from './parseServer.js';
import { DATABASES, startBackyard, type BenchBackyard, type DatabaseKind } from './backyardServer.js';
import path from 'node:path';
import type autocannon from 'autocannon';
import { BARE_POSTGRES, BARE_SQLITE, startBarePostgresInsert, startBareSqliteInsert } from './bareServers.js';
import { classTableDdl } from '../src/data/storage/sqlite/classTables.js';
import { median, ROUNDS, ROUND_SECONDS, runWorkload, startBareServer, toParse, WORKLOAD_HEADER, type Workload } from './rounds.js';

/**
 * Parse's GraphQL API under load: a Backend App's `/graphql` (`backyard serve`, a child process)
 * against Parse Server 9's GraphQL API (`--mountGraphQL`, on PostgreSQL with fsync on) and a bare
 * `node:http` server, in the same run, each side seeded with OBJECTS objects of class `GameScore`
 * (`score` 0..999 indexed, `playerName`). Workloads: `gameScores(where, first: 10)` at 1 and 16
 * connections, and a `createGameScore` mutation at 1 and 16; each answer is checked on both sides
 * before its rounds. Creates are also set beside the durable bare insert of the app's database
 * (bareServers.ts: one committed INSERT per request, on PostgreSQL's cluster or into a SQLite class
 * table with group commit), which no server that answers a create once it is durable can beat. Then, in process, how long Backyard takes to build the GraphQL schema of an app
 * with 50 classes (built once per schema change, `appGraphQLSchema`).
 */
const OBJECTS = Number(process.env.BENCH_GRAPHQL_OBJECTS ?? 2000);
/** The goal: each workload's rate at least this many times Parse Server's, on either database. */
const GOAL = toParse(5, 5);
/** The goal of a 50-class schema's build, in milliseconds. */
const BUILD_GOAL_MS = 200;

const FIND = `query Find($from: Float!, $to: Float!) {
  gameScores(where: { score: { greaterThanOrEqualTo: $from, lessThan: $to } }, first: 10) {
    edges { node { objectId score playerName } }
  }
}`;
const CREATE = `mutation Create($score: Float!) {
  createGameScore(input: { fields: { score: $score, playerName: "bench" } }) { gameScore { objectId } }
}`;

/** A GraphQL endpoint and the headers a client sends it (application id, REST key). */
interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

const post = (endpoint: Endpoint, connections: number, query: string, variables: Record<string, unknown>) => ({
  url: endpoint.url,
  connections,
  method: 'POST' as const,
  headers: endpoint.headers,
  body: JSON.stringify({ query, variables }),
});

/** Seeds Backyard's app with OBJECTS `GameScore`s through REST batches of 1,000, `score` indexed. */
async function seedBackyard(backyard: BenchBackyard): Promise<void> {
  const made = await fetch(`${backyard.data}/schemas/GameScore`, {
    method: 'POST',
    headers: { ...backyard.headers, 'x-parse-master-key': backyard.app.masterKey },
    body: JSON.stringify({ fields: { score: { type: 'Number' }, playerName: { type: 'String' } }, indexes: { by_score: { score: 1 } } }),
  });
  if (!made.ok) throw new Error(`Backyard refused the schema: ${await made.text()}`);
  for (let i = 0; i < OBJECTS; i += 1000) {
    const requests = Array.from({ length: Math.min(1000, OBJECTS - i) }, (_, j) => ({ method: 'POST', path: '/data/classes/GameScore', body: { score: (i + j) % 1000, playerName: `player ${i + j}` } }));
    const res = await fetch(`${backyard.data}/batch`, { method: 'POST', headers: backyard.headers, body: JSON.stringify({ requests, transaction: true }) });
    if (!res.ok) throw new Error(`seeding failed: ${await res.text()}`);
  }
  // As the peer's table is analyzed after its seeding (seedParse), and as the data API bench does:
  // the first workload comes seconds after the inserts, before autovacuum has looked at the table,
  // and a plan made without statistics (for 2,000 rows: a sort of them all) is not Backyard's speed.
  backyard.cluster?.sql('VACUUM ANALYZE');
}

/** Seeds Parse Server alike: its schema through REST, its rows with SQL into the table it made. */
async function seedParse(server: ParseServerPeer): Promise<void> {
  const made = await fetch(`${server.url}/schemas/GameScore`, {
    method: 'POST',
    headers: { 'x-parse-application-id': server.keys.appId, 'x-parse-master-key': server.keys.masterKey, 'content-type': 'application/json' },
    body: JSON.stringify({ fields: { score: { type: 'Number' }, playerName: { type: 'String' } }, indexes: { by_score: { score: 1 } } }),
  });
  if (!made.ok) throw new Error(`Parse Server refused the schema: ${await made.text()}`);
  server.sql(
    `INSERT INTO "GameScore" ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", score, "playerName")
     SELECT substr(md5(i::text), 1, 10), now(), now(), '{*}', '{*}', i % 1000, 'player ' || i FROM generate_series(0, ${OBJECTS - 1}) AS i;
     ANALYZE "GameScore";`,
  );
}

const found = (body: any) => body?.data?.gameScores?.edges?.length === 10 && body.data.gameScores.edges.every((e: any) => e.node.score >= 100 && e.node.score < 200);
const created = (body: any) => typeof body?.data?.createGameScore?.gameScore?.objectId === 'string';

export async function graphQLBench(): Promise<void> {
  schemaBuild();
  if (!postgresBin()) {
    console.log('\nthe GraphQL workloads skipped: PostgreSQL is not installed for the peer (apt-get install postgresql postgresql-postgis; .ci/run does)');
    return;
  }
  for (const database of DATABASES) {
    console.log(`\n### the app on ${database === 'postgres' ? 'PostgreSQL' : 'SQLite'}`);
    await benchOn(database);
  }
}

/** Every workload with Backyard's app on `database`, against Parse Server on a cluster of its own. */
async function benchOn(database: DatabaseKind): Promise<void> {
  const backyard = await startBackyard(database);
  let peer: ParseServerPeer | undefined;
  let bare: Awaited<ReturnType<typeof startBareServer>> | undefined;
  let durable: { child: { kill(signal: NodeJS.Signals): boolean }; options: (connections: number) => autocannon.Options; name: string; inspectPort?: number } | undefined;
  try {
    await seedBackyard(backyard);
    // Parse Server on Backyard's cluster when there is one (as the data API bench does), else on its own.
    peer = await startParseServer({ durable: true, graphQL: true, postgres: backyard.cluster });
    await seedParse(peer);
    bare = await startBareServer();
    const insert = backyard.cluster
      ? await startBarePostgresInsert(backyard.cluster, 'bare_graphql')
      : await startBareSqliteInsert(path.join(backyard.home, 'bare-insert.db'), classTableDdl('bare'));
    durable = {
      child: insert.child,
      options: (connections) => insert.options(connections, { score: 1, playerName: 'bench' }),
      name: backyard.cluster ? BARE_POSTGRES : BARE_SQLITE,
      inspectPort: insert.inspectPort,
    };
    const ours: Endpoint = { url: `${backyard.base}/graphql`, headers: backyard.headers };
    const theirs: Endpoint = {
      url: peer.url.replace(/\/parse$/, '/graphql'),
      headers: { 'x-parse-application-id': peer.keys.appId, 'x-parse-rest-api-key': peer.keys.restKey, 'content-type': 'application/json' },
    };
    const workload = (name: string, connections: number, query: string, variables: Record<string, unknown>, answer: Workload['answer'], writes = false): Workload => ({
      name,
      options: post(ours, connections, query, variables),
      baselines: {
        bare: { url: bare!.url, connections, method: 'POST', body: '{}' },
        ...(writes && durable ? { [durable.name]: durable.options(connections) } : {}),
        'Parse Server': post(theirs, connections, query, variables),
      },
      goal: GOAL,
      answer,
      unchecked: durable ? [durable.name] : [],
      inspect: { Backyard: backyard.inspectPort, ...(writes && durable ? { [durable.name]: durable.inspectPort } : {}) },
    });
    const range = { from: 100, to: 200 };
    console.log(`${OBJECTS} GameScores on each side; each workload: ${ROUNDS} rounds of ${ROUND_SECONDS} s next to its baselines, medians of the rounds`);
    console.log(WORKLOAD_HEADER);
    for (const w of [
      workload('gameScores(where, first: 10), 1 conn', 1, FIND, range, found),
      workload('gameScores(where, first: 10), 16', 16, FIND, range, found),
      workload('createGameScore, 1 connection', 1, CREATE, { score: 1 }, created, true),
      workload('createGameScore, 16 connections', 16, CREATE, { score: 1 }, created, true),
    ])
      // A create's line also says how far the durable bare write itself got past Parse Server.
      await runWorkload(w, database, durable && durable.name in w.baselines ? { bare: durable.name, peer: 'Parse Server' } : undefined);
  } finally {
    bare?.child.kill('SIGTERM');
    durable?.child.kill('SIGTERM');
    await peer?.close();
    await backyard.close();
  }
}

/**
 * Builds the GraphQL schema of 50 classes of 12 fields each (every field type, pointers and relations
 * to the other classes) as a server does, 10 times, and prints the median
 * against the goal and the first (cold: graphql-js and the builder not yet optimized by V8).
 */
export function schemaBuild(): void {
  const types: FieldType[] = [
    { type: 'String' },
    { type: 'Number' },
    { type: 'Boolean' },
    { type: 'Date' },
    { type: 'Object' },
    { type: 'Array' },
    { type: 'GeoPoint' },
    { type: 'File' },
    { type: 'Bytes' },
    { type: 'Polygon' },
  ];
  const classes: SchemaClass[] = Array.from({ length: 50 }, (_, i) => ({
    className: `Class${i}`,
    fields: {
      ...DEFAULT_FIELDS,
      ...Object.fromEntries(types.map((t, j) => [`field${j}`, t])),
      owner: { type: 'Pointer', targetClass: `Class${(i + 1) % 50}` },
      members: { type: 'Relation', targetClass: '_User' },
    },
  }));
  classes.push({ className: '_User', fields: { ...DEFAULT_FIELDS, username: { type: 'String' }, password: { type: 'String' }, email: { type: 'String' } } });
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    // As a server builds it (graphql-js's own check of the schema skipped: buildSchema's docstring).
    const schema = buildSchema(classes);
    times.push(performance.now() - started);
    if (i === 0 && validateSchema(buildSchema(classes, [], { validate: true })).length) throw new Error('the 50-class schema is invalid');
    if (i === 0) size = printSchema(schema).length;
  }
  const built = median(times);
  console.log(
    `\nthe GraphQL schema of 50 classes (12 fields each; ${Math.round(size / 1024)} KiB of SDL), in process: median ${built.toFixed(1)} ms, first ${times[0]!.toFixed(1)} ms; ` +
      `goal < ${BUILD_GOAL_MS} ms (the median: a server builds it warm): ${built < BUILD_GOAL_MS ? 'met' : 'NOT met'} (built again only when the app's schema changes: appGraphQLSchema)`,
  );
}
