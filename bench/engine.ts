import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MASTER, type Auth } from '../src/data/auth/context.js';
import { DataEngine, newObjectId } from '../src/data/engine.js';
import { DataStore } from '../src/data/store.js';
import { classTableDdl } from '../src/data/storage/sqlite/classTables.js';
import { SqliteAdapter } from '../src/data/storage/sqlite/adapter.js';

/**
 * The data engine in process (what the asynchronous storage seam costs): creates, gets by
 * objectId, finds, counts and updates through `DataEngine` over the SQLite adapter, each against the
 * bare limit, the same statement run directly on a better-sqlite3 handle of a file laid out and set
 * up alike (WAL, exclusive locking, one row per object, the data as JSON). Prints microseconds per operation (medians of
 * ROUNDS rounds) and the ratio engine / bare of each round's pair.
 */
const N = Number(process.env.BENCH_ENGINE_OPERATIONS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(fn: (i: number) => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    const result = fn(i);
    if (result instanceof Promise) await result;
  }
  return Number(process.hrtime.bigint() - start) / 1000 / N;
}

export async function engineBench(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backyard-bench-engine-'));
  const adapter = new SqliteAdapter(path.join(dir, 'data.db'));
  const store = new DataStore('bench', adapter, () => '');
  const engine = new DataEngine(store);
  const bare = new Database(path.join(dir, 'bare.db'));
  // The pragmas the adapter's store sets (storage/sqlite/database.ts), so that only the engine differs.
  bare.pragma('locking_mode = EXCLUSIVE');
  bare.pragma('journal_mode = WAL');
  bare.pragma('synchronous = NORMAL');
  bare.pragma('wal_autocheckpoint = 10000');
  bare.exec(classTableDdl('item'));
  const insert = bare.prepare('INSERT INTO item VALUES (?, ?, ?, ?, NULL, 1)');
  // Raw rows (arrays), as the adapter reads them.
  const byId = bare.prepare('SELECT objectId, createdAt, updatedAt, data, acl FROM item WHERE objectId = ?').raw(true);
  const update = bare.prepare('UPDATE item SET updatedAt = ?, data = ? WHERE objectId = ?');
  const count = bare.prepare('SELECT count(*) AS n FROM item WHERE objectId = ?');
  const client: Auth = { master: false, principals: ['*'] };
  try {
    const ids: string[] = [];
    const bareIds: string[] = [];
    const rows: Record<string, { engine: number[]; bare: number[] }> = {};
    const pair = async (name: string, viaEngine: (i: number) => unknown, direct: (i: number) => unknown) => {
      const entry = (rows[name] ??= { engine: [], bare: [] });
      entry.engine.push(await timed(viaEngine));
      entry.bare.push(await timed(direct));
    };
    for (let round = 0; round < ROUNDS; round++) {
      ids.length = 0;
      bareIds.length = 0;
      await pair(
        'create',
        async (i) => ids.push((await engine.create('Item', { category: `c${i % 1000}`, score: i }, MASTER)).row.objectId),
        (i) => {
          const now = new Date().toISOString();
          const id = newObjectId();
          insert.run(id, now, now, JSON.stringify({ category: `c${i % 1000}`, score: i }));
          bareIds.push(id);
        },
      );
      await pair('get by objectId', (i) => engine.get('Item', ids[i]!, client), (i) => JSON.parse((byId.get(bareIds[i]) as string[])[3]!));
      await pair('find by objectId', (i) => engine.find('Item', { where: { objectId: ids[i] }, limit: 10 }, client), (i) => byId.all(bareIds[i]));
      await pair('count by objectId', (i) => engine.find('Item', { where: { objectId: ids[i] }, count: 1, limit: 0 }, client), (i) => count.get(bareIds[i]));
      await pair(
        'update',
        (i) => engine.update('Item', ids[i]!, { score: i + 1 }, MASTER),
        (i) => update.run(new Date().toISOString(), JSON.stringify({ category: `c${i % 1000}`, score: i + 1 }), bareIds[i]),
      );
    }
    console.log(`${N} operations per round, ${ROUNDS} rounds; µs per operation (medians), and engine / bare per round (median)`);
    console.log(`${'operation'.padEnd(20)} ${'engine'.padStart(8)} ${'bare'.padStart(8)}  ratio`);
    for (const [name, { engine: e, bare: b }] of Object.entries(rows)) {
      const ratios = e.map((x, i) => x / b[i]!);
      console.log(`${name.padEnd(20)} ${median(e).toFixed(2).padStart(8)} ${median(b).toFixed(2).padStart(8)}  ${median(ratios).toFixed(1)}×`);
    }
  } finally {
    bare.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
