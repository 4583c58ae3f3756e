import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/*
 * JSON nested deeper than the data API takes (src/data/nesting.ts) is a client's mistake: a Parse
 * error (107 for a body, 102 for a where), never a 500, which the SDKs would retry five times.
 */

let server: TestServer;
let app: TestApp;

const nestedArray = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};
const nestedObject = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
};

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server);
});

afterAll(async () => {
  await server?.close();
});

it('a create nesting 1,000 arrays answers 107 and stores nothing', async () => {
  const answer = await app.call('POST', '/classes/Deep', { body: { deep: nestedArray(1000) } });
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({ code: 107, error: expect.stringContaining('nest more than 128 levels deep') });
  const count = await app.call('GET', '/classes/Deep?count=1&limit=0', { master: true });
  expect(count.body.count ?? 0).toBe(0);
});

it('a batch and an update nesting too deep answer 107', async () => {
  const batch = await app.call('POST', '/batch', { body: { requests: [{ method: 'POST', path: '/data/classes/Deep', body: { deep: nestedObject(2000) } }] } });
  expect(batch.status).toBe(400);
  expect(batch.body.code).toBe(107);
  const made = await app.call('POST', '/classes/Deep', { body: { deep: 1 } });
  const update = await app.call('PUT', `/classes/Deep/${made.body.objectId}`, { body: { deep: nestedObject(500) } });
  expect(update.status).toBe(400);
  expect(update.body.code).toBe(107);
  const read = await app.call('GET', `/classes/Deep/${made.body.objectId}`);
  expect(read.body.deep).toBe(1);
});

it('a where nesting too deep answers 102 in a query string and 107 in the SDK body', async () => {
  const inQuery = await app.call('GET', `/classes/Deep${whereQuery({ deep: { $eq: nestedArray(1000) } })}`);
  expect(inQuery.status).toBe(400);
  expect(inQuery.body.code).toBe(102);
  const inBody = await app.call('POST', '/classes/Deep', { body: { _method: 'GET', where: { deep: nestedArray(1000) } } });
  expect(inBody.status).toBe(400);
  expect(inBody.body.code).toBe(107);
});

it('an object nesting 100 levels, as MongoDB stores, is kept and found', async () => {
  const made = await app.call('POST', '/classes/Nested', { body: { deep: nestedObject(100), tag: 'deep100' } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const read = await app.call('GET', `/classes/Nested/${made.body.objectId}`);
  expect(read.body.deep).toEqual(nestedObject(100));
  const found = await app.call('GET', `/classes/Nested${whereQuery({ deep: nestedObject(100) })}`);
  expect(found.body.results.map((r: { tag: string }) => r.tag)).toEqual(['deep100']);
});
