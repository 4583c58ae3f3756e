import { fieldPath } from '../../fieldPath.js';
import type { FieldType } from '../../types.js';
import type { StorageTransaction, StoredClass, StoredRow } from '../adapter.js';
import { classTableDdl, fieldIndexDdl, fieldIndexName, publicReadOf } from './classTables.js';
import { writeConfig } from './config.js';
import type { SqliteDatabase } from './database.js';
import { classTable, indexExpr, jsonPath, quoteIdent, relationTable, runStatement } from './layout.js';
import { SqliteReads } from './reads.js';
import { uniqueFault } from './uniqueUsers.js';

/**
 * A transaction on one app's `data.db`: its reads (reads.ts) and writes, run synchronously inside the
 * BEGIN IMMEDIATE ... COMMIT the adapter (adapter.ts) opened around it. Refuses use once that
 * transaction has ended (a promise left running past it). A schema change marks the database
 * (`forgetStatements`), so that a rollback reloads the schema cache.
 */
export class SqliteTransaction extends SqliteReads implements StorageTransaction {
  ended = false;

  protected override open(): SqliteDatabase {
    if (this.ended) throw new Error('This storage transaction has already ended.');
    return this.database;
  }

  async saveClass(cls: StoredClass): Promise<void> {
    const database = this.open();
    const { db } = database;
    const { className, ...rest } = cls;
    database.stmt('INSERT INTO _SCHEMA (className, schema) VALUES (?, ?) ON CONFLICT (className) DO UPDATE SET schema = excluded.schema').run(className, JSON.stringify(rest));
    if (!database.classes.has(className)) {
      runStatement(db, classTableDdl(classTable(className)));
      runStatement(db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`cls_${className}_createdAt`)} ON ${classTable(className)} (createdAt)`);
      if (className === '_User') {
        database.userIndexes();
        database.uniqueUsers.userIndexes();
      }
      database.forgetStatements();
    }
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') {
        runStatement(
          db,
          `CREATE TABLE IF NOT EXISTS ${relationTable(className, field)} (
             owningId TEXT NOT NULL, relatedId TEXT NOT NULL, PRIMARY KEY (owningId, relatedId)) WITHOUT ROWID`,
        );
        runStatement(db, `CREATE INDEX IF NOT EXISTS ${quoteIdent(`_Join:${field}:${className}_related`)} ON ${relationTable(className, field)} (relatedId)`);
      }
    }
    database.classes.set(cls);
    database.schemaChanged = true;
  }

  async dropClass(className: string): Promise<void> {
    const database = this.open();
    const cls = database.classes.get(className);
    if (!cls) return;
    for (const [field, type] of Object.entries(cls.fields)) {
      if (type.type === 'Relation') runStatement(database.db, `DROP TABLE IF EXISTS ${relationTable(className, field)}`);
    }
    runStatement(database.db, `DROP TABLE IF EXISTS ${classTable(className)}`);
    database.stmt('DELETE FROM _SCHEMA WHERE className = ?').run(className);
    database.classes.delete(className);
    database.forgetStatements();
  }

  /** Every index made here carries `publicRead` and its keys' JSON types (classTables.ts `fieldIndexDdl`: readable rows counted from the index alone). */
  async createIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void> {
    const database = this.open();
    runStatement(database.db, fieldIndexDdl(className, name, keys));
    database.forgetStatements();
  }

  async dropIndex(className: string, name: string): Promise<void> {
    const database = this.open();
    runStatement(database.db, `DROP INDEX IF EXISTS ${fieldIndexName(className, name)}`);
    database.forgetStatements();
  }

  async removeField(className: string, field: string, type: FieldType): Promise<void> {
    const database = this.open();
    if (type.type === 'Relation') runStatement(database.db, `DROP TABLE IF EXISTS ${relationTable(className, field)}`);
    else {
      const path = jsonPath(fieldPath([field]));
      database.stmt(`UPDATE ${classTable(className)} SET data = json_remove(data, ${path}) WHERE json_type(data, ${path}) IS NOT NULL`).run();
    }
    database.forgetStatements();
  }

  /** A `_User` write first gets its providers' unique indexes; a refusal by a unique index of `_User` is Parse's 202, 203 or 208 (uniqueUsers.ts). */
  async insert(className: string, row: StoredRow): Promise<void> {
    const database = this.open();
    if (className === '_User') database.uniqueUsers.beforeWrite(row.data.authData);
    try {
      database
        .stmt(`INSERT INTO ${classTable(className)} (objectId, createdAt, updatedAt, data, acl, publicRead) VALUES (?, ?, ?, ?, ?, ?)`)
        .run(row.objectId, row.createdAt, row.updatedAt, JSON.stringify(row.data), row.acl === null ? null : JSON.stringify(row.acl), publicReadOf(row.acl));
    } catch (error) {
      throw uniqueFault(error);
    }
  }

  async replace(className: string, row: StoredRow): Promise<boolean> {
    const database = this.open();
    if (className === '_User') database.uniqueUsers.beforeWrite(row.data.authData);
    try {
      const result = database
        .stmt(`UPDATE ${classTable(className)} SET updatedAt = ?, data = ?, acl = ?, publicRead = ? WHERE objectId = ?`)
        .run(row.updatedAt, JSON.stringify(row.data), row.acl === null ? null : JSON.stringify(row.acl), publicReadOf(row.acl), row.objectId);
      return result.changes > 0;
    } catch (error) {
      throw uniqueFault(error);
    }
  }

  async delete(className: string, objectId: string): Promise<boolean> {
    const database = this.open();
    const cls = database.classes.get(className);
    const deleted = database.stmt(`DELETE FROM ${classTable(className)} WHERE objectId = ?`).run(objectId).changes > 0;
    if (deleted && cls) {
      for (const [field, type] of Object.entries(cls.fields)) {
        if (type.type === 'Relation') database.stmt(`DELETE FROM ${relationTable(className, field)} WHERE owningId = ?`).run(objectId);
      }
    }
    return deleted;
  }

  async deleteAll(className: string): Promise<void> {
    const database = this.open();
    const cls = database.classes.get(className);
    database.stmt(`DELETE FROM ${classTable(className)}`).run();
    for (const [field, type] of Object.entries(cls?.fields ?? {})) {
      if (type.type === 'Relation') database.stmt(`DELETE FROM ${relationTable(className, field)}`).run();
    }
  }

  async addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void> {
    const insert = this.open().stmt(`INSERT OR IGNORE INTO ${relationTable(ownerClass, field)} (owningId, relatedId) VALUES (?, ?)`);
    for (const id of relatedIds) insert.run(owningId, id);
  }

  async removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void> {
    const remove = this.open().stmt(`DELETE FROM ${relationTable(ownerClass, field)} WHERE owningId = ? AND relatedId = ?`);
    for (const id of relatedIds) remove.run(owningId, id);
  }

  async putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): Promise<void> {
    writeConfig(this.open().db, params, masterKeyOnly);
  }
}
