import type { Db } from '../../../shared/sqlite.js';
import { fieldPath } from '../../fieldPath.js';
import type { StoredClass, StoredRow } from '../adapter.js';
import { COLUMN_FIELDS, classTable, indexExpr, jsonPath, quoteIdent, runStatement } from './layout.js';

/**
 * The layout of a class's table in an app's `data.db`: a rowid table with its objectId as primary key
 * (an index of its own), and `publicRead`, 1 when anyone may read the object (no ACL, or the ACL's
 * `*` grants read) and 0 otherwise, written with every ACL and kept last in every index made
 * through the schema API. A query reads rows through an index lazily (SQLite defers the seek into the table until a
 * column outside the index is read), so a `count` or an index-only filter over public objects is
 * answered from the index alone; readability is tested on `publicRead` first ("keep public
 * rows countable from an index alone"). Tables made before it (`WITHOUT ROWID`, no `publicRead`,
 * where SQLite seeks the table for every index entry) are rebuilt at open: `upgradeClassTables`.
 */
export const classTableDdl = (table: string): string =>
  `CREATE TABLE IF NOT EXISTS ${table} (objectId TEXT NOT NULL PRIMARY KEY, createdAt TEXT NOT NULL, updatedAt TEXT NOT NULL, data TEXT NOT NULL, acl TEXT, publicRead INTEGER NOT NULL)`;

/** Whether anyone may read an object with this ACL (Parse: no ACL, or `*` with `read: true`): 1 or 0. */
export const publicReadOf = (acl: StoredRow['acl']): 0 | 1 => (acl === null || acl['*']?.read === true ? 1 : 0);

/** The same rule in SQL over the stored ACL text, for rows written before the column existed. */
const PUBLIC_READ_SQL = `(acl IS NULL OR json_extract(acl, '$."*".read') IS 1)`;

/** The name in `data.db` of an index made through the schema API. */
export const fieldIndexName = (className: string, name: string): string => quoteIdent(`idx_${className}_${name}`);

/**
 * The CREATE INDEX of an index made through the schema API (Parse's `indexes`: key → 1 or -1): each
 * key's expression (layout.ts `indexExpr`), then `publicRead`, then the JSON type of each key inside
 * `data`. The compiler guards a comparison by the value's JSON type (`json_type(t.data, '$."score"')
 * IN ('integer','real')`, so that a string or a boolean never passes a numeric range); with the type
 * in the index, SQLite checks that guard and the ACL from the index alone, so a count or filter over a
 * range reads no row (a count of 1,500 of 100,000 objects: about 2.6 ms without, 0.2 ms with).
 */
export function fieldIndexDdl(className: string, name: string, keys: Record<string, 1 | -1>): string {
  const paths = Object.keys(keys).map((key) => fieldPath(key.split('.')));
  const columns = Object.values(keys).map((dir, i) => `${indexExpr(paths[i]!)}${dir === -1 ? ' DESC' : ''}`);
  const types = paths.filter((p) => !(p.length === 1 && COLUMN_FIELDS.has(p[0]!))).map((p) => `json_type(data, ${jsonPath(p)})`);
  return `CREATE INDEX IF NOT EXISTS ${fieldIndexName(className, name)} ON ${classTable(className)} (${[...columns, 'publicRead', ...types].join(', ')})`;
}

/**
 * Makes again each schema-API index made before it carried its keys' JSON types (`fieldIndexDdl`),
 * all in one transaction. Runs at open, after `upgradeClassTables`, before anything is served.
 * @returns the names (`<className>.<index>`) of the indexes made again.
 */
export function upgradeFieldIndexes(db: Db, classes: readonly StoredClass[]): string[] {
  const existing = new Map(
    (db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`).all() as Array<{ name: string; sql: string }>).map((r) => [r.name, r.sql]),
  );
  const stale = classes.flatMap((cls) =>
    Object.entries(cls.indexes ?? {})
      .filter(([name, keys]) => {
        const sql = existing.get(`idx_${cls.className}_${name}`);
        return sql !== undefined && !sql.includes('json_type(') && fieldIndexDdl(cls.className, name, keys).includes('json_type(');
      })
      .map(([name, keys]) => ({ className: cls.className, name, keys })),
  );
  if (stale.length === 0) return [];
  db.transaction(() => {
    for (const { className, name, keys } of stale) {
      runStatement(db, `DROP INDEX ${fieldIndexName(className, name)}`);
      runStatement(db, fieldIndexDdl(className, name, keys));
    }
  }).immediate();
  return stale.map((s) => `${s.className}.${s.name}`);
}

/**
 * Indexes of a class that carry `publicRead`: those made through the schema API. The createdAt index
 * does not: an update sets `publicRead`, which would rewrite every index holding it, and the indexes on
 * fields are rewritten by an update of `data` anyway.
 */
const carriesPublicRead = (indexName: string, className: string): boolean => indexName.startsWith(`idx_${className}_`);

/**
 * Rebuilds every class table of the old layout (`WITHOUT ROWID`, no `publicRead`) in the new one,
 * each in a transaction of its own: rows copied with their `publicRead` computed from the ACL, the
 * old table dropped, the new one renamed, and its indexes made again, those of `carriesPublicRead`
 * with `publicRead` appended. Runs at open, before anything is served.
 * @returns the names of the classes rebuilt.
 */
export function upgradeClassTables(db: Db): string[] {
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'cls\\_%' ESCAPE '\\'`).all() as Array<{ name: string }>;
  const rebuilt: string[] = [];
  for (const { name } of tables) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as Array<{ name: string }>;
    if (columns.some((c) => c.name === 'publicRead')) continue;
    const className = name.slice('cls_'.length);
    const table = quoteIdent(name);
    const staging = quoteIdent(`${name}:upgrading`);
    const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(name) as Array<{ name: string; sql: string }>;
    db.transaction(() => {
      runStatement(db, `DROP TABLE IF EXISTS ${staging}`);
      runStatement(db, classTableDdl(staging));
      runStatement(db, `INSERT INTO ${staging} (objectId, createdAt, updatedAt, data, acl, publicRead) SELECT objectId, createdAt, updatedAt, data, acl, ${PUBLIC_READ_SQL} FROM ${table}`);
      runStatement(db, `DROP TABLE ${table}`);
      runStatement(db, `ALTER TABLE ${staging} RENAME TO ${table}`);
      for (const index of indexes) {
        // Our own CREATE INDEX text always ends with the column list's closing parenthesis.
        runStatement(db, carriesPublicRead(index.name, className) ? `${index.sql.replace(/\)\s*$/, '')}, publicRead)` : index.sql);
      }
    }).immediate();
    rebuilt.push(className);
  }
  return rebuilt;
}
