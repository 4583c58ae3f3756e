/**
 * Acceptance tests: the data API driven by the real Parse JS SDK (`parse/node` 8.6), unchanged.
 * Users, sessions, roles and files have their own suites.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Parse from 'parse/node';
import { startTestServer, type TestServer } from './helpers/server.js';
import { createTestApp, type TestApp } from './helpers/dataApp.js';

let server: TestServer;
let app: TestApp;
let aggregateAvailable = false;

/** Every HTTP request the SDK (or the test) made, with its parsed body and the status it got. */
const sent: Array<{ url: string; body: any; status: number }> = [];
let checked = 0;
const realFetch = globalThis.fetch;

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'sdk-tests');
  globalThis.fetch = async (input: any, init?: any) => {
    const response = await realFetch(input, init);
    let body: unknown;
    try {
      body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
      body = init.body;
    }
    sent.push({ url: String(input instanceof Request ? input.url : input), body, status: response.status });
    return response;
  };
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  Parse.serverURL = app.apiURL;
  // A 5xx is always a Backyard bug: fail at once instead of waiting out the SDK's five retries.
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
  const probe = await app.call('GET', '/aggregate/X', { master: true });
  aggregateAvailable = !(probe.status === 404 && probe.body?.code === 102 && /No data API endpoint/.test(probe.body?.error));
});
afterEach(() => {
  const failures = sent.slice(checked).filter((r) => r.status >= 500);
  checked = sent.length;
  expect(failures, 'the server answered 5xx').toEqual([]);
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server?.close();
});

/** The requests made while `fn` runs. */
async function recording(fn: () => Promise<unknown>) {
  const start = sent.length;
  await fn();
  return sent.slice(start);
}

const countRaw = async (className: string) =>
  (await app.call('GET', `/classes/${className}?count=1&limit=0`, { master: true })).body.count as number;

const refused = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as Parse.Error;
  }
  throw new Error('expected the call to be refused');
};

describe('objects', () => {
  it('saves every type and reads each back as the same value', async () => {
    const owner = await new Parse.Object('Owner', { name: 'Ada' }).save();
    const when = new Date('2024-03-05T06:07:08.009Z');
    const polygon = new Parse.Polygon([[0, 0], [0, 1], [1, 1], [1, 0]]);
    const thing = new Parse.Object('Thing');
    thing.set({
      text: 'héllo',
      num: 42.5,
      flag: false,
      when,
      nested: { a: { b: [1, { c: 'd' }], e: null }, f: 'g' },
      mixed: [1, 'two', true, null, { k: 'v' }, [3, 4], when],
      owner,
      at: new Parse.GeoPoint(48.8566, 2.3522),
      area: polygon,
      raw: { __type: 'Bytes', base64: 'aGVsbG8gd29ybGQ=' },
    });
    await thing.save();
    expect(thing.id).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(thing.createdAt).toBeInstanceOf(Date);
    expect(thing.updatedAt?.getTime()).toBe(thing.createdAt!.getTime());

    const read = await new Parse.Query('Thing').get(thing.id);
    expect(read.get('text')).toBe('héllo');
    expect(read.get('num')).toBe(42.5);
    expect(read.get('flag')).toBe(false);
    expect(read.get('when')).toEqual(when);
    expect(read.get('nested')).toEqual({ a: { b: [1, { c: 'd' }], e: null }, f: 'g' });
    expect(read.get('mixed')).toEqual([1, 'two', true, null, { k: 'v' }, [3, 4], when]);
    expect(read.get('owner')).toBeInstanceOf(Parse.Object);
    expect(read.get('owner').className).toBe('Owner');
    expect(read.get('owner').id).toBe(owner.id);
    expect(read.get('at')).toBeInstanceOf(Parse.GeoPoint);
    expect([read.get('at').latitude, read.get('at').longitude]).toEqual([48.8566, 2.3522]);
    expect(read.get('area')).toBeInstanceOf(Parse.Polygon);
    // The ring comes back closed, as Parse Server closes it on save.
    expect(read.get('area').coordinates).toEqual([...polygon.coordinates, polygon.coordinates[0]]);
    expect(read.get('raw')).toEqual({ __type: 'Bytes', base64: 'aGVsbG8gd29ybGQ=' });
    expect(read.createdAt).toEqual(thing.createdAt);

    const fetched = await Parse.Object.extend('Thing').createWithoutData(thing.id).fetch();
    expect(fetched.get('text')).toBe('héllo');
  });

  it('updates with set, unset, increment, add, addUnique and remove; destroys', async () => {
    const obj = await new Parse.Object('Counter', { title: 'a', gone: 'x', n: 1, list: ['a'], uniq: ['a'], rm: ['a', 'b', 'a', 'c'] }).save();
    const created = obj.createdAt!;
    await new Promise((resolve) => setTimeout(resolve, 5));
    obj.set('title', 'b');
    obj.unset('gone');
    obj.increment('n', 5);
    obj.add('list', 'a');
    obj.addUnique('uniq', 'a');
    obj.addUnique('uniq', 'b');
    obj.remove('rm', 'a');
    await obj.save();
    expect(obj.updatedAt).toBeInstanceOf(Date);
    expect(obj.updatedAt!.getTime()).toBeGreaterThan(created.getTime());
    expect(obj.get('n')).toBe(6);

    const read = await new Parse.Query('Counter').get(obj.id);
    expect(read.get('title')).toBe('b');
    expect(read.has('gone')).toBe(false);
    expect(read.get('n')).toBe(6);
    expect(read.get('list')).toEqual(['a', 'a']);
    expect(read.get('uniq')).toEqual(['a', 'b']);
    expect(read.get('rm')).toEqual(['b', 'c']);
    expect(read.createdAt).toEqual(created);
    expect(read.updatedAt).toEqual(obj.updatedAt);

    obj.increment('n', -10);
    await obj.save();
    expect((await new Parse.Query('Counter').get(obj.id)).get('n')).toBe(-4);

    await obj.destroy();
    expect((await refused(new Parse.Query('Counter').get(obj.id))).code).toBe(Parse.Error.OBJECT_NOT_FOUND);
    expect(await new Parse.Query('Counter').count()).toBe(0);
  });

  it('saveAll of 45 objects and destroyAll go to /batch in chunks of 20', async () => {
    const objects = Array.from({ length: 45 }, (_, i) => new Parse.Object('Bulk', { i }));
    const saves = await recording(() => Parse.Object.saveAll(objects));
    const batches = saves.filter((r) => r.url.endsWith('/batch'));
    expect(batches.map((r) => r.body.requests.length)).toEqual([20, 20, 5]);
    expect(batches[0]!.body.requests[0]).toMatchObject({ method: 'POST', path: '/data/classes/Bulk' });
    expect(new Set(objects.map((o) => o.id)).size).toBe(45);
    expect(objects.every((o) => /^[A-Za-z0-9]{10}$/.test(o.id) && o.createdAt instanceof Date)).toBe(true);
    expect(await new Parse.Query('Bulk').count()).toBe(45);
    const stored = await new Parse.Query('Bulk').ascending('i').limit(100).find();
    expect(stored.map((o) => o.get('i'))).toEqual(Array.from({ length: 45 }, (_, i) => i));
    expect(stored.map((o) => o.id)).toEqual(objects.map((o) => o.id));

    const deletes = await recording(() => Parse.Object.destroyAll(objects));
    expect(deletes.filter((r) => r.url.endsWith('/batch')).map((r) => r.body.requests.length)).toEqual([20, 20, 5]);
    expect(await new Parse.Query('Bulk').count()).toBe(0);
  });

  it('saveAll with one wrong-typed object rejects with 111 and keeps the others of its batch', async () => {
    await new Parse.Object('Scored', { score: 1 }).save();
    const objects = [1, 2, 'three', 4, 5].map((score) => new Parse.Object('Scored', { score }));
    const error = await refused(Parse.Object.saveAll(objects));
    expect(error).toBeInstanceOf(Parse.Error);
    expect(error.code).toBe(Parse.Error.INCORRECT_TYPE);
    expect(objects.map((o) => Boolean(o.id))).toEqual([true, true, false, true, true]);
    expect(await countRaw('Scored')).toBe(5);
    const scores = (await new Parse.Query('Scored').find()).map((o) => o.get('score')).sort();
    expect(scores).toEqual([1, 1, 2, 4, 5]);
  });

  it('saveAll updates existing objects, fetchAll reads them, and save cascades to an unsaved child', async () => {
    const objects = await Parse.Object.saveAll([1, 2, 3].map((v) => new Parse.Object('Edited', { v })));
    objects.forEach((o) => o.increment('v', 10));
    objects[0]!.increment('fresh');
    const batch = await recording(() => Parse.Object.saveAll(objects));
    expect(batch.at(-1)!.body.requests.map((r: any) => r.method)).toEqual(['PUT', 'PUT', 'PUT']);
    const copies = objects.map((o) => Parse.Object.extend('Edited').createWithoutData(o.id) as Parse.Object);
    await Parse.Object.fetchAll(copies);
    expect(copies.map((o) => o.get('v'))).toEqual([11, 12, 13]);
    expect(copies[0]!.get('fresh')).toBe(1);

    const parent = await new Parse.Object('Parent', { child: new Parse.Object('Child', { x: 1 }) }).save();
    expect(parent.get('child').id).toMatch(/^[A-Za-z0-9]{10}$/);
    const child = await new Parse.Query('Child').get(parent.get('child').id);
    expect(child.get('x')).toBe(1);
    expect((await new Parse.Query('Parent').include('child').get(parent.id)).get('child').get('x')).toBe(1);
  });

  it('an object with a public-read ACL saved with the master key can be read but not changed by a client', async () => {
    const acl = new Parse.ACL();
    acl.setPublicReadAccess(true);
    const guarded = new Parse.Object('Guarded', { v: 1 });
    guarded.setACL(acl);
    await guarded.save(null, { useMasterKey: true });

    const read = await new Parse.Query('Guarded').get(guarded.id);
    expect(read.get('v')).toBe(1);
    expect(read.getACL()?.getPublicReadAccess()).toBe(true);
    expect(read.getACL()?.getPublicWriteAccess()).toBe(false);
    read.set('v', 2);
    expect((await refused(read.save())).code).toBe(Parse.Error.OBJECT_NOT_FOUND);
    expect((await refused(read.destroy())).code).toBe(Parse.Error.OBJECT_NOT_FOUND);
    const again = await new Parse.Query('Guarded').get(guarded.id, { useMasterKey: true });
    expect(again.get('v')).toBe(1);
  });
});

interface Row {
  name: string;
  n: number;
  even: boolean;
  tags: string[];
  color: string;
  when: Date;
  owner: 'Ann' | 'Bob';
  note?: string;
  description: string;
  label: string;
}
const NAMES = ['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'honeydew', 'kiwi', 'lemon'];
const TAGS = [['red', 'sweet'], ['green'], ['yellow', 'sweet', 'sour']];
const COLORS = ['red', 'green', 'yellow'];
const ROWS: Row[] = NAMES.map((name, n) => ({
  name,
  n,
  even: n % 2 === 0,
  tags: TAGS[n % 3]!,
  color: COLORS[n % 3]!,
  when: new Date(Date.UTC(2024, 0, 1 + n)),
  owner: n < 5 ? 'Ann' : 'Bob',
  ...(n % 2 === 0 ? { note: `note ${n}` } : {}),
  description: n % 4 === 0 ? `A crunchy fruit called ${name}` : `A soft fruit: ${name}`,
  label: `${name} (${n})`,
}));

describe('queries', () => {
  const fruits = new Map<string, Parse.Object>();
  const owners: Record<string, Parse.Object> = {};
  const Fruit = () => new Parse.Query('Fruit');
  const namesOf = (objects: Parse.Object[]) => objects.map((o) => o.get('name') as string);
  const expectNames = async (query: Parse.Query, predicate: (r: Row) => boolean) => {
    const expected = ROWS.filter(predicate).map((r) => r.name).sort();
    expect(namesOf(await query.find()).sort()).toEqual(expected);
    expect(await query.count()).toBe(expected.length);
  };

  beforeAll(async () => {
    const teams = await Parse.Object.saveAll([new Parse.Object('Team', { name: 'Red team' }), new Parse.Object('Team', { name: 'Blue team' })]);
    owners.Ann = new Parse.Object('FruitOwner', { name: 'Ann', team: teams[0] });
    owners.Bob = new Parse.Object('FruitOwner', { name: 'Bob', team: teams[1] });
    await Parse.Object.saveAll([owners.Ann, owners.Bob]);
    const objects = ROWS.map(({ owner, color, ...row }) => new Parse.Object('Fruit', { ...row, color, meta: { color, size: { w: row.n * 10 } }, owner: owners[owner] }));
    await Parse.Object.saveAll(objects);
    for (const o of objects) fruits.set(o.get('name'), o);
    await Parse.Object.saveAll(['apple', 'kiwi', 'mango'].map((fruitName) => new Parse.Object('Favorite', { fruitName })));
  });

  it.each<[string, (q: Parse.Query) => unknown, (r: Row) => boolean]>([
    ['equalTo', (q) => q.equalTo('name', 'fig'), (r) => r.name === 'fig'],
    ['equalTo a Date', (q) => q.equalTo('when', new Date(Date.UTC(2024, 0, 4))), (r) => r.n === 3],
    ['notEqualTo', (q) => q.notEqualTo('color', 'red'), (r) => r.color !== 'red'],
    ['notEqualTo matches a missing field', (q) => q.notEqualTo('note', 'note 0'), (r) => r.note !== 'note 0'],
    ['lessThan', (q) => q.lessThan('n', 3), (r) => r.n < 3],
    ['lessThanOrEqualTo a Date', (q) => q.lessThanOrEqualTo('when', new Date(Date.UTC(2024, 0, 3))), (r) => r.n <= 2],
    ['greaterThan', (q) => q.greaterThan('n', 6), (r) => r.n > 6],
    ['greaterThanOrEqualTo + lessThan', (q) => q.greaterThanOrEqualTo('n', 6).lessThan('n', 8), (r) => r.n === 6 || r.n === 7],
    ['containedIn', (q) => q.containedIn('name', ['fig', 'kiwi', 'mango']), (r) => ['fig', 'kiwi'].includes(r.name)],
    ['notContainedIn', (q) => q.notContainedIn('n', [0, 1, 2]), (r) => r.n > 2],
    ['equalTo on an array field (contains)', (q) => q.equalTo('tags', 'sweet'), (r) => r.tags.includes('sweet')],
    ['containsAll', (q) => q.containsAll('tags', ['sweet', 'sour']), (r) => r.tags.includes('sour')],
    ['containsAllStartingWith', (q) => q.containsAllStartingWith('tags', ['sw', 're']), (r) => r.tags.includes('red')],
    ['containedBy', (q) => q.containedBy('tags', ['red', 'sweet', 'green']), (r) => r.n % 3 !== 2],
    ['exists', (q) => q.exists('note'), (r) => r.note !== undefined],
    ['doesNotExist', (q) => q.doesNotExist('note'), (r) => r.note === undefined],
    ['matches with i', (q) => q.matches('name', '^B', 'i'), (r) => r.name === 'banana'],
    ['matches with x', (q) => q.matches('name', 'e r r  # comment', 'x'), (r) => r.name.includes('err')],
    ['matches a RegExp', (q) => q.matches('name', /^[a-c]/), (r) => r.name < 'd'],
    ['startsWith', (q) => q.startsWith('label', 'fig ('), (r) => r.name === 'fig'],
    ['endsWith', (q) => q.endsWith('label', '(9)'), (r) => r.n === 9],
    ['contains', (q) => q.contains('label', 'y ('), (r) => r.label.includes('y (')],
    ['contains a regex metacharacter', (q) => q.contains('name', '.'), () => false],
    ['fullText', (q) => q.fullText('description', 'crunchy'), (r) => r.n % 4 === 0],
    ['fullText is case-insensitive by default', (q) => q.fullText('description', 'CRUNCHY'), (r) => r.n % 4 === 0],
    ['fullText caseSensitive', (q) => q.fullText('description', 'Crunchy', { caseSensitive: true }), () => false],
    ['dot notation into an Object field', (q) => q.equalTo('meta.color', 'green'), (r) => r.color === 'green'],
    ['dot notation two levels deep', (q) => q.greaterThan('meta.size.w', 60), (r) => r.n > 6],
    ['containedIn Parse.Objects', (q) => q.containedIn('owner', [owners.Ann]), (r) => r.owner === 'Ann'],
    ['pointer equalTo a Parse.Object', (q) => q.equalTo('owner', owners.Bob), (r) => r.owner === 'Bob'],
    ['matchesQuery', (q) => q.matchesQuery('owner', new Parse.Query('FruitOwner').equalTo('name', 'Ann')), (r) => r.owner === 'Ann'],
    ['doesNotMatchQuery', (q) => q.doesNotMatchQuery('owner', new Parse.Query('FruitOwner').equalTo('name', 'Ann')), (r) => r.owner === 'Bob'],
    ['matchesKeyInQuery', (q) => q.matchesKeyInQuery('name', 'fruitName', new Parse.Query('Favorite')), (r) => ['apple', 'kiwi'].includes(r.name)],
    ['doesNotMatchKeyInQuery', (q) => q.doesNotMatchKeyInQuery('name', 'fruitName', new Parse.Query('Favorite')), (r) => !['apple', 'kiwi'].includes(r.name)],
  ])('%s', async (_name, constrain, predicate) => {
    const query = Fruit();
    constrain(query);
    await expectNames(query, predicate);
  });

  it('or, and, nor', async () => {
    await expectNames(Parse.Query.or(Fruit().lessThan('n', 2), Fruit().equalTo('name', 'lemon')), (r) => r.n < 2 || r.name === 'lemon');
    await expectNames(Parse.Query.and(Fruit().equalTo('even', true), Fruit().equalTo('tags', 'sweet')), (r) => r.even && r.tags.includes('sweet'));
    await expectNames(Parse.Query.nor(Fruit().equalTo('even', true), Fruit().greaterThan('n', 6)), (r) => !r.even && r.n <= 6);
    const mixed = Parse.Query.or(Fruit().equalTo('color', 'red'), Fruit().equalTo('color', 'green'));
    mixed.greaterThan('n', 4);
    await expectNames(mixed, (r) => r.color !== 'yellow' && r.n > 4);
  });

  it('sends contains/startsWith/endsWith quoted with \\Q..\\E, and matches a literal \\E', async () => {
    const requests = await recording(() => Fruit().contains('label', '(3)').find());
    expect(requests.at(-1)!.body.where).toEqual({ label: { $regex: '\\Q(3)\\E' } });
    await Parse.Object.saveAll(['a\\Eb', 'aEb', 'a\\b', 'xa\\Ebx'].map((s) => new Parse.Object('Weird', { s })));
    const found = await new Parse.Query('Weird').contains('s', 'a\\Eb').find();
    expect(found.map((o) => o.get('s')).sort()).toEqual(['a\\Eb', 'xa\\Ebx']);
    expect((await new Parse.Query('Weird').startsWith('s', 'a\\').find()).map((o) => o.get('s')).sort()).toEqual(['a\\Eb', 'a\\b']);
  });

  it('orders by several keys: ascending, descending, addAscending, addDescending', async () => {
    const byColorThenN = [...ROWS].sort((a, b) => a.color.localeCompare(b.color) || a.n - b.n).map((r) => r.name);
    expect(namesOf(await Fruit().ascending('color', 'n').find())).toEqual(byColorThenN);
    expect(namesOf(await Fruit().ascending('color').addAscending('n').find())).toEqual(byColorThenN);
    const evenDescThenNDesc = [...ROWS].sort((a, b) => Number(b.even) - Number(a.even) || b.n - a.n).map((r) => r.name);
    expect(namesOf(await Fruit().descending('even').addDescending('n').find())).toEqual(evenDescThenNDesc);
    const colorDescThenNAsc = [...ROWS].sort((a, b) => b.color.localeCompare(a.color) || a.n - b.n).map((r) => r.name);
    expect(namesOf(await Fruit().descending('color').addAscending('n').find())).toEqual(colorDescThenNAsc);
    expect(namesOf(await Fruit().descending('when').find())).toEqual([...NAMES].reverse());
  });

  it('limit, skip, withCount, count, first, get', async () => {
    expect(namesOf(await Fruit().ascending('n').skip(3).limit(4).find())).toEqual(NAMES.slice(3, 7));
    expect(await Fruit().limit(0).find()).toEqual([]);
    const page = (await Fruit().ascending('n').limit(2).withCount().find()) as unknown as { results: Parse.Object[]; count: number };
    expect(namesOf(page.results)).toEqual(['apple', 'banana']);
    expect(page.count).toBe(10);
    expect(await Fruit().count()).toBe(10);
    expect(await Fruit().equalTo('even', true).greaterThan('n', 3).count()).toBe(3);
    expect((await Fruit().descending('n').first())?.get('name')).toBe('lemon');
    expect(await Fruit().equalTo('name', 'mango').first()).toBeUndefined();
    const kiwi = await Fruit().get(fruits.get('kiwi')!.id);
    expect(kiwi.get('n')).toBe(8);
    expect((await refused(Fruit().get('nonexisten'))).code).toBe(Parse.Error.OBJECT_NOT_FOUND);
  });

  it('select and exclude', async () => {
    const [selected] = await Fruit().equalTo('n', 2).select('name', 'n').find();
    expect(selected!.id).toBe(fruits.get('cherry')!.id);
    expect(selected!.get('name')).toBe('cherry');
    expect(selected!.get('n')).toBe(2);
    expect(selected!.has('tags')).toBe(false);
    expect(selected!.has('meta')).toBe(false);
    expect(selected!.createdAt).toBeInstanceOf(Date);
    const [dotted] = await Fruit().equalTo('n', 2).select('meta.color').find();
    // Parse Server selects by the top-level field of a dotted key (RestQuery: key.split('.')[0]).
    expect(dotted!.get('meta')).toEqual({ color: 'yellow', size: { w: 20 } });
    expect(dotted!.has('name')).toBe(false);
    const [excluded] = await Fruit().equalTo('n', 2).exclude('tags', 'meta').find();
    expect(excluded!.get('name')).toBe('cherry');
    expect(excluded!.get('color')).toBe('yellow');
    expect(excluded!.has('tags')).toBe(false);
    expect(excluded!.has('meta')).toBe(false);
  });

  it('include replaces pointers, nested with dots', async () => {
    const [plain] = await Fruit().equalTo('name', 'fig').find();
    expect(plain!.get('owner').id).toBe(owners.Bob!.id);
    expect(plain!.get('owner').isDataAvailable()).toBe(false);
    const [withOwner] = await Fruit().equalTo('name', 'fig').include('owner.team').find();
    const owner = withOwner!.get('owner') as Parse.Object;
    expect(owner.get('name')).toBe('Bob');
    expect(owner.get('team').get('name')).toBe('Blue team');
    const [viaGet] = [await Fruit().include('owner').get(fruits.get('apple')!.id)];
    expect(viaGet.get('owner').get('name')).toBe('Ann');
  });

  it('each and eachBatch visit every match once', async () => {
    const seen: string[] = [];
    await Fruit().greaterThan('n', 1).each((o) => {
      seen.push(o.get('name'));
    });
    expect(seen.sort()).toEqual(NAMES.slice(2).sort());
    const batches: number[] = [];
    const ids = new Set<string>();
    await Fruit().eachBatch(
      (objects) => {
        batches.push(objects.length);
        for (const o of objects) ids.add(o.id);
      },
      { batchSize: 3 },
    );
    expect(batches).toEqual([3, 3, 3, 1]);
    expect([...ids].sort()).toEqual([...fruits.values()].map((o) => o.id).sort());
  });

  it('relations: add, query, remove, and a relation query on an object without data', async () => {
    const basket = new Parse.Object('Basket', { label: 'mine' });
    basket.relation('fruits').add(['apple', 'fig', 'kiwi'].map((n) => fruits.get(n)!));
    await basket.save();
    expect(namesOf(await basket.relation('fruits').query().ascending('n').find())).toEqual(['apple', 'fig', 'kiwi']);
    expect(namesOf(await basket.relation('fruits').query().greaterThan('n', 5).find())).toEqual(['kiwi']);
    expect(await basket.relation('fruits').query().count()).toBe(3);

    basket.relation('fruits').remove(fruits.get('fig')!);
    await basket.save();
    const fetched = await new Parse.Query('Basket').get(basket.id);
    expect(namesOf(await fetched.relation('fruits').query().ascending('n').find())).toEqual(['apple', 'kiwi']);
    const bare = Parse.Object.extend('Basket').createWithoutData(basket.id) as Parse.Object;
    expect(namesOf(await bare.relation('fruits').query().ascending('n').find())).toEqual(['apple', 'kiwi']);
  });

  it('distinct (master key, /aggregate)', async (ctx) => {
    if (!aggregateAvailable) ctx.skip();
    expect((await Fruit().distinct('color')).sort()).toEqual(['green', 'red', 'yellow']);
    expect((await Fruit().greaterThan('n', 7).distinct('color')).sort()).toEqual(['red', 'yellow']);
  });
});

describe('counts', () => {
  it('are exact on a brand-new class, with and without constraints', async () => {
    expect(await new Parse.Query('NeverWritten').count()).toBe(0);
    expect(await new Parse.Query('NeverWritten').find()).toEqual([]);
    await Parse.Object.saveAll(Array.from({ length: 7 }, (_, i) => new Parse.Object('FreshCount', { i, odd: i % 2 === 1 })));
    expect(await new Parse.Query('FreshCount').count()).toBe(7);
    expect(await new Parse.Query('FreshCount').equalTo('odd', true).count()).toBe(3);
    expect(await new Parse.Query('FreshCount').greaterThanOrEqualTo('i', 5).count()).toBe(2);
    expect(await new Parse.Query('FreshCount').limit(2).count()).toBe(7);
  });
});

describe('geo queries', () => {
  const PLACES: Array<[string, number, number]> = [
    ['San Francisco', 37.7749, -122.4194],
    ['Oakland', 37.8044, -122.2712],
    ['San Jose', 37.3382, -121.8863],
    ['Sacramento', 38.5816, -121.4944],
    ['Los Angeles', 34.0522, -118.2437],
    ['Portland', 45.5152, -122.6784],
    ['New York', 40.7128, -74.006],
    ['Tokyo', 35.6762, 139.6503],
    ['Sydney', -33.8688, 151.2093],
  ];
  const center = new Parse.GeoPoint(37.7, -122.3);
  /** Great-circle distance in radians (haversine). */
  const radians = (a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }) => {
    const r = Math.PI / 180;
    const h = Math.sin(((b.latitude - a.latitude) * r) / 2) ** 2 + Math.cos(a.latitude * r) * Math.cos(b.latitude * r) * Math.sin(((b.longitude - a.longitude) * r) / 2) ** 2;
    return 2 * Math.asin(Math.sqrt(h));
  };
  const byDistance = PLACES.map(([name, latitude, longitude]) => ({ name, d: radians(center, { latitude, longitude }), latitude, longitude })).sort((a, b) => a.d - b.d);
  const within = (maxRadians: number) => byDistance.filter((p) => p.d <= maxRadians).map((p) => p.name);
  const names = (objects: Parse.Object[]) => objects.map((o) => o.get('name') as string);
  const Place = () => new Parse.Query('Place');
  const corners: Array<[number, number]> = [[39, -123.5], [39, -121], [33, -116], [33, -119.5]];

  beforeAll(async () => {
    await Parse.Object.saveAll(PLACES.map(([name, lat, lng]) => new Parse.Object('Place', { name, at: new Parse.GeoPoint(lat, lng) })));
    await Parse.Object.saveAll([
      new Parse.Object('Zone', { name: 'Bay', area: new Parse.Polygon([[38.2, -123], [38.2, -121.5], [37, -121.5], [37, -123]]) }),
      new Parse.Object('Zone', { name: 'West', area: new Parse.Polygon(corners) }),
      new Parse.Object('Zone', { name: 'Japan', area: new Parse.Polygon([[36, 139], [36, 141], [35, 141], [35, 139]]) }),
    ]);
  });

  it('near sorts every GeoPoint by distance; with limit and other constraints', async () => {
    expect(names(await Place().near('at', center).find())).toEqual(byDistance.map((p) => p.name));
    expect(names(await Place().near('at', center).limit(3).find())).toEqual(byDistance.slice(0, 3).map((p) => p.name));
    expect(names(await Place().near('at', center).notEqualTo('name', 'Oakland').limit(2).find())).toEqual(
      byDistance.filter((p) => p.name !== 'Oakland').slice(0, 2).map((p) => p.name),
    );
    // An explicit order wins over the distance sort.
    expect(names(await Place().near('at', center).ascending('name').find())).toEqual(PLACES.map(([n]) => n).sort());
  });

  it('withinKilometers / withinMiles / withinRadians, sorted and unsorted', async () => {
    const km = 150;
    const miles = 400;
    const rad = 0.15;
    expect(within(km / 6371)).toEqual(['Oakland', 'San Francisco', 'San Jose', 'Sacramento']);
    expect(names(await Place().withinKilometers('at', center, km).find())).toEqual(within(km / 6371));
    expect(names(await Place().withinKilometers('at', center, km, false).find()).sort()).toEqual(within(km / 6371).sort());
    expect(within(miles / 3958.8)).toContain('Los Angeles');
    expect(names(await Place().withinMiles('at', center, miles).find())).toEqual(within(miles / 3958.8));
    expect(names(await Place().withinMiles('at', center, miles, false).find()).sort()).toEqual(within(miles / 3958.8).sort());
    expect(within(rad)).toContain('Portland');
    expect(names(await Place().withinRadians('at', center, rad).find())).toEqual(within(rad));
    expect(names(await Place().withinRadians('at', center, rad, false).find()).sort()).toEqual(within(rad).sort());
    expect(await Place().withinKilometers('at', center, 150, false).count()).toBe(4);
  });

  it('withinGeoBox', async () => {
    const sw = new Parse.GeoPoint(37, -123);
    const ne = new Parse.GeoPoint(38, -121.5);
    const expected = PLACES.filter(([, lat, lng]) => lat >= 37 && lat <= 38 && lng >= -123 && lng <= -121.5).map(([n]) => n);
    expect(expected.sort()).toEqual(['Oakland', 'San Francisco', 'San Jose']);
    expect(names(await Place().withinGeoBox('at', sw, ne).find()).sort()).toEqual(expected);
  });

  it('withinPolygon on GeoPoints, given as GeoPoints or as a Parse.Polygon', async () => {
    const polygon = new Parse.Polygon(corners);
    const expected = PLACES.filter(([, lat, lng]) => polygon.containsPoint(new Parse.GeoPoint(lat, lng))).map(([n]) => n).sort();
    expect(expected).toEqual(['Los Angeles', 'Oakland', 'Sacramento', 'San Francisco', 'San Jose']);
    const points = corners.map(([lat, lng]) => new Parse.GeoPoint(lat, lng));
    expect(names(await Place().withinPolygon('at', points).find()).sort()).toEqual(expected);
    expect(names(await Place().withinPolygon('at', polygon as any).find()).sort()).toEqual(expected);
  });

  it('polygonContains on a Polygon field', async () => {
    const zones = async (lat: number, lng: number) => names(await new Parse.Query('Zone').polygonContains('area', new Parse.GeoPoint(lat, lng)).find()).sort();
    expect(await zones(37.7749, -122.4194)).toEqual(['Bay', 'West']);
    expect(await zones(34.0522, -118.2437)).toEqual(['West']);
    expect(await zones(35.6762, 139.6503)).toEqual(['Japan']);
    expect(await zones(40.7128, -74.006)).toEqual([]);
  });
});
