/**
 * `$group` answered by SQLite: for every shape the plan takes
 * (aggregate/groupPlan.ts), the database's answer equals the in-memory run over the same objects
 * (group.ts), on a real SQLite file with empty, null and missing keys and values.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compileGroup } from '../src/data/aggregate/group.js';
import { planGroup } from '../src/data/aggregate/groupPlan.js';
import { runPipeline } from '../src/data/aggregate/run.js';
import { fromStageDoc, toStageDoc } from '../src/data/aggregate/values.js';
import { MASTER } from '../src/data/auth/context.js';
import { DataEngine } from '../src/data/engine.js';
import { DataStore } from '../src/data/store.js';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';

let dir: string;
let store: DataStore;
let engine: DataEngine;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-group-'));
  store = new DataStore('group', new SqliteAdapter(path.join(dir, 'data.db')), () => '');
  engine = new DataEngine(store);
  const objects: Array<Record<string, unknown>> = [
    { category: 'b', score: 3, other: 1 },
    { category: 'a', score: 10 },
    { category: 'b', score: null, other: -4 },
    { category: '', score: 7 },
    { score: 5, other: 2 },
    { category: null, score: -2 },
    { category: 'a', other: 9 },
    { category: 'c', score: 2.5 },
    { category: 'b', score: 0.25, other: 0 },
  ];
  // Typed first, so that the schema knows every field even where a value is null.
  await engine.create('Item', { category: 'seed', score: 1, other: 1 }, MASTER);
  for (const object of objects) await engine.create('Item', object, MASTER);
});

afterAll(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The in-memory answer over the same objects, in creation order (objects made within one millisecond by objectId, as the SQL orders groups). */
async function inMemory(spec: unknown, where: Record<string, unknown> = {}) {
  const rows = await store.rows('Item', { where, order: 'createdAt,objectId', limit: 1000 });
  return compileGroup(spec)(rows.map((r) => toStageDoc(engine.toJson('Item', r)))).map(fromStageDoc);
}

describe('$group in SQL', () => {
  it.each([
    [{ _id: null, n: { $sum: 1 } }],
    [{ _id: {}, n: { $count: {} }, twice: { $sum: 2 } }],
    [{ _id: '', total: { $sum: '$score' }, mean: { $avg: '$score' }, low: { $min: '$score' }, high: { $max: '$score' } }],
    [{ _id: '$category', n: { $sum: 1 }, total: { $sum: '$score' }, mean: { $avg: '$score' }, low: { $min: '$other' }, high: { $max: '$other' } }],
    [{ _id: '$category', none: { $sum: '$other' }, mean: { $avg: '$other' } }],
  ])('answers %j as the in-memory run does', async (spec) => {
    expect(planGroup(spec, engine.schema.fields('Item'))).toBeDefined();
    const byDatabase = vi.spyOn(store, 'groupRows');
    const answered = await runPipeline(store, 'Item', [{ name: '$group', spec }], undefined);
    expect(byDatabase).toHaveBeenCalledOnce();
    byDatabase.mockRestore();
    expect(answered).toEqual(await inMemory(spec));
  });

  it('takes the where and the stages after it', async () => {
    const spec = { _id: '$category', total: { $sum: '$score' } };
    const answered = await runPipeline(store, 'Item', [{ name: '$match', spec: { score: { $gt: 0 } } }, { name: '$group', spec }, { name: '$sort', spec: { total: -1 } }], undefined);
    const expected = (await inMemory(spec, { score: { $gt: 0 } })).sort((x, y) => (y.total as number) - (x.total as number));
    expect(answered).toEqual(expected);
  });

  it('leaves to the in-memory run what the database would answer otherwise', () => {
    const fields = engine.schema.fields('Item');
    expect(planGroup({ _id: '$score', n: { $sum: 1 } }, fields)).toBeUndefined(); // a Number key
    expect(planGroup({ _id: '$category', s: { $sum: '$category' } }, fields)).toBeUndefined(); // a String summed
    expect(planGroup({ _id: null, f: { $first: '$score' } }, fields)).toBeUndefined();
    expect(planGroup({ _id: null, s: { $sum: { $multiply: ['$score', 2] } } }, fields)).toBeUndefined();
    expect(planGroup({ _id: '$nope', n: { $sum: 1 } }, fields)).toBeUndefined();
  });
});
