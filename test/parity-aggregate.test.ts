/**
 * Aggregation parity: pipelines sent by the real Parse JS SDK
 * (`new Parse.Query(X).aggregate(pipeline)`, master key), answered with MongoDB's semantics as
 * MongoDB-backed Parse Server answers them (group keys as `objectId`, empty keys as null).
 * Expected values are computed by hand (dates checked against strftime's %U/%V/%G).
 */
import Parse from 'parse/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/dataApp.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let server: TestServer;
let app: TestApp;
const ids: Record<string, string> = {};
let owner: Parse.Object;

const DATES = {
  a: '2024-03-05T10:20:30.456Z', // a Tuesday
  b: '2023-12-31T23:59:59.999Z', // a Sunday, ISO week 52 of 2023
  c: '2024-03-06T00:00:00.000Z', // a Wednesday
};

beforeAll(async () => {
  server = await startTestServer();
  app = await createTestApp(server, 'aggregate-parity');
  Parse.initialize(app.appId, app.keys.javascriptKey, app.keys.masterKey);
  (Parse as unknown as { serverURL: string }).serverURL = app.apiURL;
  // A 5xx is a Backyard bug: fail at once instead of waiting out the SDK's retries.
  Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
  owner = await new Parse.Object('Owner').save({ name: 'o' });
  const other = await new Parse.Object('Owner').save({ name: 'p' });
  const rows = [
    { key: 'a', name: 'a', n: 3, m: 2, d: new Date(DATES.a), owner },
    { key: 'b', name: 'b', n: 5, m: 4, d: new Date(DATES.b), owner: other },
    { key: 'c', name: 'a', n: 7, m: 1, d: new Date(DATES.c), owner },
  ];
  const saved = await Parse.Object.saveAll(rows.map(({ key: _k, ...fields }) => new Parse.Object('Reading', fields)));
  rows.forEach((r, i) => (ids[r.key] = saved[i]!.id!));
  await Parse.Object.saveAll([
    new Parse.Object('Place', { name: 'sf', loc: new Parse.GeoPoint(37.77, -122.42), kind: 'city' }),
    new Parse.Object('Place', { name: 'la', loc: new Parse.GeoPoint(34.05, -118.24), kind: 'city' }),
    new Parse.Object('Place', { name: 'ny', loc: new Parse.GeoPoint(40.71, -74.0), kind: 'town' }),
  ]);
});
afterAll(async () => server?.close());

const aggregate = (className: string, pipeline: unknown[]) => new Parse.Query(className).aggregate(pipeline as never) as Promise<any[]>;
const byName = (rows: any[]) => [...rows].sort((x, y) => String(x.name ?? x.objectId).localeCompare(String(y.name ?? y.objectId)));

describe('$group by a constant key', () => {
  it.each([['{}', {}], ["''", ''], ['[]', []], ['null', null]])('_id %s answers one group with objectId null', async (_label, key) => {
    expect(await aggregate('Reading', [{ $group: { _id: key, total: { $sum: '$n' } } }])).toEqual([{ objectId: null, total: 15 }]);
  });
  it('a non-empty constant stays the key (Mongo treats a string without $ as a literal)', async () => {
    expect(await aggregate('Reading', [{ $group: { _id: 'all', n: { $sum: 1 } } }])).toEqual([{ objectId: 'all', n: 3 }]);
  });
});

describe('date operators', () => {
  it('group by day, month and year of a Date field', async () => {
    const rows = await aggregate('Reading', [
      { $group: { _id: { day: { $dayOfMonth: '$d' }, month: { $month: '$d' }, year: { $year: '$d' } }, total: { $sum: '$n' } } },
      { $sort: { total: 1 } },
    ]);
    expect(rows).toEqual([
      { objectId: { day: 5, month: 3, year: 2024 }, total: 3 },
      { objectId: { day: 31, month: 12, year: 2023 }, total: 5 },
      { objectId: { day: 6, month: 3, year: 2024 }, total: 7 },
    ]);
  });

  it('project every date part with Mongo numbering', async () => {
    const rows = await aggregate('Reading', [
      {
        $project: {
          _id: 0,
          name: 1,
          n: 1,
          parts: {
            dow: { $dayOfWeek: '$d' },
            doy: { $dayOfYear: '$d' },
            h: { $hour: '$d' },
            mi: { $minute: '$d' },
            s: { $second: '$d' },
            ms: { $millisecond: '$d' },
            w: { $week: '$d' },
            iw: { $isoWeek: '$d' },
            idow: { $isoDayOfWeek: '$d' },
            iwy: { $isoWeekYear: { date: '$d' } },
          },
        },
      },
      { $sort: { n: 1 } },
    ]);
    expect(rows).toEqual([
      { name: 'a', n: 3, parts: { dow: 3, doy: 65, h: 10, mi: 20, s: 30, ms: 456, w: 9, iw: 10, idow: 2, iwy: 2024 } },
      { name: 'b', n: 5, parts: { dow: 1, doy: 365, h: 23, mi: 59, s: 59, ms: 999, w: 53, iw: 52, idow: 7, iwy: 2023 } },
      { name: 'a', n: 7, parts: { dow: 4, doy: 66, h: 0, mi: 0, s: 0, ms: 0, w: 9, iw: 10, idow: 3, iwy: 2024 } },
    ]);
  });

  it('reads createdAt as a date and answers null for a missing date', async () => {
    const year = new Date().getUTCFullYear();
    expect(await aggregate('Reading', [{ $group: { _id: { $year: '$createdAt' }, n: { $sum: 1 } } }])).toEqual([{ objectId: year, n: 3 }]);
    expect(await aggregate('Reading', [{ $group: { _id: { $month: '$nothing' }, n: { $sum: 1 } } }])).toEqual([{ objectId: null, n: 3 }]);
  });

  it('takes a time zone: an offset or an Olson name', async () => {
    const rows = await aggregate('Reading', [
      { $match: { name: 'b' } },
      { $project: { _id: 0, plus2: { $hour: { date: '$d', timezone: '+02:00' } }, ny: { $hour: { date: '$d', timezone: 'America/New_York' } }, tokyoYear: { $year: { date: '$d', timezone: 'Asia/Tokyo' } } } },
    ]);
    expect(rows).toEqual([{ plus2: 1, ny: 18, tokyoYear: 2024 }]);
    await expect(aggregate('Reading', [{ $project: { x: { $hour: { date: '$d', timezone: 'Mars/Olympus' } } } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('time zone') });
  });

  it('refuses a date part of a number with 102, naming the field', async () => {
    await expect(aggregate('Reading', [{ $project: { x: { $year: '$n' } } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('$project.x') });
  });
});

describe('$match as the JS SDK sends it', () => {
  it('matches _id', async () => {
    expect(await aggregate('Reading', [{ $match: { _id: ids.b } }, { $project: { name: 1 } }])).toEqual([{ objectId: ids.b, name: 'b' }]);
    expect(await aggregate('Reading', [{ $match: { _id: { $in: [ids.a, ids.b] } } }, { $count: 'n' }])).toEqual([{ n: 2 }]);
  });

  it('matches a Date field given as the ISO string a JS Date becomes', async () => {
    const since = new Date('2024-01-01T00:00:00.000Z');
    const rows = await aggregate('Reading', [{ $match: { d: { $gte: since } } }, { $project: { _id: 0, n: 1 } }, { $sort: { n: 1 } }]);
    expect(rows).toEqual([{ n: 3 }, { n: 7 }]);
    expect(await aggregate('Reading', [{ $match: { d: new Date(DATES.b) } }, { $project: { _id: 0, n: 1 } }])).toEqual([{ n: 5 }]);
    expect(await aggregate('Reading', [{ $match: { createdAt: { $lt: new Date('2000-01-01') } } }, { $count: 'n' }])).toEqual([]);
  });

  it('matches a pointer field against a bare objectId, and the SDK\'s where against a Pointer', async () => {
    const rows = await aggregate('Reading', [{ $match: { owner: owner.id } }, { $group: { _id: '$owner', total: { $sum: '$n' } } }]);
    expect(rows).toEqual([{ objectId: owner.id, total: 10 }]);
    const viaWhere = await new Parse.Query('Reading').equalTo('owner', owner).aggregate([{ $group: { _id: null, total: { $sum: '$n' } } }] as never);
    expect(viaWhere).toEqual([{ objectId: null, total: 10 }]);
  });
});

describe('arithmetic', () => {
  it('in $project and inside $group accumulators', async () => {
    const rows = await aggregate('Reading', [
      { $project: { _id: 0, n: 1, product: { $multiply: ['$n', '$m'] }, sum: { $add: ['$n', '$m', 1] }, diff: { $subtract: ['$n', '$m'] }, ratio: { $divide: ['$n', '$m'] }, rest: { $mod: ['$n', '$m'] } } },
      { $sort: { n: 1 } },
    ]);
    expect(rows).toEqual([
      { n: 3, product: 6, sum: 6, diff: 1, ratio: 1.5, rest: 1 },
      { n: 5, product: 20, sum: 10, diff: 1, ratio: 1.25, rest: 1 },
      { n: 7, product: 7, sum: 9, diff: 6, ratio: 7, rest: 0 },
    ]);
    const grouped = await aggregate('Reading', [{ $group: { _id: '$name', weighted: { $sum: { $multiply: ['$n', '$m'] } }, avgHalf: { $avg: { $divide: ['$n', 2] } } } }, { $sort: { _id: 1 } }]);
    expect(grouped).toEqual([
      { objectId: 'a', weighted: 13, avgHalf: 2.5 },
      { objectId: 'b', weighted: 20, avgHalf: 2.5 },
    ]);
  });

  it('moves a date by milliseconds and subtracts dates', async () => {
    const rows = await aggregate('Reading', [{ $match: { name: 'b' } }, { $project: { _id: 0, next: { $add: ['$d', 1] }, span: { $subtract: [{ $add: ['$d', 86_400_000] }, '$d'] } } }]);
    expect(rows).toEqual([{ next: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' }, span: 86_400_000 }]);
  });

  it('answers null for a missing operand, and 102 for a string or a division by zero', async () => {
    expect(await aggregate('Reading', [{ $match: { name: 'b' } }, { $project: { _id: 0, x: { $add: ['$n', '$missing'] } } }])).toEqual([{ x: null }]);
    await expect(aggregate('Reading', [{ $project: { x: { $multiply: ['$n', '$name'] } } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('$multiply') });
    await expect(aggregate('Reading', [{ $project: { x: { $divide: ['$n', 0] } } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('zero') });
    await expect(aggregate('Reading', [{ $project: { x: { $frobnicate: ['$n'] } } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('$frobnicate') });
  });
});

describe('the same stage several times', () => {
  it('$match, $group, $match', async () => {
    const rows = await aggregate('Reading', [{ $match: { n: { $gt: 2 } } }, { $group: { _id: '$name', t: { $sum: '$n' } } }, { $match: { t: { $gt: 6 } } }]);
    expect(rows).toEqual([{ objectId: 'a', t: 10 }]);
  });

  it('two $project stages, the second over the first one\'s computed field', async () => {
    const rows = await aggregate('Reading', [{ $project: { _id: 0, n: 1, twice: { $multiply: ['$n', 2] } } }, { $project: { more: { $add: ['$twice', 1] } } }, { $sort: { more: 1 } }]);
    expect(rows).toEqual([{ more: 7 }, { more: 11 }, { more: 15 }]);
  });

  it('$match on a group key after $group, with a Date string after $project', async () => {
    expect(await aggregate('Reading', [{ $group: { _id: '$name', n: { $sum: 1 } } }, { $match: { _id: 'a' } }])).toEqual([{ objectId: 'a', n: 2 }]);
    const rows = await aggregate('Reading', [{ $project: { d: 1, n: 1 } }, { $match: { d: { $lt: new Date('2024-01-01') } } }, { $project: { _id: 0, n: 1 } }]);
    expect(rows).toEqual([{ n: 5 }]);
  });
});

describe('$geoNear', () => {
  /** MongoDB's spherical distance in meters (earth radius 6378.1 km). */
  const meters = (lat1: number, lng1: number, lat2: number, lng2: number) => {
    const rad = Math.PI / 180;
    const h = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
    return 2 * Math.asin(Math.sqrt(h)) * 6378100;
  };

  it('answers the objects nearest first with their distance in meters in distanceField', async () => {
    const rows = await aggregate('Place', [{ $geoNear: { near: { type: 'Point', coordinates: [-122.4, 37.78] }, key: 'loc', spherical: true, distanceField: 'dist' } }]);
    expect(rows.map((r) => r.name)).toEqual(['sf', 'la', 'ny']);
    expect(rows[0].dist).toBeCloseTo(meters(37.78, -122.4, 37.77, -122.42), 3);
    expect(rows[2].dist).toBeCloseTo(meters(37.78, -122.4, 40.71, -74.0), 3);
    expect(rows[0]).toMatchObject({ objectId: expect.any(String), loc: { __type: 'GeoPoint', latitude: 37.77, longitude: -122.42 } });
  });

  it('takes query, maxDistance and a Parse GeoPoint, and later stages run on its output', async () => {
    const near = new Parse.GeoPoint(37.78, -122.4);
    const rows = await aggregate('Place', [
      { $geoNear: { near, key: 'loc', distanceField: 'far.km', distanceMultiplier: 0.001, maxDistance: 1_000_000, query: { kind: 'city' } } },
      { $project: { _id: 0, name: 1, far: 1 } },
    ]);
    expect(rows.map((r) => r.name)).toEqual(['sf', 'la']);
    expect(rows[1].far.km).toBeCloseTo(meters(37.78, -122.4, 34.05, -118.24) / 1000, 6);
  });

  it('refuses a $geoNear without distanceField, or not first, with 102', async () => {
    await expect(aggregate('Place', [{ $geoNear: { near: { type: 'Point', coordinates: [0, 0] }, key: 'loc' } }])).rejects.toMatchObject({ code: 102, message: expect.stringContaining('distanceField') });
    await expect(aggregate('Place', [{ $match: { kind: 'city' } }, { $geoNear: { near: { type: 'Point', coordinates: [0, 0] }, key: 'loc', distanceField: 'd' } }])).rejects.toMatchObject({ code: 102 });
  });
});

it('keeps answering the common $match + $group shape', async () => {
  const rows = await aggregate('Reading', [{ $match: { n: { $gte: 3 } } }, { $group: { _id: '$name', total: { $sum: '$n' }, n: { $sum: 1 } } }]);
  expect(byName(rows)).toEqual([
    { objectId: 'a', total: 10, n: 2 },
    { objectId: 'b', total: 5, n: 1 },
  ]);
});
