import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// Documents that parsed and validated are kept per built schema (src/data/graphql/execute.ts): the
// same text answers the same, and a schema built again after a class changed validates it afresh.
// A document's first request is executed by graphql-js, every later one by its operation as
// graphql-jit compiled it: each answer below is the same the first time and the times after.

// The server runs in this process: its graphql-jit is this one, counted.
const jit = vi.hoisted(() => ({ compiled: [] as string[] }));
vi.mock('graphql-jit', async (original) => {
  const actual = await original<typeof import('graphql-jit')>();
  return {
    ...actual,
    compileQuery: (...args: Parameters<typeof actual.compileQuery>) => {
      const made = actual.compileQuery(...args);
      if (actual.isCompiledQuery(made)) jit.compiled.push(args[1].loc?.source.body ?? '');
      return made;
    },
  };
});

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

describe('a document executed by graphql-js, then compiled by graphql-jit', () => {
  /** The answer with objectIds, global ids and dates made comparable across creates. */
  const comparable = (answer: { status: number; body: unknown }) =>
    JSON.parse(
      JSON.stringify(answer)
        .replace(/"(objectId|id)":"[^"]+"/g, '"$1":"<id>"')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<date>'),
    );

  const HOSTILE = '"); throw new Error("jit"); ("`${process.exit(1)}`\u2028\u2029\\\'';

  it('answers alike the first time and the times after: data, nulls, errors with their paths and codes, refused variables', async () => {
    const made = await app.call('POST', '/schemas/Shelf', {
      master: true,
      body: { className: 'Shelf', fields: { label: { type: 'String' }, size: { type: 'Number' }, items: { type: 'Array' }, spec: { type: 'Object' }, owner: { type: 'Pointer', targetClass: '_User' } } },
    });
    expect(made.status).toBe(200);
    for (const [label, size] of [['a', 1], ['b', 2], ['c', 3]] as const) {
      expect((await app.call('POST', '/classes/Shelf', { body: { label, size, items: [label, size, { deep: [null] }], spec: { w: size } } })).status).toBe(201);
    }
    const hidden = await app.call('POST', '/classes/Shelf', { body: { label: 'hidden', size: 9, ACL: {} } });
    expect((await app.call('POST', '/classes/Shelf', { body: { label: HOSTILE, size: 5 } })).status).toBe(201);
    const documents: Array<[string, Record<string, unknown>?]> = [
      [
        'query Q($min: Float, $first: Int) { shelves(where: { size: { greaterThanOrEqualTo: $min } }, order: [size_DESC], first: $first) { count pageInfo { hasNextPage endCursor } edges { cursor node { id objectId label size spec items { ... on Element { value } } owner { objectId } } } } }',
        { min: 2, first: 1 },
      ],
      ['query Q($min: Float, $first: Int) { shelves(where: { size: { greaterThanOrEqualTo: $min } }, order: [size_DESC], first: $first) { count } }', { min: 'many' }],
      [`{ visible: shelves(where: { label: { equalTo: "a" } }) { count } gone: shelf(id: "${hidden.body.objectId}") { label } health }`],
      ['mutation M($size: Float) { createShelf(input: { fields: { label: "new", size: $size }, clientMutationId: "m1" }) { clientMutationId shelf { objectId label size createdAt } } }', { size: 4 }],
      ['mutation { createShelf(input: { fields: { label: "bad", owner: { link: "nobody-there" } } }) { shelf { objectId } } }'],
      ['mutation { callCloudCode(input: { functionName: hello, params: { name: "jit" } }) { result } }'],
      ['query { viewer { user { objectId } } }'],
      // Strings a compiler that writes JavaScript must keep strings: quotes, backslashes, template syntax, line separators.
      [`{ shelves(where: { label: { equalTo: ${JSON.stringify(HOSTILE)} } }) { count edges { node { label } } } }`],
      [`query Q($l: String = ${JSON.stringify(HOSTILE)}, $n: Float = 1) { shelves(where: { label: { equalTo: $l }, size: { greaterThan: $n } }) { count } }`],
    ];
    for (const [document, variables] of documents) {
      const compiledBefore = jit.compiled.filter((text) => text === document).length;
      const first = comparable(await graphql(document, variables));
      expect(first.status, document).toBeLessThan(500);
      // graphql-js answered the first request; the second compiles the document, once.
      expect(jit.compiled.filter((text) => text === document).length, document).toBe(compiledBefore);
      if (document.includes('process.exit')) expect(first.body.data.shelves.count, document).toBe(1);
      for (let again = 0; again < 2; again++) expect(comparable(await graphql(document, variables))).toEqual(first);
      expect(jit.compiled.filter((text) => text === document).length, document).toBe(compiledBefore + 1);
    }
  });
});

describe('what graphql-jit compiles', () => {
  it('leaves a long document to graphql-js, and answers it alike', async () => {
    // 700 aliases of one field: past the compiled documents' 32 KB bound.
    const long = `{ ${Array.from({ length: 700 }, (_, i) => `health_${String(i).padStart(3, '0')}_${'x'.repeat(30)}: health`).join(' ')} }`;
    expect(long.length).toBeGreaterThan(32 * 1024);
    const before = jit.compiled.length;
    const answers = [await graphql(long), await graphql(long)];
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(Object.keys(answers[1]!.body.data)).toHaveLength(700);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(jit.compiled.length).toBe(before);
  });
});
