import type { Answer, CaseApi, DiffCase } from '../harness.js';

/** Differential cases: objects-schemas: polygons, GeoPoints, field names, dotted keys, keywords, /schemas. */

const geo = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });
const polygon = (coordinates: unknown) => ({ __type: 'Polygon', coordinates });

/** Creates an object with the master key and answers its objectId. */
async function created(api: CaseApi, cls: string, body: Record<string, unknown>): Promise<string> {
  const answer = await api.call('POST', `/classes/${cls}`, { body, master: true });
  if (answer.status !== 201) throw new Error(`create in ${cls} answered ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.objectId;
}

/**
 * A `/schemas` answer without what differs by storage: Parse Server on PostgreSQL leaves out the
 * implicit `_id_` index and adds its default-ACL permission (`ACL`), which Backyard does not keep.
 */
function slim(answer: Answer): Answer {
  if (answer.status !== 200 || !answer.body?.className) return answer;
  const { indexes: _indexes, classLevelPermissions, ...rest } = answer.body;
  const { ACL: _acl, ...clp } = classLevelPermissions ?? {};
  return { status: answer.status, body: { ...rest, classLevelPermissions: clp } };
}

/** POST /schemas/<cls>, slimmed. */
const schema = async (api: CaseApi, cls: string, body: Record<string, unknown>) => slim(await api.call('POST', `/schemas/${cls}`, { master: true, body }));
/** PUT /schemas/<cls>, slimmed. */
const putSchema = async (api: CaseApi, cls: string, body: Record<string, unknown>) => slim(await api.call('PUT', `/schemas/${cls}`, { master: true, body }));

export const cases: DiffCase[] = [
  {
    name: 'polygon: an open ring is closed on save, a closed one is kept, fewer than 3 points answer 107',
    run: async (api) => {
      const cls = api.cls('Area');
      const open = await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[0, 0], [0, 1], [1, 1]]) } });
      const closed = await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[0, 0], [0, 1], [1, 1], [0, 0]]) } });
      return [
        open,
        closed,
        await api.call('GET', `/classes/${cls}/${open.body.objectId}`),
        await api.call('GET', `/classes/${cls}/${closed.body.objectId}`),
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[0, 0], [0, 1]]) } }),
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon('x') } }),
        await api.call('POST', `/classes/${cls}`, { body: { p: { __type: 'Polygon' } } }),
      ];
    },
  },
  {
    name: 'polygon: fewer than 3 distinct vertices answer 107',
    known: {
      reason: 'Parse Server answers 500 (code 1, "GeoJSON: Loop must have at least 3 different vertices") for a client mistake',
      backyard: [{ status: 400, body: { code: 107, error: '<error>' } }, { status: 400, body: { code: 107, error: '<error>' } }],
    },
    run: async (api) => {
      const cls = api.cls('Area');
      return [
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[0, 0], [0, 1], [0, 0]]) } }),
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[0, 0], [0, 1], [0, 1], [0, 0]]) } }),
      ];
    },
  },
  {
    name: 'polygon: points are [latitude, longitude] pairs in range',
    known: {
      reason: 'Parse Server (PostgreSQL) reads the pairs as [longitude, latitude]: it stores latitude 100 and answers 500 for longitude 100; the SDK and the geo queries read [latitude, longitude]',
      backyard: [{ status: 400, body: { code: 111, error: '<error>' } }, { status: 201, body: { objectId: '<id1>', createdAt: '<date>' } }],
    },
    run: async (api) => {
      const cls = api.cls('Area');
      return [
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[100, 10], [100, 20], [120, 20]]) } }),
        await api.call('POST', `/classes/${cls}`, { body: { p: polygon([[10, 100], [20, 100], [20, 120]]) } }),
      ];
    },
  },
  {
    name: 'geopoint: two in one object, or two in a /schemas class, answer 111',
    run: async (api) => {
      const cls = api.cls('Place');
      const withOne = api.cls('PlaceS');
      return [
        await api.call('POST', `/classes/${cls}`, { body: { a: geo(1, 2), b: geo(3, 4) } }),
        await api.call('POST', `/classes/${cls}`, { body: { a: geo(1, 2), nested: { b: geo(3, 4) }, list: [geo(5, 6)] } }),
        await schema(api, api.cls('PlaceT'), { fields: { a: { type: 'GeoPoint' }, b: { type: 'GeoPoint' } } }),
        await schema(api, withOne, { fields: { a: { type: 'GeoPoint' } } }),
        await putSchema(api, withOne, { fields: { b: { type: 'GeoPoint' } } }),
        await putSchema(api, withOne, { fields: { a: { __op: 'Delete' }, b: { type: 'GeoPoint' } } }),
      ];
    },
  },
  {
    name: 'geopoint: a second GeoPoint field through a later object answers 111',
    known: {
      reason: 'Parse Server checks one object at a time there and lets a class reach two GeoPoint fields, which its own /schemas refuses',
      backyard: [{ status: 201, body: { objectId: '<id1>', createdAt: '<date>' } }, { status: 400, body: { code: 111, error: '<error>' } }],
    },
    run: async (api) => {
      const cls = api.cls('Place');
      return [await api.call('POST', `/classes/${cls}`, { body: { a: geo(1, 2) } }), await api.call('POST', `/classes/${cls}`, { body: { b: geo(1, 2) } })];
    },
  },
  {
    name: 'field names: className and length answer 105 in objects and schemas',
    run: async (api) => {
      const cls = api.cls('Named');
      const id = await created(api, cls, { a: 1 });
      return [
        await api.call('POST', `/classes/${cls}`, { body: { className: 'x' } }),
        await api.call('POST', `/classes/${cls}`, { body: { length: 1 } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { className: 'x' } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { length: 2 } }),
        await schema(api, api.cls('NamedS'), { fields: { length: { type: 'Number' } } }),
        await schema(api, api.cls('NamedT'), { fields: { className: { type: 'String' } } }),
        await api.call('POST', `/classes/${cls}`, { body: { o: { length: 1, className: 'x' } } }),
        await api.call('POST', `/classes/${cls}`, { body: { _x: 1 } }),
      ];
    },
  },
  {
    name: 'dotted keys: set, increment, delete and create inside an Object field',
    run: async (api) => {
      const cls = api.cls('Dotted');
      const id = await created(api, cls, { objectField: { foo: 1, n: 5 }, num: 3 });
      const put = (body: Record<string, unknown>) => api.call('PUT', `/classes/${cls}/${id}`, { body });
      return [
        await put({ 'objectField.baz': 50 }),
        await put({ 'objectField.n': { __op: 'Increment', amount: 1 } }),
        await put({ 'objectField.x': { __op: 'Increment', amount: 3 }, 'objectField.y': { __op: 'Increment', amount: 4 } }),
        await put({ 'objectField.foo': { __op: 'Delete' } }),
        await put({ 'objectField.d': { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' } }),
        await put({ 'missing.k': { __op: 'Increment', amount: 2 } }),
        await put({ 'other.k.j': 3 }),
        await put({ 'other.k': null }),
        await put({ num: 4, 'objectField.z': true }),
        await put({ 'num.x': 1 }),
        await api.call('GET', `/classes/${cls}/${id}`),
        await api.call('POST', `/classes/${cls}`, { body: { 'fresh.k': { __op: 'Increment', amount: 2 } } }),
        await api.call('POST', `/classes/${cls}`, { body: { fresh: { z: 1 }, 'fresh.k': 5 } }),
        await api.call('GET', `/classes/${cls}`, { query: { where: { 'fresh.z': 1 }, keys: 'fresh' } }),
        await api.call('GET', `/classes/${cls}`, { query: { where: { 'objectField.baz': 50 }, keys: 'objectField' } }),
      ];
    },
  },
  {
    name: 'dotted keys: a path through a nested object keeps its other keys',
    known: {
      reason: 'Parse Server (PostgreSQL) replaces the nested object with the new key alone, losing x; MongoDB and Backyard keep it',
      backyard: [
        { status: 200, body: { updatedAt: '<date>' } },
        { status: 200, body: { objectId: '<id1>', createdAt: '<date>', updatedAt: '<date>', o: { deep: { x: 1, y: 2 } } } },
      ],
    },
    run: async (api) => {
      const cls = api.cls('Dotted');
      const id = await created(api, cls, { o: { deep: { x: 1 } } });
      return [await api.call('PUT', `/classes/${cls}/${id}`, { body: { 'o.deep.y': 2 } }), await api.call('GET', `/classes/${cls}/${id}`)];
    },
  },
  {
    name: 'dotted keys: Add inside an Object field appends to the array there',
    known: {
      reason: 'Parse Server (PostgreSQL) stores the operation itself ({"__op":"Add",...}) as the value',
      backyard: [
        { status: 200, body: { updatedAt: '<date>', o: { list: [1, 2] } } },
        { status: 200, body: { objectId: '<id1>', createdAt: '<date>', updatedAt: '<date>', o: { list: [1, 2] } } },
      ],
    },
    run: async (api) => {
      const cls = api.cls('Dotted');
      const id = await created(api, cls, { o: { list: [1] } });
      return [await api.call('PUT', `/classes/${cls}/${id}`, { body: { 'o.list': { __op: 'Add', objects: [2] } } }), await api.call('GET', `/classes/${cls}/${id}`)];
    },
  },
  {
    name: 'dotted keys: parts follow the field-name rule, as in queries',
    known: {
      reason: 'Parse Server (PostgreSQL) stores any sub-key ("a-b", "$x", "score\'"); Backyard keeps sub-keys queryable (105), and answers 105 for an array index where Parse Server answers 119 or 111',
      backyard: [400, 400, 400, 400, 400].map((status) => ({ status, body: { code: 105, error: '<error>' } })),
    },
    run: async (api) => {
      const cls = api.cls('Dotted');
      const id = await created(api, cls, { o: { a: 1 }, arr: [1, 2] });
      const put = (body: Record<string, unknown>) => api.call('PUT', `/classes/${cls}/${id}`, { body });
      return [await put({ 'o.a-b': 1 }), await put({ 'o.$x': 1 }), await put({ "o.score'": 1 }), await put({ 'arr.0': 5 }), await put({ 'o.': 1 })];
    },
  },
  {
    name: 'prohibited keywords anywhere in an object body answer 105',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Keyword');
      const id = await created(api, cls, { a: { b: 1 } });
      return [
        await api.call('POST', `/classes/${cls}`, { body: { x: { b: { constructor: { y: 1 } } } } }),
        await api.call('POST', `/classes/${cls}`, { body: JSON.parse('{"list":[{"__proto__":{"polluted":1}}]}') }),
        await api.call('POST', `/classes/${cls}`, { body: { x: { _bsontype: 'Code' } } }),
        await api.call('POST', `/classes/${cls}`, { body: { constructorName: 1 } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { 'a.constructor': 1 } }),
        await api.call('PUT', `/classes/${cls}/${id}`, { body: { a: { deep: [{ z: { constructor: 1 } }] } }, master: true }),
        await api.call('POST', `/classes/${cls}`, { body: { x: { _bsontype: 'X' } } }),
      ];
    },
  },
  {
    name: 'prohibited keywords in PUT /config answer 105',
    errorText: true,
    run: async (api) => {
      const key = api.cls('param');
      const config = (params: unknown) => api.call('PUT', '/config', { master: true, body: { params } });
      return [
        await config({ [key]: { constructor: 1 } }),
        await config(JSON.parse(`{"${key}":{"a":[{"__proto__":1}]}}`)),
        await config({ [key]: { _bsontype: 'Code' } }),
        await config({ constructor: 1 }),
      ];
    },
  },
  {
    name: '/schemas: class names, missing class, field definitions and their codes',
    run: async (api) => {
      const a = api.cls('A');
      const n = (i: number) => api.cls(`S${i}`);
      const fields = (i: number, f: unknown) => schema(api, n(i), { fields: f });
      return [
        await api.call('POST', `/schemas/${a}`, { master: true, body: { className: `${a}x` } }),
        await api.call('POST', '/schemas', { master: true, body: {} }),
        await api.call('GET', `/schemas/${a}`, { master: true }),
        await putSchema(api, a, { fields: { f: { type: 'String' } } }),
        await api.call('DELETE', `/schemas/${a}`, { master: true }),
        await api.call('DELETE', '/schemas/1bad', { master: true }),
        await fields(1, { p: { type: 'Pointer' } }),
        await fields(2, { p: { type: 'Pointer', targetClass: 5 } }),
        await fields(3, { p: { type: 'Pointer', targetClass: '1x' } }),
        await fields(4, { p: { type: 'Foo' } }),
        await fields(5, { p: { type: 5 } }),
        await fields(6, { p: 'String' }),
        await fields(7, { p: { type: 'ACL' } }),
        await fields(8, { p: {} }),
        await fields(9, { objectId: { type: 'String' } }),
        await fields(10, { _x: { type: 'String' } }),
        await schema(api, a, { className: a }),
        await schema(api, a, {}),
        await putSchema(api, a, { className: `${a}x` }),
      ];
    },
  },
  {
    name: '/schemas: required and defaultValue are checked as Parse does',
    run: async (api) => {
      const n = (i: number) => api.cls(`O${i}`);
      const fields = (i: number, f: unknown) => schema(api, n(i), { fields: f });
      return [
        await fields(1, { r: { type: 'Relation', targetClass: '_User', required: true } }),
        await fields(2, { r: { type: 'Relation', targetClass: '_User', defaultValue: { __type: 'Relation', className: '_User' } } }),
        await fields(3, { n: { type: 'Number', defaultValue: 'x' } }),
        await fields(4, { p: { type: 'Pointer', targetClass: '_User', defaultValue: { __type: 'Pointer', className: '_Role', objectId: 'x' } } }),
        await fields(5, { d: { type: 'Date', defaultValue: '2020-01-01' } }),
        await fields(6, {
          a: { type: 'Array', defaultValue: [1] },
          o: { type: 'Object', defaultValue: { a: 1 } },
          s: { type: 'String', required: true, defaultValue: 'hi' },
          n: { type: 'Number', required: true },
          b: { type: 'Boolean', defaultValue: false },
          p: { type: 'Pointer', targetClass: '_User', defaultValue: { __type: 'Pointer', className: '_User', objectId: 'abc' } },
        }),
      ];
    },
  },
  {
    name: '/schemas: required and defaultValue that Parse Server accepts without checking are refused',
    known: {
      reason: 'Parse Server stores required: "yes" and a Date default with iso "bad", and answers 500 for defaultValue null',
      backyard: [400, 400, 400].map((status) => ({ status, body: { code: 111, error: '<error>' } })),
    },
    run: async (api) => [
      await schema(api, api.cls('Q1'), { fields: { s: { type: 'String', required: 'yes' } } }),
      await schema(api, api.cls('Q2'), { fields: { d: { type: 'Date', defaultValue: { __type: 'Date', iso: 'bad' } } } }),
      await schema(api, api.cls('Q3'), { fields: { n: { type: 'Number', defaultValue: null } } }),
    ],
  },
  {
    name: 'defaults are filled in and answered on create; required fields are refused with 142',
    run: async (api) => {
      const cls = api.cls('Opt');
      await schema(api, cls, {
        fields: {
          a: { type: 'Array', defaultValue: [1] },
          o: { type: 'Object', defaultValue: { a: 1 } },
          s: { type: 'String', required: true, defaultValue: 'hi' },
          n: { type: 'Number', required: true },
          b: { type: 'Boolean', defaultValue: false },
        },
      });
      const first = await api.call('POST', `/classes/${cls}`, { body: { n: 1 } });
      const put = (body: Record<string, unknown>) => api.call('PUT', `/classes/${cls}/${first.body.objectId}`, { body });
      return [
        await api.call('POST', `/classes/${cls}`, { body: {} }),
        first,
        await api.call('POST', `/classes/${cls}`, { body: { n: null } }),
        await api.call('POST', `/classes/${cls}`, { body: { n: { __op: 'Delete' } } }),
        await api.call('POST', `/classes/${cls}`, { body: { n: { __op: 'Increment', amount: 1 }, b: true } }),
        await api.call('POST', `/classes/${cls}`, { body: { n: 1, s: '' } }),
        await api.call('POST', `/classes/${cls}`, { body: { n: '' } }),
        await api.call('GET', `/classes/${cls}/${first.body.objectId}`),
        await put({ n: null }),
        await put({ n: { __op: 'Delete' } }),
        await put({ s: '' }),
        await put({ n: 2, a: { __op: 'Delete' } }),
        await api.call('GET', `/classes/${cls}/${first.body.objectId}`),
      ];
    },
  },
  {
    name: '/schemas PUT: field options change, other types and deletes answer 255 or 136',
    run: async (api) => {
      const cls = api.cls('Put');
      const put = (body: Record<string, unknown>) => putSchema(api, cls, body);
      return [
        await schema(api, cls, { fields: { s: { type: 'String' }, n: { type: 'Number', required: true } } }),
        await put({ fields: { s: { type: 'String', required: true, defaultValue: 'd' } } }),
        await put({ fields: { s: { type: 'Number' } } }),
        await put({ fields: { x: { __op: 'Delete' } } }),
        await put({ fields: { objectId: { __op: 'Delete' } } }),
        await put({ fields: { x: { type: 'Number', defaultValue: 's' } } }),
        await put({ fields: { x: { type: 'Relation', targetClass: '_User', required: true } } }),
        await put({ fields: { n: { __op: 'Delete' }, m: { type: 'Boolean' } } }),
        await api.call('POST', `/classes/${cls}`, { body: { m: true } }),
      ];
    },
  },
  {
    name: '/schemas: class-level permission keys and values',
    run: async (api) => {
      const cls = api.cls('Clp');
      const clp = (classLevelPermissions: unknown) => putSchema(api, cls, { classLevelPermissions });
      return [
        await schema(api, cls, {}),
        await clp({ find: { ' *': true } }),
        await clp({ find: { '12345 ': true } }),
        await clp({ get: { 'x y': true } }),
        await clp({ find: { '*': false } }),
        await clp({ find: true }),
        await clp({ find: null }),
        await clp({ foo: {} }),
        await clp({ protectedFields: { 'x y': [] } }),
        await clp({ protectedFields: { '*': 'a' } }),
        await clp('x'),
        await clp(null),
      ];
    },
  },
  {
    name: '/schemas: permissions given replace them all; an action left out is closed to clients, null reopens',
    run: async (api) => {
      const cls = api.cls('Guarded');
      const set = await schema(api, cls, { fields: { name: { type: 'String' } }, classLevelPermissions: { find: { '*': true }, protectedFields: { '*': ['name'] } } });
      await created(api, cls, { name: 'a' });
      const found = await api.call('GET', `/classes/${cls}`);
      const refused = await api.call('POST', `/classes/${cls}`, { body: { name: 'b' } });
      const reopened = await putSchema(api, cls, { classLevelPermissions: null });
      const allowed = await api.call('POST', `/classes/${cls}`, { body: { name: 'c' } });
      return [set, found, refused, reopened, allowed.status];
    },
  },
  {
    name: '/schemas: the CLP ACL is the default ACL of new objects, currentUser their creator; bad entries answer 107',
    run: async (api) => {
      const cls = api.cls('Defaulted');
      const open = { '*': true };
      const set = await schema(api, cls, {
        fields: { name: { type: 'String' } },
        classLevelPermissions: { find: open, get: open, create: open, update: open, ACL: { '*': { read: true }, currentUser: { read: true, write: true } } },
      });
      const username = api.cls('maker').toLowerCase();
      const user = await api.call('POST', '/users', { body: { username, password: 'p4ss' } });
      const mine = await api.call('POST', `/classes/${cls}`, { body: { name: 'mine' }, sessionToken: user.body.sessionToken });
      const anonymous = await api.call('POST', `/classes/${cls}`, { body: { name: 'anonymous' } });
      const given = await api.call('POST', `/classes/${cls}`, { body: { name: 'given', ACL: { '*': { read: true, write: true } } } });
      const read = async (id: string) => (await api.call('GET', `/classes/${cls}/${id}`, { master: true })).body.ACL;
      const clp = (classLevelPermissions: unknown) => putSchema(api, cls, { classLevelPermissions });
      return [
        set,
        // The creator's id, so that the mask names it where it is an ACL key.
        { objectId: user.body.objectId },
        mine,
        anonymous,
        await read(mine.body.objectId),
        await read(anonymous.body.objectId),
        await read(given.body.objectId),
        await clp({ ACL: { '*': true } }),
        await clp({ ACL: { '*': { read: 'yes' } } }),
        await clp({ ACL: { '*': { delete: true } } }),
        await clp({ ACL: { 'x y': { read: true } } }),
      ];
    },
  },
  {
    name: '/schemas: protectedFields may name only fields of the class, never objectId, createdAt, updatedAt or ACL',
    run: async (api) => {
      const cls = api.cls('Hidden');
      await schema(api, cls, { fields: { secret: { type: 'String' } } });
      const clp = (protectedFields: unknown) => putSchema(api, cls, { classLevelPermissions: { find: { '*': true }, protectedFields } });
      return [
        await clp({ '*': ['nope'] }),
        await clp({ '*': ['createdAt'] }),
        await clp({ '*': ['ACL'] }),
        await clp({ '*': ['secret'] }),
        await putSchema(api, cls, { fields: { extra: { type: 'Number' } }, classLevelPermissions: { protectedFields: { '*': ['extra'] } } }),
        await schema(api, api.cls('Fresh'), { fields: { a: { type: 'String' } }, classLevelPermissions: { protectedFields: { '*': ['a'], 'role:x': ['b'] } } }),
      ];
    },
  },
];
