import path from 'node:path';
import type { StorageAdapter } from './adapter.js';
import { PostgresAdapter } from './postgres/adapter.js';
import { PostgresDatabase } from './postgres/database.js';

export { EVERYTHING } from './postgres/database.js';
import { appSchema, quoteIdent } from './postgres/layout.js';
import { SqliteAdapter } from './sqlite/adapter.js';
import { DiskFileStore } from '../diskFiles.js';
import type { FileStore } from '../files.js';
import { PostgresFileStore } from './postgres/files.js';
import { unreachableText } from '../../shared/unreachable.js';

/**
 * Where Backend Apps keep their data: SQLite files under the home, the embedded default,
 * or one PostgreSQL database (`BACKYARD_DATABASE_URL`) with a schema per app.
 */
export interface StorageProvider {
  /** `sqlite` or `postgres`, for logs and the README's wording. */
  readonly kind: 'sqlite' | 'postgres';
  /**
   * The storage of an app whose folder is `folder` (`apps/<appId>/`). A PostgreSQL adapter may still
   * be opening: await its `opened` before the first call.
   */
  open(applicationId: string, folder: string): StorageAdapter;
  /**
   * The uploaded files of an app whose folder is `folder`: `files/` in it (SQLite), or tables of the
   * app's schema (PostgreSQL), so that every process on the database serves them.
   */
  files(applicationId: string, folder: string): FileStore;
  /** Removes an app's data after its adapter closed (SQLite: nothing, the platform removes the folder). */
  drop(applicationId: string): Promise<void>;
  /** Closes what the adapters share (PostgreSQL's pool). */
  close(): Promise<void>;
  /**
   * Checks that the database answers (`backyard serve` does before it listens).
   * @throws Error naming the database (without its password) and what failed.
   */
  check(): Promise<void>;
  /**
   * Tells the other Backyard processes on the same database about an app (PostgreSQL's
   * LISTEN/NOTIFY); undefined when no other process can share the data (SQLite).
   */
  readonly broadcast?: Broadcast;
}

/** Announcements between the processes that serve the same apps. */
export interface Broadcast {
  /** Announces `payload` on `topic` (letters and `_`) to every process, this one included. */
  publish(topic: string, payload: string): Promise<void>;
  /** Calls `fn` for every announcement on `topic`. Resolves once listening. */
  subscribe(topic: string, fn: (payload: string) => void): Promise<void>;
}

/** SQLite: `apps/<appId>/data.db`, one connection per app held by this process. */
export const sqliteStorage: StorageProvider = {
  kind: 'sqlite',
  open: (_applicationId, folder) => new SqliteAdapter(path.join(folder, 'data.db')),
  files: (_applicationId, folder) => new DiskFileStore(path.join(folder, 'files')),
  drop: async () => undefined,
  close: async () => undefined,
  check: async () => undefined,
};

/**
 * PostgreSQL at `url`: every app's adapter on one pool, in the schema `app_<appId>`.
 * @param onError where errors of idle connections are reported.
 */
export function postgresStorage(url: string, onError: (error: Error) => void): StorageProvider {
  const db = new PostgresDatabase(url, onError);
  // One store per app, which remembers that its tables exist.
  const fileStores = new Map<string, PostgresFileStore>();
  return {
    kind: 'postgres',
    open: (applicationId) => new PostgresAdapter(db, appSchema(applicationId)),
    files: (applicationId) => {
      let store = fileStores.get(applicationId);
      if (!store) fileStores.set(applicationId, (store = new PostgresFileStore(db, appSchema(applicationId))));
      return store;
    },
    drop: async (applicationId) => {
      fileStores.delete(applicationId);
      await db.run(`DROP SCHEMA IF EXISTS ${quoteIdent(appSchema(applicationId))} CASCADE`);
    },
    close: () => db.close(),
    check: async () => {
      try {
        await db.run('SELECT 1');
      } catch (error) {
        throw new Error(unreachableText(url, error));
      }
    },
    broadcast: {
      publish: (topic, payload) => db.publish(`backyard_${topic}`, payload),
      subscribe: (topic, fn) => db.subscribe(`backyard_${topic}`, fn),
    },
  };
}
