import type { Answer, CaseApi, DiffCase } from '../harness.js';

/**
 * Differential cases: aggregate. Parse Server 9 on PostgreSQL runs a small subset of
 * MongoDB's pipeline (one SQL statement: no expressions but date parts in a compound `$group._id`, the
 * last `$match` wins, `$count` and `$geoNear` ignored); where it answers wrongly, Backyard answers as
 * MongoDB-backed Parse Server does and the case is `known` (docs/parse-differences.md).
 */

const DATES = ['2024-03-05T10:20:30.456Z', '2023-12-31T23:59:59.999Z', '2024-03-06T00:00:00.000Z'];

/** Three readings (n 3, 5, 7; m 2, 4, 1; names a, b, a; dates above) of `owners[i % 2]`; answers the class and ids. */
async function seed(api: CaseApi): Promise<{ cls: string; ids: string[]; owners: string[] }> {
  const cls = api.cls('Reading');
  const ownerCls = api.cls('Owner');
  const owners: string[] = [];
  for (const name of ['o', 'p']) owners.push((await api.call('POST', `/classes/${ownerCls}`, { body: { name } })).body.objectId);
  const ids: string[] = [];
  for (const [i, [name, n, m]] of ([['a', 3, 2], ['b', 5, 4], ['a', 7, 1]] as const).entries()) {
    const owner = { __type: 'Pointer', className: ownerCls, objectId: owners[i % 2] };
    const created = await api.call('POST', `/classes/${cls}`, { body: { name, n, m, d: { __type: 'Date', iso: DATES[i] }, owner } });
    ids.push(created.body.objectId);
  }
  return { cls, ids, owners };
}

const aggregate = (api: CaseApi, cls: string, pipeline: unknown[]) => api.call('GET', `/aggregate/${cls}`, { master: true, query: { pipeline } });

/** The answer with its results in a stable order (Parse Server on PostgreSQL does not order groups). */
const sorted = (answer: Answer, by: (row: any) => string | number = (r) => JSON.stringify(r)): Answer =>
  Array.isArray(answer.body?.results) ? { ...answer, body: { results: [...answer.body.results].sort((a, b) => (by(a) < by(b) ? -1 : by(a) > by(b) ? 1 : 0)) } } : answer;

const ok = (results: unknown[]) => ({ status: 200, body: { results } });

export const cases: DiffCase[] = [
  {
    name: '$group by a constant _id ({}, "", [], null) answers objectId null',
    run: async (api) => {
      const { cls } = await seed(api);
      const out: Answer[] = [];
      for (const key of [{}, '', [], null]) out.push(await aggregate(api, cls, [{ $group: { _id: key, total: { $sum: '$n' } } }]));
      return out;
    },
  },
  {
    name: 'date parts in a compound $group _id (parts both numberings agree on)',
    run: async (api) => {
      const { cls } = await seed(api);
      const key = {
        day: { $dayOfMonth: '$d' },
        month: { $month: '$d' },
        year: { $year: '$d' },
        hour: { $hour: '$d' },
        minute: { $minute: '$d' },
        yday: { $dayOfYear: '$d' },
        isoDay: { $isoDayOfWeek: '$d' },
        isoYear: { $isoWeekYear: '$d' },
      };
      return [sorted(await aggregate(api, cls, [{ $group: { _id: key, total: { $sum: '$n' } } }]), (r) => r.total)];
    },
  },
  {
    name: 'date parts numbered as MongoDB numbers them ($dayOfWeek, $week, $second, $millisecond)',
    known: {
      reason: 'Parse Server on PostgreSQL answers EXTRACT values: day of week 0 = Sunday, ISO weeks, seconds rounded, milliseconds with the seconds',
      backyard: [
        ok([
          { objectId: { dow: 3, week: 9, s: 30, ms: 456 }, total: 3 },
          { objectId: { dow: 1, week: 53, s: 59, ms: 999 }, total: 5 },
          { objectId: { dow: 4, week: 9, s: 0, ms: 0 }, total: 7 },
        ]),
      ],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      const key = { dow: { $dayOfWeek: '$d' }, week: { $week: '$d' }, s: { $second: '$d' }, ms: { $millisecond: '$d' } };
      return [sorted(await aggregate(api, cls, [{ $group: { _id: key, total: { $sum: '$n' } } }]), (r) => r.total)];
    },
  },
  {
    name: 'a date part merges objects of the same day into one group',
    known: {
      reason: 'Parse Server on PostgreSQL groups by the whole date and answers one group per distinct instant',
      backyard: [ok([{ objectId: { year: 2023 }, total: 5 }, { objectId: { year: 2024 }, total: 10 }])],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      return [sorted(await aggregate(api, cls, [{ $group: { _id: { year: { $year: '$d' } }, total: { $sum: '$n' } } }]), (r) => r.total)];
    },
  },
  {
    name: 'date parts and arithmetic in $project',
    known: {
      reason: 'Parse Server on PostgreSQL drops computed $project fields and the objectId',
      backyard: [
        ok([
          { objectId: '<id1>', month: 3, product: 6, sum: 6, diff: 1, ratio: 1.5 },
          { objectId: '<id2>', month: 3, product: 7, sum: 9, diff: 6, ratio: 7 },
          { objectId: '<id3>', month: 12, product: 20, sum: 10, diff: 1, ratio: 1.25 },
        ]),
      ],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      const project = { month: { $month: '$d' }, product: { $multiply: ['$n', '$m'] }, sum: { $add: ['$n', '$m', 1] }, diff: { $subtract: ['$n', '$m'] }, ratio: { $divide: ['$n', '$m'] } };
      return [sorted(await aggregate(api, cls, [{ $project: project }]), (r) => r.product)];
    },
  },
  {
    name: 'arithmetic inside $group accumulators',
    known: {
      reason: 'Parse Server on PostgreSQL reads {$sum: <expression>} as a count',
      backyard: [ok([{ objectId: null, weighted: 33, half: 7.5 }])],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      return [await aggregate(api, cls, [{ $group: { _id: null, weighted: { $sum: { $multiply: ['$n', '$m'] } }, half: { $sum: { $divide: ['$n', 2] } } } }])];
    },
  },
  {
    name: '$match on _id, on a Date given as an ISO string and on a pointer given as a bare objectId',
    run: async (api) => {
      const { cls, ids, owners } = await seed(api);
      // Grouped by a field: Parse Server on PostgreSQL cannot run $match + a $group by null (102, "must appear in the GROUP BY clause").
      const total = { $group: { _id: '$name', total: { $sum: '$n' } } };
      return [
        await aggregate(api, cls, [{ $match: { _id: ids[1] } }, total]),
        sorted(await aggregate(api, cls, [{ $match: { d: { $gte: '2024-01-01T00:00:00.000Z' } } }, total])),
        await aggregate(api, cls, [{ $match: { d: '2023-12-31T23:59:59.999Z' } }, total]),
        sorted(await aggregate(api, cls, [{ $match: { owner: owners[0] } }, total])),
      ];
    },
  },
  {
    name: '$match, $group, $match in one pipeline',
    known: {
      reason: 'Parse Server on PostgreSQL keeps only the last $match and applies it before grouping (102: column does not exist)',
      backyard: [ok([{ objectId: '<id1>', t: 10 }])], // the mask takes every objectId for an id
    },
    run: async (api) => {
      const { cls } = await seed(api);
      return [await aggregate(api, cls, [{ $match: { n: { $gt: 2 } } }, { $group: { _id: '$name', t: { $sum: '$n' } } }, { $match: { t: { $gt: 6 } } }])];
    },
  },
  {
    name: 'two $project stages, the second over the first',
    known: {
      reason: 'Parse Server on PostgreSQL merges the $project stages into one column list and drops computed fields',
      backyard: [ok([{ more: 7 }, { more: 11 }, { more: 15 }])],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      return [sorted(await aggregate(api, cls, [{ $project: { _id: 0, twice: { $multiply: ['$n', 2] } } }, { $project: { more: { $add: ['$twice', 1] } } }]), (r) => r.more)];
    },
  },
  {
    name: '$geoNear answers the objects nearest first with distances in meters',
    known: {
      reason: 'Parse Server on PostgreSQL ignores $geoNear; Backyard answers as MongoDB-backed Parse Server does',
      backyard: [
        ok([
          { name: 'sf', km: 2 },
          { name: 'la', km: 559 },
        ]),
      ],
    },
    run: async (api) => {
      const cls = api.cls('Place');
      for (const [name, latitude, longitude, kind] of [['sf', 37.77, -122.42, 'city'], ['la', 34.05, -118.24, 'city'], ['ny', 40.71, -74.0, 'town']] as const) {
        await api.call('POST', `/classes/${cls}`, { body: { name, kind, loc: { __type: 'GeoPoint', latitude, longitude } } });
      }
      const answer = await aggregate(api, cls, [
        { $geoNear: { near: { type: 'Point', coordinates: [-122.4, 37.78] }, key: 'loc', spherical: true, distanceField: 'dist', query: { kind: 'city' } } },
        { $project: { _id: 0, name: 1, dist: 1 } },
      ]);
      const results = Array.isArray(answer.body?.results) ? answer.body.results.map((r: any) => ({ name: r.name, km: typeof r.dist === 'number' ? Math.round(r.dist / 1000) : r.dist })) : answer.body;
      return [{ status: answer.status, body: { results } }];
    },
  },
  {
    name: '$count after $match',
    known: {
      reason: 'Parse Server on PostgreSQL ignores $count and answers the matching objects',
      backyard: [ok([{ howMany: 2 }]), ok([])],
    },
    run: async (api) => {
      const { cls } = await seed(api);
      return [await aggregate(api, cls, [{ $match: { name: 'a' } }, { $count: 'howMany' }]), await aggregate(api, cls, [{ $match: { name: 'zzz' } }, { $count: 'howMany' }])];
    },
  },
  {
    name: 'malformed stages answer 102',
    run: async (api) => {
      const { cls } = await seed(api);
      return [
        await aggregate(api, cls, [{ $group: { total: { $sum: 1 } } }]),
        await aggregate(api, cls, [{ $group: { objectId: '$name' } }]),
        await aggregate(api, cls, [{ $limit: 1, $skip: 1 }]),
      ];
    },
  },
];
