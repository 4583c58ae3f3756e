import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: query-where, the where/order compiler. Answers are reduced to the
 * status and the `n` of each result (or the error), so that what `keys` and output formatting do
 * (other groups) does not decide these cases.
 */

/** Status, and the `n` of each result (or the error body). */
const ns = (a: Answer) => ({ status: a.status, body: a.status === 200 && Array.isArray(a.body?.results) ? a.body.results.map((r: any) => r.n) : a.body });

const find = async (api: CaseApi, cls: string, where: unknown, extra: Record<string, unknown> = {}) =>
  ns(await api.call('GET', `/classes/${cls}`, { query: { where, order: 'n', ...extra } }));

const create = async (api: CaseApi, cls: string, body: Record<string, unknown>): Promise<string> =>
  (await api.call('POST', `/classes/${cls}`, { body })).body.objectId;

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const date = (iso: string) => ({ __type: 'Date', iso });
const geo = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });

/** Two children, and parents pointing at each (`child`, `kids`), the first holding the first in `rel`. */
async function family(api: CaseApi) {
  const Child = api.cls('Child');
  const Parent = api.cls('Parent');
  const c1 = await create(api, Child, { name: 'c1' });
  const c2 = await create(api, Child, { name: 'c2' });
  await create(api, Parent, { n: 1, child: pointer(Child, c1), kids: [pointer(Child, c1)], rel: { __op: 'AddRelation', objects: [pointer(Child, c1)] } });
  await create(api, Parent, { n: 2, child: pointer(Child, c2), kids: [pointer(Child, c2)] });
  return { Child, Parent, c1, c2 };
}

export const cases: DiffCase[] = [
  // Item 1: order by Parse.com's internal names of the two dates.
  {
    name: 'order accepts _created_at and _updated_at and their descending forms',
    run: async (api) => {
      const cls = api.cls('Ordered');
      const ids = [];
      for (const n of [1, 2, 3]) ids.push(await create(api, cls, { n }));
      await api.call('PUT', `/classes/${cls}/${ids[0]}`, { body: { touched: true } });
      const sorted = async (order: string) => ns(await api.call('GET', `/classes/${cls}`, { query: { order } }));
      return [await sorted('_created_at'), await sorted('-_created_at'), await sorted('_updated_at'), await sorted('-_updated_at'), await sorted('n,-_created_at')];
    },
  },
  {
    name: '_updated_at keeps its place in a compound order (Parse Server moves it last)',
    run: async (api) => {
      const cls = api.cls('Ordered');
      const ids = [];
      for (const n of [1, 2, 3]) ids.push(await create(api, cls, { n }));
      await api.call('PUT', `/classes/${cls}/${ids[0]}`, { body: { touched: true } });
      return [ns(await api.call('GET', `/classes/${cls}`, { query: { order: '-_updated_at,n' } }))];
    },
    known: {
      reason: 'Parse Server renames _updated_at to updatedAt by deleting and re-adding the sort key, which moves it after the other keys; the order list is followed as written',
      backyard: [{ status: 200, body: [1, 3, 2] }],
    },
  },

  // Item 2: a query on a class that does not exist still checks its where.
  {
    name: 'a missing class still refuses a bad key, a bad $in and a bad $regex',
    run: async (api) => {
      const cls = api.cls('Missing');
      return [
        await find(api, cls, { 'a-b': 1 }),
        await find(api, cls, { $foo: 1 }),
        await find(api, cls, { a: { $in: 3 } }),
        await find(api, cls, { a: { $nin: 'x' } }),
        await find(api, cls, { a: { $containedBy: 'x' } }),
        await find(api, cls, { a: { $regex: 3 } }),
        await find(api, cls, { ACL: 1 }),
        await find(api, cls, { $or: [{ 'b c': 1 }] }),
        await find(api, cls, { a: 1 }),
      ];
    },
  },
  {
    name: 'a missing class refuses an unknown operator (Parse Server on PostgreSQL: 119)',
    run: async (api) => [await find(api, api.cls('Missing'), { a: { $foo: 1 } }), await find(api, api.cls('Missing'), { a: { $foo: 1 } }, { count: 1, limit: 0 })],
    known: {
      reason: 'an unknown operator is an invalid query (102, style.md); Parse Server on PostgreSQL answers 119 "Postgres does not support this query type", and a count-only query of a missing class is not checked at all',
      backyard: [
        { status: 400, body: { code: 102, error: '<error>' } },
        { status: 400, body: { code: 102, error: '<error>' } },
      ],
    },
  },

  // Item 3: dotted keys into arrays.
  {
    name: 'a dotted key with an index reaches into an array of objects',
    run: async (api) => {
      const cls = api.cls('Indexed');
      await create(api, cls, { n: 1, items: [{ value: 1 }, { value: 2 }] });
      await create(api, cls, { n: 2, items: [{ value: 5 }, { value: 7 }] });
      return [
        await find(api, cls, { 'items.1.value': 2 }),
        await find(api, cls, { 'items.1.value': { $gt: 3 } }),
        await find(api, cls, { 'items.0.value': { $lte: 5 } }),
        await find(api, cls, { 'items.0.value': { $ne: 1 } }),
        await find(api, cls, { 'items.0': { value: 5 } }),
      ];
    },
  },
  {
    name: 'a dotted key matches any object of an array (Parse Server on PostgreSQL: nothing)',
    run: async (api) => {
      const cls = api.cls('Senders');
      await create(api, cls, { n: 1, sender: [{ group: 'a' }, { group: 'b' }] });
      await create(api, cls, { n: 2, sender: [{ group: 'c' }] });
      await create(api, cls, { n: 3, sender: [] });
      return [
        await find(api, cls, { 'sender.group': { $in: ['a'] } }),
        await find(api, cls, { 'sender.group': { $in: ['b', 'c'] } }),
        await find(api, cls, { 'sender.group': 'c' }),
        await find(api, cls, { 'sender.group': { $regex: '^[ab]' } }),
        await find(api, cls, { 'sender.group': { $nin: ['a'] } }),
        await find(api, cls, { 'sender.group': { $exists: true } }),
      ];
    },
    known: {
      reason: "Mongo's rule (Parse's reference backend) that a path through an array matches when any element matches; Parse Server on PostgreSQL finds nothing and answers 119 for $nin",
      backyard: [
        { status: 200, body: [1] },
        { status: 200, body: [1, 2] },
        { status: 200, body: [2] },
        { status: 200, body: [1] },
        { status: 200, body: [2, 3] },
        { status: 200, body: [1, 2] },
      ],
    },
  },

  // Item 4: pointers.
  {
    name: 'a pointer field matches a bare objectId string',
    run: async (api) => {
      const { Parent, c1 } = await family(api);
      return [
        await find(api, Parent, { child: { $in: [c1] } }),
        await find(api, Parent, { child: c1 }),
        await find(api, Parent, { child: { $eq: c1 } }),
        await find(api, Parent, { child: { $ne: c1 } }),
        await find(api, Parent, { child: { $nin: [c1] } }),
        await find(api, Parent, { kids: { $in: [c1] } }),
      ];
    },
  },
  {
    name: 'pointers without className match by objectId, also on a relation',
    run: async (api) => {
      const { Parent, c1 } = await family(api);
      return [
        await find(api, Parent, { rel: { $in: [{ __type: 'Pointer', objectId: c1 }] } }),
        await find(api, Parent, { rel: { __type: 'Pointer', objectId: c1 } }),
        await find(api, Parent, { child: { $in: [{ __type: 'Pointer', objectId: c1 }] } }),
      ];
    },
  },
  {
    name: 'a pointer merged with $select or $dontSelect in one constraint',
    run: async (api) => {
      const { Child, Parent, c1, c2 } = await family(api);
      const Group = api.cls('Group');
      await create(api, Group, { one: pointer(Child, c1), members: [pointer(Child, c1)] });
      const sub = { query: { className: Group, where: {} }, key: 'one' };
      return [
        await find(api, Parent, { child: { ...pointer(Child, c1), $dontSelect: sub } }),
        await find(api, Parent, { child: { ...pointer(Child, c2), $dontSelect: sub } }),
        await find(api, Parent, { child: { ...pointer(Child, c1), $select: sub } }),
        await find(api, Parent, { child: { ...pointer(Child, c2), $select: sub } }),
      ];
    },
  },
  {
    name: '$select and $dontSelect whose key holds an array of pointers',
    run: async (api) => {
      const { Child, Parent, c1 } = await family(api);
      const Group = api.cls('Group');
      await create(api, Group, { members: [pointer(Child, c1)], names: ['c2', 'c9'] });
      const sub = (key: string) => ({ query: { className: Group, where: {} }, key });
      const Named = api.cls('Named');
      await create(api, Named, { n: 1, name: 'c1' });
      await create(api, Named, { n: 2, name: 'c2' });
      return [
        await find(api, Parent, { child: { $select: sub('members') } }),
        await find(api, Parent, { child: { $dontSelect: sub('members') } }),
        await find(api, Named, { name: { $select: sub('names') } }),
        await find(api, Named, { name: { $dontSelect: sub('names') } }),
      ];
    },
  },

  // Item 5: $relativeTime.
  {
    name: '$relativeTime in $lt/$gt/$lte/$gte on Date fields',
    run: async (api) => {
      const cls = api.cls('Timed');
      await create(api, cls, { n: 1, d: date('2020-01-01T00:00:00.000Z') });
      await create(api, cls, { n: 2, d: date('2099-01-01T00:00:00.000Z') });
      return [
        await find(api, cls, { d: { $lt: { $relativeTime: 'now' } } }),
        await find(api, cls, { d: { $gt: { $relativeTime: 'in 2 days' } } }),
        await find(api, cls, { d: { $gte: { $relativeTime: '3 hours ago' } } }),
        await find(api, cls, { d: { $lte: { $relativeTime: 'IN 1 YR 2 Wks 3 d 4 hrs 5 mins 6 secs' } } }),
        await find(api, cls, { d: { $lt: { $relativeTime: 'NOW' } } }),
        await find(api, cls, { createdAt: { $gte: { $relativeTime: '1 hour ago' } } }),
        await find(api, cls, { $or: [{ d: { $gt: { $relativeTime: '10 years ago' }, $lt: { $relativeTime: 'in 10 years' } } }] }),
      ];
    },
  },
  {
    name: 'a bad $relativeTime answers 107 with the reason',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Timed');
      await create(api, cls, { n: 1, d: date('2020-01-01T00:00:00.000Z'), s: 'x' });
      const bad = (relativeTime: string) => find(api, cls, { d: { $lt: { $relativeTime: relativeTime } } });
      return [
        await bad('2 days'),
        await bad('in 2 days ago'),
        await bad('in 2'),
        await bad('in 1.5 days'),
        await bad('in 2 fortnights'),
        await bad(' now '),
        await find(api, cls, { s: { $lt: { $relativeTime: 'in 2 days' } } }),
        await find(api, cls, { d: { $ne: { $relativeTime: 'in 2 days' } } }),
        await find(api, cls, { d: { $eq: { $relativeTime: 'in 2 days' } } }),
        await find(api, cls, { d: { $exists: { $relativeTime: 'in 2 days' } } }),
      ];
    },
  },
  {
    name: '$relativeTime on a field the class does not have (Parse Server on PostgreSQL: 500)',
    errorText: true,
    run: async (api) => {
      const cls = api.cls('Timed');
      await create(api, cls, { n: 1 });
      return [
        await find(api, cls, { zz: { $lt: { $relativeTime: 'in 2 days' } } }),
        await find(api, cls, { zz: { $lt: { $relativeTime: 'bad' } } }),
        await find(api, cls, { zz: { $lt: { $relativeTime: 5 } } }),
      ];
    },
    known: {
      reason: 'Parse Server on PostgreSQL fails on a field its schema lacks (and on a $relativeTime that is not a string); the Mongo backend compares as with a Date field',
      backyard: [
        { status: 200, body: [] },
        { status: 400, body: { code: 107, error: "bad $relativeTime (bad) value. Time should either start with 'in' or end with 'ago'" } },
        { status: 400, body: { code: 107, error: '$relativeTime must be a string such as "in 2 days" or "3 hours ago"' } },
      ],
    },
  },

  // Item 6: error codes.
  {
    name: 'malformed $in, $nin, $containedBy and $geoWithin answer 107; $all with an unknown operator finds nothing',
    run: async (api) => {
      const cls = api.cls('Malformed');
      await create(api, cls, { n: 1, tags: ['a', 'b'], loc: geo(1, 1) });
      return [
        await find(api, cls, { tags: { $in: 'a' } }),
        await find(api, cls, { tags: { $in: null } }),
        await find(api, cls, { tags: { $in: { x: 1 } } }),
        await find(api, cls, { tags: { $nin: 'a' } }),
        await find(api, cls, { tags: { $containedBy: { a: 1 } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: [geo(0, 0), geo(0, 5)] } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: { __type: 'Polygon', coordinates: [[0, 0], [5, 0]] } } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: 'x' } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: [1, 2, 3] } } }),
        await find(api, cls, { loc: { $geoWithin: { $centerSphere: [[1, 1]] } } }),
        await find(api, cls, { loc: { $geoWithin: { $centerSphere: [[1, 1], -1] } } }),
        await find(api, cls, { loc: { $geoIntersects: { $point: { x: 1 } } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: [[0, 0], [5, 0], [5, 5]] } } }),
        await find(api, cls, { tags: { $all: [{ $foo: 1 }] } }),
        await find(api, cls, { tags: { $all: ['a', { $foo: 1 }] } }),
        await find(api, cls, { tags: { $all: [{ $regex: 'a', $foo: 1 }] } }),
        await find(api, cls, { n: { $all: [{ $foo: 1 }] } }),
        await find(api, cls, { tags: { $all: ['a', 'b'] } }),
      ];
    },
  },
  {
    name: 'geo corners out of range answer 107 (Parse Server on PostgreSQL: 500)',
    run: async (api) => {
      const cls = api.cls('Malformed');
      await create(api, cls, { n: 1, loc: geo(1, 1) });
      return [
        await find(api, cls, { loc: { $geoWithin: { $polygon: [geo(0, 0), geo(0, 5), geo(95, 5)] } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: [[0, 0], [5, 0], [5, 200]] } } }),
        await find(api, cls, { loc: { $geoWithin: { $polygon: { __type: 'Polygon', coordinates: [[0, 0], [5, 0], [5, 500]] } } } }),
        await find(api, cls, { loc: { $geoWithin: { $centerSphere: [[1, 100], 1] } } }),
        await find(api, cls, { loc: { $geoIntersects: { $point: geo(100, 0) } } }),
      ];
    },
    known: {
      reason: 'a client mistake answers 4xx, never 500 (Parse Server on PostgreSQL lets the SDK throw a TypeError)',
      backyard: Array.from({ length: 5 }, () => ({ status: 400, body: { code: 107, error: '<error>' } })),
    },
  },
  {
    name: '$containedBy and $all that are not arrays answer 107 (Parse Server on PostgreSQL: 119)',
    run: async (api) => {
      const cls = api.cls('Malformed');
      await create(api, cls, { n: 1, tags: ['a'] });
      return [await find(api, cls, { tags: { $containedBy: null } }), await find(api, cls, { tags: { $containedBy: 0 } }), await find(api, cls, { tags: { $all: { x: 1 } } })];
    },
    known: {
      reason: 'as Parse Server on MongoDB answers ("bad $all value"); on PostgreSQL a falsy or non-array value falls through to 119 "not supported"',
      backyard: Array.from({ length: 3 }, () => ({ status: 400, body: { code: 107, error: '<error>' } })),
    },
  },

  // Item 7: redirectClassNameForKey inside sub-queries.
  {
    name: 'redirectClassNameForKey inside $inQuery, $notInQuery, $select and $dontSelect',
    run: async (api) => {
      const Child = api.cls('Child');
      const Parent = api.cls('Parent');
      const Holder = api.cls('Holder');
      const c1 = await create(api, Child, { name: 'c1' });
      const c2 = await create(api, Child, { name: 'c2' });
      const p1 = await create(api, Parent, { n: 1, rel: { __op: 'AddRelation', objects: [pointer(Child, c1)] } });
      await create(api, Holder, { n: 1, child: pointer(Child, c1) });
      await create(api, Holder, { n: 2, child: pointer(Child, c2) });
      const related = { className: Parent, where: { $relatedTo: { object: pointer(Parent, p1), key: 'rel' } }, redirectClassNameForKey: 'rel' };
      return [
        await find(api, Holder, { child: { $inQuery: related } }),
        await find(api, Holder, { child: { $notInQuery: related } }),
        await find(api, Holder, { child: { $select: { query: related, key: 'objectId' } } }),
        await find(api, Holder, { child: { $dontSelect: { query: related, key: 'objectId' } } }),
        await find(api, Holder, { child: { $inQuery: { className: Parent, where: { name: 'c2' }, redirectClassNameForKey: 'rel' } } }),
        await find(api, Holder, { child: { $inQuery: { className: Parent, where: {}, redirectClassNameForKey: 'n' } } }),
        await find(api, Holder, { child: { $inQuery: { className: Parent, where: {}, redirectClassNameForKey: 'nope' } } }),
      ];
    },
  },
  {
    name: '$exists takes any value, truthy for present ("yes", 1) and falsy for missing (0, "")',
    run: async (api) => {
      const cls = api.cls('Present');
      await create(api, cls, { n: 1, a: 1 });
      await create(api, cls, { n: 2 });
      return [
        await find(api, cls, { a: { $exists: 'yes' } }),
        await find(api, cls, { a: { $exists: 1 } }),
        await find(api, cls, { a: { $exists: 0 } }),
        await find(api, cls, { a: { $exists: '' } }),
      ];
    },
  },
];
