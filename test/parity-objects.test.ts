/**
 * Objects and schemas as Parse Server 9.10 handles them, through the
 * real Parse JS SDK where it reaches the feature and through REST otherwise: polygons, the one GeoPoint
 * field of a class, reserved field names, dotted keys inside Object fields, prohibited keywords, and
 * `/schemas` field options, class-level permission keys and error codes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Parse from 'parse/node';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';

let server: TestServer;
let app: TestApp;
const statuses: number[] = [];
const realFetch = globalThis.fetch;
let classCount = 0;
/** A class name of its own for each test. */
const cls = (base: string) => `${base}${++classCount}`;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'parity-objects');
  globalThis.fetch = async (input: any, init?: any) => {
    const response = await realFetch(input, init);
    statuses.push(response.status);
    return response;
  };
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
  // A 5xx is a Backyard bug: fail at once instead of waiting out the SDK's retries.
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
});
afterEach(() => {
  expect(statuses.filter((s) => s >= 500), 'the server answered 5xx').toEqual([]);
  statuses.length = 0;
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server?.close();
});

/** The Parse.Error a promise rejects with: `{code, message}`. */
async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as Parse.Error;
    return { code, message };
  }
  throw new Error('expected the call to fail');
}

const fresh = async (className: string, id: string) => new Parse.Query(className).get(id, { useMasterKey: true });

describe('item 1: polygons, GeoPoints and field names', () => {
  it('closes an open ring on save and keeps a closed one', async () => {
    const className = cls('Area');
    const open = await new Parse.Object(className).save({ p: new Parse.Polygon([[0, 0], [0, 1], [1, 1]]) });
    const closed = await new Parse.Object(className).save({ p: new Parse.Polygon([[0, 0], [0, 1], [1, 1], [0, 0]]) });
    expect((await fresh(className, open.id!)).get('p').coordinates).toEqual([[0, 0], [0, 1], [1, 1], [0, 0]]);
    expect((await fresh(className, closed.id!)).get('p').coordinates).toEqual([[0, 0], [0, 1], [1, 1], [0, 0]]);
  });

  it('refuses a polygon of fewer than 3 distinct vertices or out-of-range points', async () => {
    const className = cls('Area');
    const twice = await failure(new Parse.Object(className).save({ p: new Parse.Polygon([[0, 0], [0, 1], [0, 0]]) }));
    expect(twice).toEqual({ code: 107, message: 'p: a Polygon needs at least 3 different vertices.' });
    const short = await app.call('POST', `/classes/${className}`, { body: { p: { __type: 'Polygon', coordinates: [[0, 0], [0, 1]] } } });
    expect(short.body).toEqual({ code: 107, error: 'p: a Polygon needs at least 3 [latitude, longitude] pairs in coordinates.' });
    const far = await app.call('POST', `/classes/${className}`, { body: { p: { __type: 'Polygon', coordinates: [[100, 10], [100, 20], [120, 20]] } } });
    expect(far.body).toMatchObject({ code: 111, error: expect.stringContaining('Polygon point 0 [100, 10] is outside') });
  });

  it('allows one GeoPoint field per class (111)', async () => {
    const className = cls('Place');
    const both = await failure(new Parse.Object(className).save({ a: new Parse.GeoPoint(1, 2), b: new Parse.GeoPoint(3, 4) }));
    expect(both.code).toBe(111);
    await new Parse.Object(className).save({ a: new Parse.GeoPoint(1, 2) });
    const second = await failure(new Parse.Object(className).save({ b: new Parse.GeoPoint(3, 4) }));
    expect(second).toEqual({ code: 111, message: 'there can only be one geopoint field in a class' });
    const schema = await app.call('POST', `/schemas/${cls('PlaceS')}`, { master: true, body: { fields: { a: { type: 'GeoPoint' }, b: { type: 'GeoPoint' } } } });
    expect(schema.body.code).toBe(111);
  });

  it('refuses className and length as field names (105), also in /schemas', async () => {
    const className = cls('Named');
    expect(await failure(new Parse.Object(className).save({ length: 1 }))).toEqual({ code: 105, message: 'Invalid field name: length.' });
    const object = await new Parse.Object(className).save({ a: 1 });
    const put = await app.call('PUT', `/classes/${className}/${object.id}`, { body: { className: 'Other' } });
    expect(put.body).toEqual({ code: 105, error: 'Invalid field name: className.' });
    const schema = await app.call('POST', `/schemas/${cls('NamedS')}`, { master: true, body: { fields: { length: { type: 'Number' } } } });
    expect(schema.body).toEqual({ code: 105, error: 'invalid field name: length' });
  });
});

describe('item 2: dotted keys update inside an Object field', () => {
  it('sets, increments and deletes sub-keys and answers results nested', async () => {
    const className = cls('Dotted');
    const object = await new Parse.Object(className).save({ objectField: { foo: 1, n: 5, deep: { x: 1 } } });
    object.set('objectField.baz', 50);
    object.increment('objectField.n');
    await object.save();
    const updated = await app.call('PUT', `/classes/${className}/${object.id}`, { body: { 'objectField.deep.y': 2, 'objectField.foo': { __op: 'Delete' }, 'objectField.m': { __op: 'Increment', amount: 3 } } });
    expect(updated.body).toMatchObject({ objectField: { m: 3 } });
    expect((await fresh(className, object.id!)).get('objectField')).toEqual({ n: 6, baz: 50, deep: { x: 1, y: 2 }, m: 3 });
    const found = await new Parse.Query(className).equalTo('objectField.baz', 50).find();
    expect(found.map((o) => o.id)).toEqual([object.id]);
  });

  it('refuses a dotted key into a field of another type, a bad sub-key or a system field', async () => {
    const className = cls('Dotted');
    const object = await new Parse.Object(className).save({ num: 1 });
    expect(await failure(object.save({ 'num.x': 1 }))).toMatchObject({ code: 111 });
    const bad = await app.call('PUT', `/classes/${className}/${object.id}`, { body: { 'o.a-b': 1 } });
    expect(bad.body).toEqual({ code: 105, error: 'Invalid field name: o.a-b.' });
    const user = await app.call('POST', '/users', { body: { username: cls('dotted'), password: 'pw' } });
    const authData = await app.call('PUT', `/users/${user.body.objectId}`, { sessionToken: user.body.sessionToken, body: { 'authData.facebook': { id: '1' } } });
    expect(authData.body).toEqual({ code: 105, error: 'Invalid field name: authData.facebook.' });
  });
});

describe('item 3: prohibited keywords', () => {
  // The SDK drops `constructor` and `__proto__` keys itself (its isDangerousKey), so REST carries them.
  const raw = (method: string, path: string, json: string, master = false) => app.call(method, path, { master, rawBody: json, headers: { 'content-type': 'application/json' } });

  it('refuses constructor, __proto__ and _bsontype Code at any depth of an object (105)', async () => {
    const className = cls('Keyword');
    const nested = await raw('POST', `/classes/${className}`, '{"a":{"b":[{"c":{"constructor":{"x":1}}}]}}');
    expect(nested.body).toEqual({ code: 105, error: 'Prohibited keyword in request data: {"key":"constructor"}.' });
    const proto = await raw('POST', `/classes/${className}`, '{"list":[{"__proto__":{"x":1}}]}', true);
    expect(proto.body).toEqual({ code: 105, error: 'Prohibited keyword in request data: {"key":"__proto__"}.' });
    const bson = await failure(new Parse.Object(className).save({ a: { _bsontype: 'Code' } }));
    expect(bson).toEqual({ code: 105, message: 'Prohibited keyword in request data: {"key":"_bsontype","value":"Code"}.' });
    const object = await new Parse.Object(className).save({ a: { _bsontype: 'Other' } });
    expect((await raw('PUT', `/classes/${className}/${object.id}`, '{"a.constructor":1}')).body).toMatchObject({ code: 105 });
  });

  it('refuses them in PUT /config too, with the master key', async () => {
    const nested = await raw('PUT', '/config', '{"params":{"settings":{"nested":[{"constructor":1}]}}}', true);
    expect(nested.body).toEqual({ code: 105, error: 'Prohibited keyword in request data: {"key":"constructor"}.' });
    const proto = await raw('PUT', '/config', '{"params":{"p":{"__proto__":{"x":1}}}}', true);
    expect(proto.body).toEqual({ code: 105, error: 'Prohibited keyword in request data: {"key":"__proto__"}.' });
    expect(await failure(Parse.Config.save({ code: { _bsontype: 'Code' } }))).toMatchObject({ code: 105 });
    const config = await Parse.Config.get({ useMasterKey: true });
    expect([config.get('settings'), config.get('p'), config.get('code')]).toEqual([undefined, undefined, undefined]);
  });
});

describe('item 4: /schemas field options, permissions and codes', () => {
  it('fills in default values on create, answers them, and refuses a missing required field (142)', async () => {
    const className = cls('Opt');
    const schema = new Parse.Schema(className);
    schema.addString('s', { required: true, defaultValue: 'hi' }).addNumber('n', { required: true }).addBoolean('b', { defaultValue: false });
    await schema.save();
    const created = await new Parse.Object(className).save({ n: 1 });
    expect([created.get('s'), created.get('b')]).toEqual(['hi', false]);
    expect((await fresh(className, created.id!)).toJSON()).toMatchObject({ s: 'hi', b: false, n: 1 });
    expect(await failure(new Parse.Object(className).save({ s: 'x' }))).toEqual({ code: 142, message: 'n is required' });
    expect(await failure(new Parse.Object(className).save({ n: 1, s: '' }))).toEqual({ code: 142, message: 's is required' });
    created.unset('n');
    expect(await failure(created.save())).toEqual({ code: 142, message: 'n is required' });
  });

  it('checks field options as Parse does (111)', async () => {
    const post = async (fields: unknown) => (await app.call('POST', `/schemas/${cls('Bad')}`, { master: true, body: { fields } })).body;
    expect(await post({ r: { type: 'Relation', targetClass: '_User', required: true } })).toEqual({ code: 111, error: "The 'required' option is not applicable for Relation<_User> (field r)." });
    expect(await post({ r: { type: 'Relation', targetClass: '_User', defaultValue: {} } })).toMatchObject({ code: 111 });
    expect(await post({ n: { type: 'Number', defaultValue: 'x' } })).toEqual({ code: 111, error: expect.stringMatching(/default value; expected Number but got String$/) });
    expect(await post({ p: { type: 'Pointer', targetClass: '_User', defaultValue: { __type: 'Pointer', className: '_Role', objectId: 'x' } } })).toMatchObject({ code: 111 });
    expect(await post({ s: { type: 'String', required: 'yes' } })).toMatchObject({ code: 111 });
    const schema = new Parse.Schema(cls('Bad'));
    schema.addField('d', 'Date', { defaultValue: 'not a date' });
    expect((await failure(schema.save())).code).toBe(111);
  });

  it('validates class-level permission keys (107)', async () => {
    const className = cls('Clp');
    await new Parse.Schema(className).save();
    for (const key of [' *', '12345 ', 'x y']) {
      const schema = new Parse.Schema(className);
      schema.setCLP({ find: { [key]: true } });
      expect(await failure(schema.update())).toEqual({ code: 107, message: `'${key}' is not a valid key for class level permissions` });
    }
    const ok = new Parse.Schema(className);
    ok.setCLP({ find: { '*': true, requiresAuthentication: true, 'role:Admin': true, abc123: true }, protectedFields: { authenticated: [], 'userField:owner': [] } });
    expect((await ok.update()).classLevelPermissions.find).toEqual({ '*': true, requiresAuthentication: true, 'role:Admin': true, abc123: true });
    const pointer = await app.call('PUT', `/schemas/${className}`, { master: true, body: { classLevelPermissions: { readUserFields: ['owner'] } } });
    expect(pointer.body).toMatchObject({ code: 107 });
  });

  it('answers Parse codes: mismatch 103, missing class name 135, built-in field 136, existing field 255', async () => {
    const className = cls('Codes');
    expect((await app.call('POST', `/schemas/${className}`, { master: true, body: { className: 'Other' } })).body).toEqual({ code: 103, error: `Class name mismatch between Other and ${className}.` });
    expect((await app.call('POST', '/schemas', { master: true, body: {} })).body).toMatchObject({ code: 135 });
    expect((await app.call('POST', `/schemas/${className}`, { master: true, body: { fields: { objectId: { type: 'String' } } } })).body).toEqual({ code: 136, error: 'field objectId cannot be added' });
    expect((await app.call('POST', `/schemas/${className}`, { master: true, body: { fields: { p: { type: 'Pointer' } } } })).body).toMatchObject({ code: 135 });
    await app.call('POST', `/schemas/${className}`, { master: true, body: { fields: { s: { type: 'String' } } } });
    expect((await app.call('PUT', `/schemas/${className}`, { master: true, body: { className: 'Other' } })).body).toMatchObject({ code: 103 });
    expect((await app.call('PUT', `/schemas/${className}`, { master: true, body: { fields: { s: { type: 'Number' } } } })).body).toEqual({ code: 255, error: 'Field s exists, cannot update.' });
    const options = await app.call('PUT', `/schemas/${className}`, { master: true, body: { fields: { s: { type: 'String', defaultValue: 'd' } } } });
    expect(options.body.fields.s).toEqual({ type: 'String', defaultValue: 'd' });
    expect((await app.call('DELETE', '/schemas/1bad', { master: true })).body).toMatchObject({ code: 103 });
  });
});
