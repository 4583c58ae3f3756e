import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

/**
 * One numbered schema change of a SQLite file, applied in order at open. A migration is never edited
 * once released: add a new one. `version` is recorded in `PRAGMA user_version`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Opens (creating if needed) a SQLite database in WAL mode with `synchronous=FULL`, so that an answer
 * that reports success means the change is on disk (docs/design.md, "State"), and applies `migrations`
 * whose version is above the file's `user_version`, each in its own transaction.
 * @param options.exclusive hold SQLite's locks from the first read until close (`locking_mode =
 *   EXCLUSIVE`, set before WAL mode so that the WAL index lives in this process's memory, not in a
 *   `-shm` file): no other connection can open the file meanwhile, and no statement pays the two
 *   `fcntl` lock calls SQLite otherwise makes around each transaction.
 * @throws Error when the file is newer than this build (its version above the last migration), or
 *   SqliteError SQLITE_BUSY when `exclusive` and another connection holds the file.
 */
export function openDatabase(file: string, migrations: readonly Migration[], options: { exclusive?: boolean } = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Locks held exclusively are never let go by their holder: waiting for one would only delay the refusal.
  const db = new Database(file, { timeout: options.exclusive ? 0 : 5000 });
  try {
    if (options.exclusive) db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Another process (a second `backyard` command on the same home) may hold the write lock briefly.
    if (!options.exclusive) db.pragma('busy_timeout = 5000');
    migrate(db, migrations);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function migrate(db: Db, migrations: readonly Migration[]): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new Error(
      `The database ${db.name} has schema version ${current}, newer than this Backyard knows (${latest}). Upgrade Backyard.`,
    );
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}

/** ISO 8601 in UTC with milliseconds (docs/design.md, decision 1). */
export const nowIso = (): string => new Date().toISOString();
