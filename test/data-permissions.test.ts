/**
 * Permissions hold on every class a data API request touches, over raw
 * HTTP on loopback and through the real Parse JS SDK: `include` leaves objects the caller may not
 * `get` as pointers; sub-queries (`$inQuery`, `$notInQuery`, `$select`, `$dontSelect`) need CLP `find`
 * on the class they read; `$relatedTo` needs the owner to be readable; fields that `protectedFields`
 * hide cannot be filtered or sorted on (Parse Server 9, RestQuery.denyProtectedFields). Each refusal
 * has a positive control: the same request by a caller who is allowed, or with the master key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Parse from 'parse/node';
import { createTestApp, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
let privateId: string;
let aliceOnlyId: string;
let annId: string;

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const names = (res: { body: { results: Array<{ name: string }> } }) => res.body.results.map((r) => r.name).sort();
const DENIED_FIND = 'Permission denied for action find on class Private.';
const notAllowed = (key: string, className = 'Person') => `This user is not allowed to query ${key} on class ${className}`;

/** GET with the REST key, as `who` (a user's session) or as nobody; `master` for the master key. */
const get = (path: string, who?: 'alice' | 'bob' | 'master') =>
  app.call('GET', path, who === 'master' ? { master: true } : { sessionToken: who ? tokens[who] : undefined });
const refused = (res: { status: number; body: unknown }, error: string) => expect(res).toMatchObject({ status: 400, body: { code: 119, error } });

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'permissions');
  for (const name of ['alice', 'bob']) {
    // Publicly readable, as enforcePrivateUsers (on by default) would not make them: these tests read each other's users.
    const res = await app.call('POST', '/users', { body: { username: name, password: `${name}-pw`, email: `${name}@example.test`, ACL: { '*': { read: true } } } });
    expect(res.status).toBe(201);
    tokens[name] = res.body.sessionToken;
    ids[name] = res.body.objectId;
  }
  const schema = async (className: string, fields: Record<string, unknown>, classLevelPermissions: Record<string, unknown>) =>
    expect((await app.call('POST', `/schemas/${className}`, { master: true, body: { fields, classLevelPermissions } })).status).toBe(200);
  // Only alice may get, find and count Private objects.
  const alice = { [ids.alice!]: true };
  await schema('Private', { secret: { type: 'String' }, code: { type: 'Number' }, readers: { type: 'Relation', targetClass: '_User' } }, { get: alice, find: alice, count: alice });
  // Everyone reads Person, but only alice sees `ssn`, `card` and `fans`.
  await schema(
    'Person',
    { name: { type: 'String' }, ssn: { type: 'String' }, card: { type: 'Object' }, fans: { type: 'Relation', targetClass: '_User' } },
    // Permissions given replace the defaults (Parse Server closes every action left out), so the open ones are listed.
    { find: { '*': true }, get: { '*': true }, count: { '*': true }, create: { '*': true }, update: { '*': true }, delete: { '*': true }, addField: { '*': true }, protectedFields: { '*': ['ssn', 'card', 'fans'], [ids.alice!]: [] } },
  );
  const create = async (className: string, body: Record<string, unknown>) => (await app.call('POST', `/classes/${className}`, { master: true, body })).body.objectId as string;
  privateId = await create('Private', { secret: 's3cret', code: 42, readers: { __op: 'AddRelation', objects: [pointer('_User', ids.bob!)] } });
  // A public class, but this object's ACL lets only alice read it.
  aliceOnlyId = await create('Open', { secret: 'acl', ACL: { [ids.alice!]: { read: true } }, readers: { __op: 'AddRelation', objects: [pointer('_User', ids.bob!)] } });
  const one = await create('Pub', { name: 'one', code: 42, ptr: pointer('Private', privateId), open: pointer('Open', aliceOnlyId) });
  await create('Pub', { name: 'two', code: 7, next: pointer('Pub', one) });
  annId = await create('Person', { name: 'Ann', ssn: '123-45-6789', card: { number: '4111' }, fans: { __op: 'AddRelation', objects: [pointer('_User', ids.bob!)] } });
  await create('Person', { name: 'Ben', ssn: '987-65-4321', card: { number: '5500' } });
});
afterAll(async () => server?.close());

describe('finding 4: include respects the included class CLP and ACL', () => {
  it('leaves a Private object a bare pointer for callers its CLP refuses, at every depth and for include=*', async () => {
    // The direct read that include used to bypass.
    refused(await get(`/classes/Private/${privateId}`), 'Permission denied for action get on class Private.');
    for (const who of [undefined, 'bob'] as const) {
      const [one] = (await get(`/classes/Pub${whereQuery({ name: 'one' }, { include: 'ptr' })}`, who)).body.results;
      expect(one.ptr).toEqual(pointer('Private', privateId));
      const [star] = (await get(`/classes/Pub${whereQuery({ name: 'one' }, { include: '*' })}`, who)).body.results;
      expect(star.ptr).toEqual(pointer('Private', privateId));
      const nested = await get(`/classes/Pub${whereQuery({ name: 'two' }, { include: 'next.ptr' })}`, who);
      expect(nested.status).toBe(200);
      expect(nested.body.results[0].next).toMatchObject({ __type: 'Object', className: 'Pub', name: 'one', ptr: pointer('Private', privateId) });
    }
    // Positive controls: alice (allowed by CLP) and the master key get the object, at every depth.
    for (const who of ['alice', 'master'] as const) {
      const [one] = (await get(`/classes/Pub${whereQuery({ name: 'one' }, { include: 'ptr' })}`, who)).body.results;
      expect(one.ptr).toMatchObject({ __type: 'Object', className: 'Private', secret: 's3cret' });
      const [two] = (await get(`/classes/Pub${whereQuery({ name: 'two' }, { include: 'next.ptr' })}`, who)).body.results;
      expect(two.next.ptr).toMatchObject({ __type: 'Object', className: 'Private', secret: 's3cret' });
    }
  });

  it('drops a pointer to an object whose ACL refuses the caller, as Parse Server does', async () => {
    const [byBob] = (await get(`/classes/Pub${whereQuery({ name: 'one' }, { include: 'open' })}`, 'bob')).body.results;
    expect(byBob).not.toHaveProperty('open');
    expect(byBob.name).toBe('one');
    const [byAlice] = (await get(`/classes/Pub${whereQuery({ name: 'one' }, { include: 'open' })}`, 'alice')).body.results;
    expect(byAlice.open).toMatchObject({ __type: 'Object', secret: 'acl' });
  });
});

describe('finding 5: sub-queries, $relatedTo and count check the CLP of the class they read', () => {
  const subQuery = { className: 'Private', where: { code: 42 } };
  const select = { query: { className: 'Private', where: {} }, key: 'code' };
  it.each([
    ['$inQuery', { ptr: { $inQuery: subQuery } }, ['one']],
    ['$notInQuery', { ptr: { $notInQuery: subQuery } }, ['two']],
    ['$select', { code: { $select: select } }, ['one']],
    ['$dontSelect', { code: { $dontSelect: select } }, ['two']],
  ])('%s into Private: 400/119 unless the caller may find Private', async (_op, where, allowed) => {
    refused(await get(`/classes/Pub${whereQuery(where)}`), DENIED_FIND);
    refused(await get(`/classes/Pub${whereQuery(where)}`, 'bob'), DENIED_FIND);
    // Nested in $or, the sub-query is refused just the same.
    refused(await get(`/classes/Pub${whereQuery({ $or: [where, { name: 'x' }] })}`, 'bob'), DENIED_FIND);
    expect(names(await get(`/classes/Pub${whereQuery(where)}`, 'alice'))).toEqual(allowed);
    expect(names(await get(`/classes/Pub${whereQuery(where)}`, 'master'))).toEqual(allowed);
  });

  it('count: a sub-query into Private is refused in a count as well; a count of Private needs CLP count', async () => {
    const where = { ptr: { $inQuery: subQuery } };
    refused(await get(`/classes/Pub${whereQuery(where, { count: '1', limit: '0' })}`, 'bob'), DENIED_FIND);
    expect((await get(`/classes/Pub${whereQuery(where, { count: '1', limit: '0' })}`, 'alice')).body).toEqual({ results: [], count: 1 });
    refused(await get('/classes/Private?count=1&limit=0', 'bob'), 'Permission denied for action count on class Private.');
    expect((await get('/classes/Private?count=1&limit=0', 'alice')).body).toEqual({ results: [], count: 1 });
  });

  it('a sub-query only sees the rows the caller may read (ACL)', async () => {
    const where = { open: { $inQuery: { className: 'Open', where: {} } } };
    expect(names(await get(`/classes/Pub${whereQuery(where)}`, 'bob'))).toEqual([]);
    expect(names(await get(`/classes/Pub${whereQuery(where)}`, 'alice'))).toEqual(['one']);
  });

  it('$relatedTo finds nothing when the caller may not get the owner (its CLP or its ACL), as Parse Server 9 answers', async () => {
    const related = (className: string, objectId: string) => `/users${whereQuery({ $relatedTo: { object: pointer(className, objectId), key: 'readers' } })}`;
    for (const [className, objectId] of [['Private', privateId], ['Open', aliceOnlyId]] as const) {
      expect(await get(related(className, objectId), 'bob')).toMatchObject({ status: 200, body: { results: [] } });
      expect((await get(related(className, objectId), 'alice')).body.results.map((u: { username: string }) => u.username)).toEqual(['bob']);
      expect((await get(related(className, objectId), 'master')).body.results.map((u: { username: string }) => u.username)).toEqual(['bob']);
    }
  });

  it('aggregate stays master-key only: 403/119', async () => {
    expect(await get('/aggregate/Private?distinct=code', 'alice')).toMatchObject({ status: 403, body: { code: 119, error: 'unauthorized: master key is required' } });
    expect((await get('/aggregate/Private?distinct=code', 'master')).body).toEqual({ results: [42] });
  });
});

describe('finding 6: protected fields cannot be filtered or sorted on', () => {
  it.each([
    ['plain equality', { ssn: '123-45-6789' }, 'ssn'],
    ['an operator', { ssn: { $regex: '^123' } }, 'ssn'],
    ['$or', { $or: [{ name: 'Nobody' }, { ssn: '123-45-6789' }] }, 'ssn'],
    ['$and', { $and: [{ name: 'Ann' }, { ssn: { $gt: '1' } }] }, 'ssn'],
    ['$nor', { $nor: [{ ssn: '987-65-4321' }] }, 'ssn'],
    ['dot notation', { 'card.number': '4111' }, 'card.number'],
  ])('%s: 400/119 for callers the field is hidden from', async (_case, where, key) => {
    refused(await get(`/classes/Person${whereQuery(where)}`), notAllowed(key));
    refused(await get(`/classes/Person${whereQuery(where)}`, 'bob'), notAllowed(key));
    // The count of a refused where would be the same oracle.
    refused(await get(`/classes/Person${whereQuery(where, { count: '1', limit: '0' })}`, 'bob'), notAllowed(key));
    // Positive controls: alice sees the field, and so does the master key.
    expect(names(await get(`/classes/Person${whereQuery(where)}`, 'alice'))).toEqual(['Ann']);
    expect(names(await get(`/classes/Person${whereQuery(where)}`, 'master'))).toEqual(['Ann']);
  });

  it('order: 400/119 "not allowed to sort by"', async () => {
    for (const order of ['ssn', '-ssn', 'name,card.number']) {
      const key = order.replace(/^-|^name,/g, '');
      refused(await get(`/classes/Person?order=${order}`, 'bob'), `This user is not allowed to sort by ${key} on class Person`);
    }
    for (const who of ['alice', 'master'] as const) {
      expect((await get('/classes/Person?order=-ssn', who)).body.results.map((p: { name: string }) => p.name)).toEqual(['Ben', 'Ann']);
    }
  });

  it('keys: not refused (as in Parse Server 9), and the hidden field stays out of the answer', async () => {
    const res = await get('/classes/Person?keys=ssn,name&order=name', 'bob');
    expect(res.status).toBe(200);
    expect(res.body.results.map((p: Record<string, unknown>) => [p.name, p.ssn])).toEqual([['Ann', undefined], ['Ben', undefined]]);
    expect((await get('/classes/Person?keys=ssn&order=name', 'alice')).body.results.map((p: { ssn: string }) => p.ssn)).toEqual(['123-45-6789', '987-65-4321']);
  });

  it('a protected field of a sub-queried class, or used as a $select key, is refused too', async () => {
    const inQuery = { owner: { $inQuery: { className: 'Person', where: { ssn: '123-45-6789' } } } };
    refused(await get(`/classes/Pub${whereQuery(inQuery)}`, 'bob'), notAllowed('ssn'));
    const select = { name: { $select: { query: { className: 'Person', where: {} }, key: 'ssn' } } };
    refused(await get(`/classes/Pub${whereQuery(select)}`, 'bob'), notAllowed('ssn'));
    expect((await get(`/classes/Pub${whereQuery(select)}`, 'alice')).status).toBe(200);
  });

  it('$relatedTo through a protected relation field: 400/119', async () => {
    const fans = `/users${whereQuery({ $relatedTo: { object: pointer('Person', annId), key: 'fans' } })}`;
    refused(await get(fans, 'bob'), notAllowed('fans'));
    expect((await get(fans, 'alice')).body.results.map((u: { username: string }) => u.username)).toEqual(['bob']);
  });

  it("_User email: another user cannot find a user by email; the master key can", async () => {
    const byEmail = `/users${whereQuery({ email: 'alice@example.test' })}`;
    refused(await get(byEmail, 'bob'), notAllowed('email', '_User'));
    refused(await get(byEmail), notAllowed('email', '_User'));
    refused(await get(`/users${whereQuery({ $or: [{ email: { $regex: '^alice' } }] })}`, 'bob'), notAllowed('email', '_User'));
    refused(await get('/users?order=email', 'bob'), 'This user is not allowed to sort by email on class _User');
    expect((await get(byEmail, 'master')).body.results.map((u: { username: string }) => u.username)).toEqual(['alice']);
    // Fields that are not protected stay queryable.
    expect((await get(`/users${whereQuery({ username: 'alice' })}`, 'bob')).body.results).toHaveLength(1);
  });
});

describe('through the Parse JS SDK', () => {
  beforeAll(() => {
    Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
    Parse.serverURL = app.apiURL;
    Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
  });
  const as = (who: 'alice' | 'bob') => ({ sessionToken: tokens[who] });
  const master = { useMasterKey: true };
  const forbidden = (message: string) => ({ code: Parse.Error.OPERATION_FORBIDDEN, message });

  it('finding 4: include leaves a pointer the caller may not get', async () => {
    const byBob = await new Parse.Query('Pub').equalTo('name', 'one').include('ptr').first(as('bob'));
    expect(byBob!.get('ptr').id).toBe(privateId);
    expect(byBob!.get('ptr').get('secret')).toBeUndefined();
    const byAlice = await new Parse.Query('Pub').equalTo('name', 'one').include('ptr').first(as('alice'));
    expect(byAlice!.get('ptr').get('secret')).toBe('s3cret');
    const all = await new Parse.Query('Pub').equalTo('name', 'one').includeAll().first(as('bob'));
    expect(all!.get('ptr').get('secret')).toBeUndefined();
    expect((await new Parse.Query('Pub').equalTo('name', 'one').includeAll().first(master))!.get('ptr').get('secret')).toBe('s3cret');
  });

  it('finding 5: matchesQuery, doesNotMatchQuery, matchesKeyInQuery, doesNotMatchKeyInQuery and count', async () => {
    const inner = () => new Parse.Query('Private').equalTo('code', 42);
    const queries = [
      () => new Parse.Query('Pub').matchesQuery('ptr', inner()),
      () => new Parse.Query('Pub').doesNotMatchQuery('ptr', inner()),
      () => new Parse.Query('Pub').matchesKeyInQuery('code', 'code', inner()),
      () => new Parse.Query('Pub').doesNotMatchKeyInQuery('code', 'code', inner()),
    ];
    for (const query of queries) {
      await expect(query().find(as('bob'))).rejects.toMatchObject(forbidden(DENIED_FIND));
      await expect(query().count(as('bob'))).rejects.toMatchObject(forbidden(DENIED_FIND));
      expect((await query().find(as('alice'))).length).toBe(1);
      expect((await query().find(master)).length).toBe(1);
    }
  });

  it('finding 5: a relation query finds nothing when the caller may not get the owner', async () => {
    const owner = Parse.Object.extend('Private').createWithoutData(privateId);
    expect(await owner.relation('readers').query().find(as('bob'))).toEqual([]);
    expect((await owner.relation('readers').query().find(as('alice'))).map((u: Parse.Object) => u.id)).toEqual([ids.bob]);
  });

  it('finding 6: equalTo, or, ascending on protected fields and a _User email are refused', async () => {
    await expect(new Parse.Query('Person').equalTo('ssn', '123-45-6789').find(as('bob'))).rejects.toMatchObject(forbidden(notAllowed('ssn')));
    const or = Parse.Query.or(new Parse.Query('Person').equalTo('name', 'x'), new Parse.Query('Person').startsWith('ssn', '123'));
    await expect(or.find(as('bob'))).rejects.toMatchObject(forbidden(notAllowed('ssn')));
    await expect(new Parse.Query('Person').ascending('ssn').find(as('bob'))).rejects.toMatchObject(
      forbidden('This user is not allowed to sort by ssn on class Person'),
    );
    await expect(new Parse.Query(Parse.User).equalTo('email', 'alice@example.test').find(as('bob'))).rejects.toMatchObject(forbidden(notAllowed('email', '_User')));
    expect((await new Parse.Query('Person').equalTo('ssn', '123-45-6789').find(as('alice'))).map((p) => p.get('name'))).toEqual(['Ann']);
    expect((await new Parse.Query(Parse.User).equalTo('email', 'alice@example.test').find(master)).map((u) => u.id)).toEqual([ids.alice]);
  });
});
