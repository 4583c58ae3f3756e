import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cloudTree } from '../src/data/cloud/runtime.js';
import type { StorageAdapter } from '../src/data/storage/adapter.js';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// A create or update mutation reads its object back for the selection, as Parse Server does
// (GraphQL/loaders/parseClassMutations.js). When no trigger of the class ran on the write or can run
// on a get, the read back takes the row the write stored (DataResponse.stored) instead of reading it
// again, with every check a get makes; otherwise it reads the object through the data API.

let server: TestServer;
let app: TestApp;
let storage: StorageAdapter;
beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'graphql-read-back');
  storage = (await server.platform.services.dataApi.apps.store(app.appId))!.storage;
  for (const className of ['Plain', 'Watched']) {
    const made = await app.call('POST', `/schemas/${className}`, {
      master: true,
      body: { className, fields: { name: { type: 'String' }, size: { type: 'Number' }, meta: { type: 'Object' }, tags: { type: 'Array' } } },
    });
    expect(made.status).toBe(200);
  }
  const main = path.join(cloudTree(server.home, app.appId), 'cloud', 'main.js');
  fs.mkdirSync(path.dirname(main), { recursive: true });
  fs.writeFileSync(
    main,
    "Parse.Cloud.afterFind('Watched', (request) => request.objects.map((o) => { o.set('name', String(o.get('name')).toUpperCase()); return o; }));\n",
  );
  await server.platform.services.cloud.reload(app.appId);
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const graphql = (query: string, options: { sessionToken?: string; master?: boolean } = {}) => app.call('POST', '/graphql', { body: { query }, ...options });
const FIELDS = 'objectId createdAt updatedAt name size meta tags { ... on Element { value } } ACL { public { read write } }';

describe('the read back of a GraphQL mutation', () => {
  it('answers a create and an update from the row stored, as a get of the object answers it', async () => {
    const reads = vi.spyOn(storage, 'get');
    const created = await graphql(
      `mutation { createPlain(input: { fields: { name: "a \\"quoted\\" ü", size: 1.5, meta: { deep: { list: [1, null, "x"] } }, tags: ["t", 2] } }) { plain { ${FIELDS} } } }`,
    );
    expect(created.status).toBe(200);
    const object = created.body.data.createPlain.plain;
    expect(object).toMatchObject({ name: 'a "quoted" ü', size: 1.5, meta: { deep: { list: [1, null, 'x'] } }, tags: [{ value: 't' }, { value: 2 }] });
    expect(object.updatedAt).toBe(object.createdAt);
    const updated = await graphql(`mutation { updatePlain(input: { id: "${object.objectId}", fields: { size: 2, tags: null } }) { plain { ${FIELDS} } } }`);
    expect(updated.status).toBe(200);
    expect(reads).not.toHaveBeenCalled();
    // The update read the object in its transaction; the read back did not read it again.
    const read = await graphql(`{ plain(id: "${object.objectId}") { ${FIELDS} } }`);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(updated.body.data.updatePlain.plain).toEqual(read.body.data.plain);
    expect(read.body.data.plain).toMatchObject({ objectId: object.objectId, createdAt: object.createdAt, size: 2, tags: null, name: 'a "quoted" ü' });
  });

  it('still refuses what a get refuses: an object its caller may not read is 101 after the write', async () => {
    const reads = vi.spyOn(storage, 'get');
    const hidden = await graphql('mutation { createPlain(input: { fields: { name: "h", ACL: { public: { read: false, write: true } } } }) { plain { objectId } } }');
    expect(hidden.status).toBe(200);
    expect(hidden.body.data.createPlain).toBeNull();
    expect(hidden.body.errors[0].extensions.code).toBe(101);
    expect(reads).not.toHaveBeenCalled();
    const stored = await app.call('GET', `/classes/Plain${whereQuery({ name: 'h' })}`, { master: true });
    expect(stored.body.results).toHaveLength(1);
    // Read access off for the public through the CLP: the write is allowed, the read back refused.
    const locked = await app.call('POST', '/schemas/Locked', {
      master: true,
      body: { className: 'Locked', fields: { name: { type: 'String' } }, classLevelPermissions: { create: { '*': true }, update: { '*': true }, find: {}, get: {}, count: {}, delete: {}, addField: {} } },
    });
    expect(locked.status).toBe(200);
    const refused = await graphql('mutation { createLocked(input: { fields: { name: "c" } }) { locked { objectId } } }');
    expect(refused.body.errors[0].extensions.code).toBe(119);
    expect((await app.call('GET', '/classes/Locked', { master: true })).body.results.map((o: { name: string }) => o.name)).toEqual(['c']);
    const master = await graphql('mutation { createLocked(input: { fields: { name: "m" } }) { locked { name } } }', { master: true });
    expect(master.body.data.createLocked.locked).toEqual({ name: 'm' });
    expect(reads).not.toHaveBeenCalled();
  });

  it('reads the object through the data API when the class has a trigger: afterFind changes the answer', async () => {
    const reads = vi.spyOn(storage, 'get');
    const created = await graphql('mutation { createWatched(input: { fields: { name: "quiet" } }) { watched { objectId name } } }');
    expect(created.status).toBe(200);
    expect(created.body.data.createWatched.watched.name).toBe('QUIET');
    expect(reads).toHaveBeenCalledTimes(1);
  });
});

// GraphQL's context reads each find's answer as objects (DataRequest.readsObjects): the JSON text the
// HTTP handler sends on (engine.ts findText) would only be parsed back.
describe('a GraphQL find', () => {
  it('reads objects, not the text the HTTP handler sends, and answers what REST answers', async () => {
    for (const [name, size] of [['f1', 1], ['f2', 2], ['f3', 3]] as const) {
      expect((await app.call('POST', '/classes/Plain', { body: { name, size, meta: { at: { deep: [size] } }, tags: ['x', size] } })).status).toBe(201);
    }
    const engine = (await server.platform.services.dataApi.apps.engine(app.appId))!;
    const text = vi.spyOn(engine, 'findText');
    const found = await graphql(`{ plains(where: { name: { in: ["f1", "f2", "f3"] } }, order: size_ASC) { count edges { node { objectId name size meta tags { ... on Element { value } } } } } }`);
    expect(found.status).toBe(200);
    expect(text).not.toHaveBeenCalled();
    const rest = await app.call('GET', `/classes/Plain${whereQuery({ name: { $in: ['f1', 'f2', 'f3'] } })}&order=size&count=1`);
    expect(text).toHaveBeenCalled();
    expect(found.body.data.plains.count).toBe(3);
    expect(found.body.data.plains.edges.map((e: { node: unknown }) => e.node)).toEqual(
      rest.body.results.map((o: { objectId: string; name: string; size: number; meta: unknown; tags: unknown[] }) => ({
        objectId: o.objectId,
        name: o.name,
        size: o.size,
        meta: o.meta,
        tags: o.tags.map((value) => ({ value })),
      })),
    );
  });
});
