import type Database from 'better-sqlite3';

/**
 * The app's config parameters (Parse's `/config`, "Config" in the REST guide) in the `_CONFIG` table
 * that `migrations.ts` creates: one row per parameter, `value` as JSON text in Parse's JSON form,
 * `masterKeyOnly` 1 for parameters that only the master key may read.
 */

interface ConfigRecord {
  key: string;
  value: string;
  masterKeyOnly: number;
}

/** Every parameter, ordered by key. */
export function readConfig(db: Database.Database): Array<{ key: string; value: unknown; masterKeyOnly: boolean }> {
  const rows = db.prepare('SELECT key, value, masterKeyOnly FROM _CONFIG ORDER BY key').all() as ConfigRecord[];
  return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown, masterKeyOnly: r.masterKeyOnly === 1 }));
}

/**
 * Sets the parameters of `params` (as Parse Server does on `PUT /config`): each key's value is
 * replaced and its flag set to `masterKeyOnly[key] === true`; a key whose value is `undefined` is
 * removed (the route turns Parse's `{"__op": "Delete"}` into that). Keys not in `params` stay as
 * they are. Call inside a transaction to make several keys one change.
 */
export function writeConfig(db: Database.Database, params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): void {
  const upsert = db.prepare(
    'INSERT INTO _CONFIG (key, value, masterKeyOnly) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, masterKeyOnly = excluded.masterKeyOnly',
  );
  const remove = db.prepare('DELETE FROM _CONFIG WHERE key = ?');
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) remove.run(key);
    else upsert.run(key, JSON.stringify(value), masterKeyOnly[key] === true ? 1 : 0);
  }
}
