import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// Documents that parsed and validated are kept per built schema (src/data/graphql/execute.ts): the
// same text answers the same, and a schema built again after a class changed validates it afresh.

let server: TestServer;
let app: TestApp;
beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'graphql-documents');
});
afterAll(async () => {
  await server?.close();
});

const graphql = (query: string, variables?: Record<string, unknown>) => app.call('POST', '/graphql', { body: { query, variables } });

describe('GraphQL documents kept between requests', () => {
  it('answers a repeated document with its new variables, and validates it again once its class is gone', async () => {
    expect((await app.call('POST', '/schemas/Plant', { master: true, body: { className: 'Plant', fields: { height: { type: 'Number' } } } })).status).toBe(200);
    for (const height of [1, 2, 3]) expect((await app.call('POST', '/classes/Plant', { body: { height } })).status).toBe(201);
    const document = 'query Short($below: Float) { plants(where: { height: { lessThan: $below } }) { count } }';
    expect(await graphql(document, { below: 3 })).toMatchObject({ status: 200, body: { data: { plants: { count: 2 } } } });
    expect(await graphql(document, { below: 2 })).toMatchObject({ status: 200, body: { data: { plants: { count: 1 } } } });

    // The class's objects and then the class go: the schema is built again, without `plants`.
    const { body } = await app.call('GET', '/classes/Plant');
    for (const { objectId } of body.results) expect((await app.call('DELETE', `/classes/Plant/${objectId}`)).status).toBe(200);
    expect((await app.call('DELETE', '/schemas/Plant', { master: true })).status).toBe(200);
    const after = await graphql(document, { below: 3 });
    expect(after.status).toBe(400);
    expect(after.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('refuses an invalid document each time it comes, and a syntax error as one', async () => {
    for (let i = 0; i < 2; i++) {
      const invalid = await graphql('{ noSuchQuery }');
      expect(invalid.status).toBe(400);
      expect(invalid.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      const broken = await graphql('{ health');
      expect(broken.status).toBe(400);
      expect(broken.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    }
    expect(await graphql('{ health }')).toEqual(expect.objectContaining({ status: 200, body: { data: { health: true } } }));
  });
});
