import { dataApiBench } from './data-api.js';
import { managementBench } from './management.js';
import { devenvsBench } from './devenvs.js';
import { webAppsBench } from './webapps.js';
import { cloudBench } from './cloud.js';
import { engineBench } from './engine.js';
import { liveQueryBench } from './livequery.js';
import { graphQLBench } from './graphql.js';

// `npm run bench`: every benchmark, each printing ratios against a baseline measured in the same run.
const only = process.argv[2];
if (!only || only === 'management') {
  console.log('## management API (in process, sequential)');
  await managementBench();
}
if (!only || only === 'engine') {
  console.log('\n## data engine (in process, over the SQLite adapter, against the same statements on a bare better-sqlite3 handle)');
  await engineBench();
}
if (!only || only === 'data-api') {
  console.log('\n## data API (Backyard, a bare node:http server and Parse Server 9 on PostgreSQL as child processes, loaded with autocannon)');
  await dataApiBench();
}
if (!only || only === 'graphql') {
  console.log("\n## GraphQL API (backyard serve as a child process, against Parse Server 9's GraphQL API on PostgreSQL and a bare node:http server, loaded with autocannon)");
  await graphQLBench();
}
if (!only || only === 'livequery') {
  console.log('\n## LiveQuery (backyard serve as a child process, WebSocket subscribers, against a bare ws broadcast and Parse Server 9\'s LiveQuery)');
  await liveQueryBench();
}
if (!only || only === 'devenvs') {
  console.log('\n## development environments (Docker engine, MCP over HTTP in process, against a bare dockerode exec)');
  await devenvsBench();
}
if (!only || only === 'webapps') {
  console.log('\n## Web Apps (backyard serve as a child process and the Docker engine, against a bare docker build + run and a direct connection)');
  await webAppsBench();
}
if (!only || only === 'cloud') {
  console.log('\n## cloud code workers (in process, sandbox and permission model alone, against a bare node start and a server with no worker)');
  await cloudBench();
}
