import type { Migration } from '../../../shared/sqlite.js';

/**
 * Numbered migrations of each app's `data.db`. Class tables are created as classes appear; this
 * holds only what every app has.
 */
export const dataMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'schema and config',
    sql: `
      CREATE TABLE _SCHEMA (className TEXT PRIMARY KEY, schema TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE _CONFIG (key TEXT PRIMARY KEY, value TEXT NOT NULL, masterKeyOnly INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
    `,
  },
];
