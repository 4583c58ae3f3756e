/**
 * Parity of query keys and include with Parse Server 9.10, through the
 * real Parse JS SDK where it reaches the feature and through REST otherwise. Each test failed before
 * its item was done; test/differential/cases/query-keys.ts compares the same requests with Parse
 * Server itself.
 */
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pointSdkAt, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
let suffix = 0;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'parity-keys');
  await pointSdkAt(app);
});
afterAll(async () => {
  await server?.close();
});

const cls = (base: string) => `${base}${++suffix}`;

/**
 * A post whose `author` has a `team`; `tags` holds the author and a deleted author, `gone` points
 * to the deleted one. Public read so that the ACL shows in answers.
 */
async function world() {
  const names = { post: cls('Post'), author: cls('Author'), team: cls('Team') };
  const team = await new Parse.Object(names.team, { key: 'deep', other: 'x' }).save();
  const author = await new Parse.Object(names.author, { key: 'v', other: 'o', team }).save();
  const deleted = await new Parse.Object(names.author, { key: 'gone' }).save();
  const acl = new Parse.ACL();
  acl.setPublicReadAccess(true);
  const post = new Parse.Object(names.post, { fizz: 'buzz', foo: 'bar', author, tags: [author, deleted], gone: deleted, meta: { x: 1 } });
  post.setACL(acl);
  await post.save();
  await deleted.destroy();
  return { names, post, author };
}

describe('keys and include through the JS SDK', () => {
  it('select() with a dotted key returns the included object with only that key', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).select('fizz', 'author.key').find();
    expect(found!.get('fizz')).toBe('buzz');
    expect(found!.get('foo')).toBeUndefined();
    const author = found!.get('author') as Parse.Object;
    expect(author.get('key')).toBe('v');
    expect(author.get('other')).toBeUndefined();
  });

  it('select() two levels deep reaches the object included below the included one', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).select('author.team.key').find();
    const team = (found!.get('author') as Parse.Object).get('team') as Parse.Object;
    expect(team.get('key')).toBe('deep');
    expect(team.get('other')).toBeUndefined();
  });

  it('exclude() with a dotted key removes that key inside the included object', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).exclude('author.key').find();
    const author = found!.get('author') as Parse.Object;
    expect(author.get('other')).toBe('o');
    expect(author.get('key')).toBeUndefined();
    expect(found!.get('foo')).toBe('bar');
  });

  it('includeAll() fetches every pointer and every array of pointers', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).includeAll().find();
    expect((found!.get('author') as Parse.Object).get('key')).toBe('v');
    const tags = found!.get('tags') as Parse.Object[];
    expect(tags.map((t) => t.get('key'))).toEqual(['v']);
  });

  it('include() of a deleted object drops the dangling pointer, alone and in an array', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).include(['gone', 'tags']).find();
    expect(found!.has('gone')).toBe(false);
    expect((found!.get('tags') as Parse.Object[]).length).toBe(1);
    const [plain] = await new Parse.Query(names.post).find();
    expect((plain!.get('tags') as Parse.Object[]).length).toBe(2);
    expect(plain!.has('gone')).toBe(true);
  });

  it('select() answers the ACL too', async () => {
    const { names } = await world();
    const [found] = await new Parse.Query(names.post).select('foo').find();
    expect(found!.getACL()?.getPublicReadAccess()).toBe(true);
  });

  it('a relation query on an owner never fetched answers objects of the relation class', async () => {
    const owner = cls('Owner');
    const item = cls('Item');
    const one = await new Parse.Object(item, { name: 'one' }).save();
    const saved = new Parse.Object(owner);
    saved.relation('items').add(one);
    await saved.save();
    // A bare object does not know its relation's class, so the SDK sends redirectClassNameForKey.
    const bare = Parse.Object.createWithoutData(saved.id!) as Parse.Object;
    (bare as unknown as { className: string }).className = owner;
    const found = await bare.relation('items').query().find();
    expect(found.map((o) => [o.className, o.get('name')])).toEqual([[item, 'one']]);
  });
});

describe('keys and include as JSON array strings (REST)', () => {
  it('reads keys, excludeKeys and include given as JSON arrays, and includeAll=true', async () => {
    const { names } = await world();
    const q = (params: Record<string, string>) => app.call('GET', `/classes/${names.post}?${new URLSearchParams(params)}`);
    const keys = await q({ keys: '["fizz","foo"]' });
    expect(keys.status).toBe(200);
    expect(Object.keys(keys.body.results[0]).sort()).toEqual(['ACL', 'createdAt', 'fizz', 'foo', 'objectId', 'updatedAt']);
    const excluded = await q({ excludeKeys: '["fizz","meta"]' });
    expect(excluded.body.results[0]).not.toHaveProperty('fizz');
    expect(excluded.body.results[0]).not.toHaveProperty('meta');
    expect(excluded.body.results[0].foo).toBe('bar');
    const included = await q({ include: '["*"]' });
    expect(included.body.results[0].author).toMatchObject({ __type: 'Object', key: 'v' });
    const all = await q({ includeAll: 'true' });
    expect(all.status).toBe(200);
    expect(all.body.results[0].author).toMatchObject({ __type: 'Object', key: 'v' });
  });
});
