/**
 * Parity of the where/order compiler with Parse Server 9.10, through the
 * real Parse JS SDK where it reaches the feature and through REST otherwise. Each test failed before
 * its item was done; the differential cases (test/differential/cases/query-where.ts) compare the same
 * requests with Parse Server itself.
 */
import { Query as MongoQuery } from 'mingo';
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, pointSdkAt, whereQuery, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
let suffix = 0;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'parity-where');
  await pointSdkAt(app);
});
afterAll(async () => {
  await server?.close();
});

/** A class name no other test uses. */
const cls = (base: string) => `${base}${++suffix}`;

const refused = async (promise: Promise<unknown>): Promise<Parse.Error> => {
  try {
    await promise;
  } catch (error) {
    return error as Parse.Error;
  }
  throw new Error('expected the call to be refused');
};

/** The `n` of each object a REST query finds, in order, or the error. */
async function rest(className: string, where: unknown, extra: Record<string, string> = {}) {
  const answer = await app.call('GET', `/classes/${className}${whereQuery(where, { order: 'n', ...extra })}`);
  return answer.status === 200 ? (answer.body.results as Array<{ n: number }>).map((r) => r.n) : { status: answer.status, ...answer.body };
}

const ns = (objects: Parse.Object[]) => objects.map((o) => o.get('n') as number);

describe('1. order by _created_at and _updated_at', () => {
  it('sorts by createdAt and updatedAt under their storage names, both ways', async () => {
    const name = cls('Ordered');
    const objects = [];
    for (const n of [1, 2, 3]) objects.push(await new Parse.Object(name, { n }).save());
    await objects[0]!.save({ touched: true });
    const times = (found: Parse.Object[], key: 'createdAt' | 'updatedAt') => found.map((o) => o[key]!.getTime());
    const sorted = (values: number[], sign: 1 | -1) => [...values].sort((a, b) => sign * (a - b));

    const byCreated = await new Parse.Query(name).ascending('_created_at').find();
    expect(byCreated).toHaveLength(3);
    expect(times(byCreated, 'createdAt')).toEqual(sorted(times(byCreated, 'createdAt'), 1));
    const byCreatedDesc = await new Parse.Query(name).descending('_created_at').find();
    expect(times(byCreatedDesc, 'createdAt')).toEqual(sorted(times(byCreatedDesc, 'createdAt'), -1));
    const byUpdatedDesc = await new Parse.Query(name).descending('_updated_at').find();
    expect(byUpdatedDesc[0]!.id).toBe(objects[0]!.id);
    expect(times(byUpdatedDesc, 'updatedAt')).toEqual(sorted(times(byUpdatedDesc, 'updatedAt'), -1));
    const byUpdated = await new Parse.Query(name).ascending('_updated_at').find();
    expect(byUpdated[2]!.id).toBe(objects[0]!.id);
  });
});

describe('2. a class that does not exist still checks its where', () => {
  it('refuses a bad key through the SDK (105) and answers nothing for a good where', async () => {
    const name = cls('Missing');
    expect((await refused(new Parse.Query(name).equalTo('a-b', 1).find())).code).toBe(105);
    expect((await refused(new Parse.Query(name).ascending('a-b').find())).code).toBe(105);
    expect(await new Parse.Query(name).equalTo('a', 1).find()).toEqual([]);
  });
  it('refuses malformed operators and values over REST (102, 105, 107)', async () => {
    const name = cls('Missing');
    expect(await rest(name, { a: { $in: 3 } })).toMatchObject({ status: 400, code: 107, error: 'bad $in value' });
    expect(await rest(name, { a: { $regex: 3 } })).toMatchObject({ status: 400, code: 102 });
    expect(await rest(name, { a: { $foo: 1 } })).toMatchObject({ status: 400, code: 102 });
    expect(await rest(name, { $foo: 1 })).toMatchObject({ status: 400, code: 105, error: 'Invalid key name: $foo' });
    expect(await rest(name, { ACL: 1 })).toMatchObject({ status: 400, code: 102, error: 'Cannot query on ACL.' });
    expect(await rest(name, { a: { $lt: { $relativeTime: 'soon' } } })).toMatchObject({ status: 400, code: 107 });
  });
});

describe('3. dotted keys reach into arrays of objects', () => {
  const docs = [
    { n: 1, sender: [{ group: 'a' }, { group: 'b', rank: 2 }], items: [{ value: 1 }, { value: 2 }] },
    { n: 2, sender: [{ group: 'c' }, 'loose', { rank: 3 }], items: [{ value: 5 }, { value: 7 }] },
    { n: 3, sender: [], items: [] },
    { n: 4 },
  ];
  let name: string;
  beforeAll(async () => {
    name = cls('Senders');
    await Parse.Object.saveAll(docs.map((d) => new Parse.Object(name, d)));
  });
  const mongo = (where: Record<string, unknown>) =>
    new MongoQuery(where)
      .find(docs)
      .all()
      .map((d) => (d as { n: number }).n);

  it('containedIn, equalTo and contains on a key inside an array of objects', async () => {
    expect(ns(await new Parse.Query(name).containedIn('sender.group', ['a']).ascending('n').find())).toEqual([1]);
    expect(ns(await new Parse.Query(name).containedIn('sender.group', ['b', 'c']).ascending('n').find())).toEqual([1, 2]);
    expect(ns(await new Parse.Query(name).equalTo('sender.group', 'c').find())).toEqual([2]);
    expect(ns(await new Parse.Query(name).contains('sender.group', 'b').find())).toEqual([1]);
    expect(ns(await new Parse.Query(name).greaterThan('sender.rank', 2).find())).toEqual([2]);
    expect(ns(await new Parse.Query(name).exists('sender.rank').ascending('n').find())).toEqual([1, 2]);
    expect(ns(await new Parse.Query(name).doesNotExist('sender.rank').ascending('n').find())).toEqual([3, 4]);
  });
  it('an index picks one element', async () => {
    expect(ns(await new Parse.Query(name).equalTo('items.1.value', 2).find())).toEqual([1]);
    expect(ns(await new Parse.Query(name).greaterThan('items.0.value', 3).find())).toEqual([2]);
  });
  it('answers as Mongo does (mingo), negations and null included', async () => {
    for (const where of [
      { 'sender.group': { $in: ['a', 'c'] } },
      { 'sender.group': { $nin: ['a'] } },
      { 'sender.group': { $ne: 'c' } },
      { 'sender.group': null },
      { 'sender.group': { $exists: false } },
      { 'sender.rank': { $gte: 2 } },
      { 'sender.rank': { $exists: true } },
      { 'sender.group': { $regex: '^[ac]' } },
      { 'sender.group': { $all: ['a', 'b'] } },
      { 'items.1.value': { $lt: 5 } },
    ]) {
      expect(await rest(name, where), JSON.stringify(where)).toEqual(mongo(where));
    }
  });
});

describe('4. pointers', () => {
  let Child: string;
  let Parent: string;
  let c1: Parse.Object;
  let c2: Parse.Object;
  beforeAll(async () => {
    Child = cls('Child');
    Parent = cls('Parent');
    [c1, c2] = await Parse.Object.saveAll([new Parse.Object(Child, { name: 'c1' }), new Parse.Object(Child, { name: 'c2' })]);
    const p1 = new Parse.Object(Parent, { n: 1, child: c1 });
    p1.relation('rel').add(c1);
    await Parse.Object.saveAll([p1, new Parse.Object(Parent, { n: 2, child: c2 })]);
  });

  it('a pointer field matches a bare objectId', async () => {
    expect(ns(await new Parse.Query(Parent).containedIn('child', [c1.id]).find())).toEqual([1]);
    expect(ns(await new Parse.Query(Parent).equalTo('child', c2.id).find())).toEqual([2]);
    expect(ns(await new Parse.Query(Parent).notEqualTo('child', c1.id).find())).toEqual([2]);
    expect(ns(await new Parse.Query(Parent).notContainedIn('child', [c2.id]).find())).toEqual([1]);
  });
  it('a pointer without className matches by objectId, also on a relation', async () => {
    const bare = { __type: 'Pointer', objectId: c1.id };
    expect(await rest(Parent, { rel: { $in: [bare] } })).toEqual([1]);
    expect(await rest(Parent, { child: { $in: [bare] } })).toEqual([1]);
  });
  it('equalTo(pointer) merged with doesNotMatchKeyInQuery / matchesKeyInQuery', async () => {
    const Group = cls('Group');
    await new Parse.Object(Group, { one: c1, members: [c1] }).save();
    const groups = new Parse.Query(Group);
    expect(ns(await new Parse.Query(Parent).equalTo('child', c1).doesNotMatchKeyInQuery('child', 'one', groups).find())).toEqual([]);
    expect(ns(await new Parse.Query(Parent).equalTo('child', c2).doesNotMatchKeyInQuery('child', 'one', groups).find())).toEqual([2]);
    expect(ns(await new Parse.Query(Parent).equalTo('child', c1).matchesKeyInQuery('child', 'one', groups).find())).toEqual([1]);
  });
  it('matchesKeyInQuery whose key holds an array of pointers', async () => {
    const Group = cls('Group');
    await new Parse.Object(Group, { members: [c1] }).save();
    const groups = new Parse.Query(Group);
    expect(ns(await new Parse.Query(Parent).matchesKeyInQuery('child', 'members', groups).find())).toEqual([1]);
    expect(ns(await new Parse.Query(Parent).doesNotMatchKeyInQuery('child', 'members', groups).find())).toEqual([2]);
  });
});

describe('5. $relativeTime', () => {
  let name: string;
  beforeAll(async () => {
    name = cls('Timed');
    await Parse.Object.saveAll([
      new Parse.Object(name, { n: 1, d: new Date('2020-01-01T00:00:00Z'), s: 'x' }),
      new Parse.Object(name, { n: 2, d: new Date('2099-01-01T00:00:00Z') }),
    ]);
  });
  const q = () => new Parse.Query(name).ascending('n');
  const rel = (text: unknown) => ({ $relativeTime: text }) as unknown as Date;

  it('is evaluated in $lt, $lte, $gt and $gte', async () => {
    expect(ns(await q().lessThan('d', rel('now')).find())).toEqual([1]);
    expect(ns(await q().greaterThan('d', rel('in 2 days')).find())).toEqual([2]);
    expect(ns(await q().greaterThanOrEqualTo('d', rel('3 hours ago')).find())).toEqual([2]);
    expect(ns(await q().lessThanOrEqualTo('d', rel('In 1 yr 2 wks 3 d 4 hrs 5 mins 6 secs')).find())).toEqual([1]);
    expect(ns(await q().greaterThan('createdAt', rel('1 hour ago')).find())).toEqual([1, 2]);
  });
  it('is refused with 107 and the reason when bad', async () => {
    const error = async (query: Parse.Query) => {
      const e = await refused(query.find());
      return { code: e.code, message: e.message };
    };
    expect(await error(q().lessThan('d', rel('2 days')))).toEqual({ code: 107, message: "bad $relativeTime (2 days) value. Time should either start with 'in' or end with 'ago'" });
    expect(await error(q().lessThan('d', rel('in 2 days ago')))).toEqual({ code: 107, message: "bad $relativeTime (in 2 days ago) value. Time cannot have both 'in' and 'ago'" });
    expect(await error(q().lessThan('d', rel('in 2')))).toEqual({ code: 107, message: 'bad $relativeTime (in 2) value. Invalid time string. Dangling unit or number.' });
    expect(await error(q().lessThan('d', rel('in 1.5 days')))).toEqual({ code: 107, message: "bad $relativeTime (in 1.5 days) value. '1.5' is not an integer." });
    expect(await error(q().lessThan('d', rel('in 2 fortnights')))).toEqual({ code: 107, message: "bad $relativeTime (in 2 fortnights) value. Invalid interval: 'fortnights'" });
    expect(await error(q().lessThan('d', rel(5)))).toMatchObject({ code: 107 });
    expect(await error(q().lessThan('d', rel('in 1e300 years')))).toMatchObject({ code: 107 });
    expect(await error(q().lessThan('s', rel('in 2 days')))).toEqual({ code: 107, message: '$relativeTime can only be used with Date field' });
    expect(await error(q().notEqualTo('d', rel('in 2 days')))).toEqual({ code: 107, message: '$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators' });
    expect(await error(q().equalTo('d', { $eq: rel('now') }))).toMatchObject({ code: 107 });
  });
});

describe('6. error codes of malformed operators', () => {
  let name: string;
  beforeAll(async () => {
    name = cls('Malformed');
    await new Parse.Object(name, { n: 1, tags: ['a', 'b'], loc: new Parse.GeoPoint(1, 1) }).save();
  });
  const geo = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });

  it('$in, $nin, $containedBy and $all that are not arrays answer 107', async () => {
    expect(await rest(name, { tags: { $in: 'a' } })).toMatchObject({ status: 400, code: 107, error: 'bad $in value' });
    expect(await rest(name, { tags: { $nin: 'a' } })).toMatchObject({ status: 400, code: 107, error: 'bad $nin value' });
    expect(await rest(name, { tags: { $containedBy: { a: 1 } } })).toMatchObject({ status: 400, code: 107, error: 'bad $containedBy: should be an array' });
    expect(await rest(name, { tags: { $all: { a: 1 } } })).toMatchObject({ status: 400, code: 107, error: 'bad $all value' });
  });
  it('$geoWithin.$polygon with fewer than three corners or corners out of range answers 107', async () => {
    expect(await rest(name, { loc: { $geoWithin: { $polygon: [geo(0, 0), geo(0, 5)] } } })).toMatchObject({ status: 400, code: 107 });
    expect(await rest(name, { loc: { $geoWithin: { $polygon: [geo(0, 0), geo(0, 5), geo(95, 5)] } } })).toMatchObject({ status: 400, code: 107 });
    expect(await rest(name, { loc: { $geoWithin: { $polygon: [[0, 0], [5, 0], [5, 200]] } } })).toMatchObject({ status: 400, code: 107 });
    const polygon = new Parse.Polygon([[0, 0], [0, 5], [5, 5]]);
    expect(ns(await new Parse.Query(name).withinPolygon('loc', polygon.coordinates).find())).toEqual([1]);
  });
  it('$all with an unknown operator finds nothing', async () => {
    expect(await rest(name, { tags: { $all: [{ $foo: 1 }] } })).toEqual([]);
    expect(await rest(name, { tags: { $all: ['a', { $foo: 1 }] } })).toEqual([]);
    expect(ns(await new Parse.Query(name).containsAll('tags', ['a', 'b']).find())).toEqual([1]);
  });
});

describe('7. redirectClassNameForKey inside sub-queries', () => {
  it('matchesQuery, doesNotMatchQuery and matchesKeyInQuery with relation.query() of an unfetched parent', async () => {
    const Child = cls('Child');
    const Parent = cls('Parent');
    const Holder = cls('Holder');
    const [c1, c2] = await Parse.Object.saveAll([new Parse.Object(Child, { name: 'c1' }), new Parse.Object(Child, { name: 'c2' })]);
    const parent = new Parse.Object(Parent, { n: 0 });
    parent.relation('rel').add(c1!);
    await parent.save();
    await Parse.Object.saveAll([new Parse.Object(Holder, { n: 1, child: c1 }), new Parse.Object(Holder, { n: 2, child: c2 })]);

    // Without the target class, the SDK queries the parent's class and asks for a redirect.
    const related = () => Parse.Object.extend(Parent).createWithoutData(parent.id).relation('rel').query();
    expect(related().toJSON()).toMatchObject({ redirectClassNameForKey: 'rel' });
    const holders = () => new Parse.Query(Holder).ascending('n');
    expect(ns(await holders().matchesQuery('child', related()).find())).toEqual([1]);
    expect(ns(await holders().doesNotMatchQuery('child', related()).find())).toEqual([2]);
    expect(ns(await holders().matchesKeyInQuery('child', 'objectId', related()).find())).toEqual([1]);
    expect(ns(await holders().doesNotMatchKeyInQuery('child', 'objectId', related()).find())).toEqual([2]);
    expect(ns(await holders().matchesQuery('child', related().equalTo('name', 'c2')).find())).toEqual([]);
  });
});
