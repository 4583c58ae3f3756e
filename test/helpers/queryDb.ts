import Database from 'better-sqlite3';
import pg from 'pg';
import type { Dialect } from '../../src/data/query/dialect.js';
import { postgresDialect } from '../../src/data/storage/postgres/dialect.js';
import { sqliteDialect } from '../../src/data/storage/sqlite/dialect.js';
import { registerQueryFunctions } from '../../src/data/storage/sqlite/functions.js';

/**
 * A database laid out as a storage adapter lays out an app, for the query compiler's tests
 * (test/query.test.ts): SQLite in memory, or a fresh schema of the PostgreSQL run's database.
 */
export interface QueryDb {
  dialect: Dialect;
  createClass(className: string): Promise<void>;
  createRelation(ownerClass: string, field: string): Promise<void>;
  /** Inserts `[objectId, createdAt, updatedAt, data JSON, acl JSON or null]`. */
  insert(className: string, row: unknown[]): Promise<void>;
  relate(ownerClass: string, field: string, owningId: string, relatedId: string): Promise<void>;
  /** Runs a SELECT whose first column is objectId (`?` placeholders), answering those ids. */
  ids(sql: string, params: unknown[]): Promise<string[]>;
  /** Runs any statement. */
  exec(sql: string): Promise<void>;
  /** The planner's text for a statement. */
  plan(sql: string, params: unknown[]): Promise<string>;
  close(): Promise<void>;
}

export function sqliteQueryDb(): QueryDb {
  const db = new Database(':memory:');
  registerQueryFunctions(db);
  const d = sqliteDialect;
  return {
    dialect: d,
    createClass: async (cls) => void db.exec(`CREATE TABLE ${d.classTable(cls)} (objectId TEXT PRIMARY KEY, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, data TEXT NOT NULL, acl TEXT)`),
    createRelation: async (cls, field) => void db.exec(`CREATE TABLE ${d.relationTable(cls, field)} (owningId TEXT NOT NULL, relatedId TEXT NOT NULL, PRIMARY KEY (owningId, relatedId))`),
    insert: async (cls, row) => void db.prepare(`INSERT INTO ${d.classTable(cls)} VALUES (?, ?, ?, ?, ?)`).run(...row),
    relate: async (cls, field, o, r) => void db.prepare(`INSERT INTO ${d.relationTable(cls, field)} VALUES (?, ?)`).run(o, r),
    ids: async (sql, params) => db.prepare(sql).all(...params).map((r) => (r as { objectId: string }).objectId),
    exec: async (sql) => void db.exec(sql),
    plan: async (sql, params) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...params)
        .map((r) => (r as { detail: string }).detail)
        .join('\n'),
    close: async () => db.close(),
  };
}

const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** A schema of its own in the database of BACKYARD_TEST_DATABASE_URL, dropped at close. */
export async function postgresQueryDb(): Promise<QueryDb> {
  const client = new pg.Client({ connectionString: process.env.BACKYARD_TEST_DATABASE_URL });
  await client.connect();
  const schema = `q_${Math.random().toString(36).slice(2, 10)}`;
  await client.query(`CREATE SCHEMA "${schema}"`);
  const d = postgresDialect(schema);
  const query = (sql: string, params: unknown[] = []) => client.query(numbered(sql), params);
  return {
    dialect: d,
    createClass: async (cls) =>
      void (await query(
        `CREATE TABLE ${d.classTable(cls)} ("objectId" text COLLATE "C" PRIMARY KEY, "createdAt" text COLLATE "C" NOT NULL, "updatedAt" text COLLATE "C" NOT NULL, data jsonb NOT NULL, acl jsonb)`,
      )),
    createRelation: async (cls, field) =>
      void (await query(`CREATE TABLE ${d.relationTable(cls, field)} ("owningId" text COLLATE "C" NOT NULL, "relatedId" text COLLATE "C" NOT NULL, PRIMARY KEY ("owningId", "relatedId"))`)),
    insert: async (cls, row) => void (await query(`INSERT INTO ${d.classTable(cls)} VALUES (?, ?, ?, ?::jsonb, ?::jsonb)`, row)),
    relate: async (cls, field, o, r) => void (await query(`INSERT INTO ${d.relationTable(cls, field)} VALUES (?, ?)`, [o, r])),
    ids: async (sql, params) => (await query(sql, params)).rows.map((r) => (r as { objectId: string }).objectId),
    exec: async (sql) => void (await query(sql)),
    plan: async (sql, params) => (await query(`EXPLAIN ${sql}`, params)).rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n'),
    close: async () => {
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    },
  };
}
