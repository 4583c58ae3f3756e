import type { FieldType } from '../../types.js';
import type { StorageAdapter, StorageReads, StorageTransaction, StoredClass } from '../adapter.js';
import { SqliteDatabase } from './database.js';
import { sqliteDialect } from './dialect.js';
import { SqliteReads } from './reads.js';
import { SqliteTransaction } from './transaction.js';

/**
 * The SQLite StorageAdapter: one `data.db` per Backend App, open on this thread (database.ts), read
 * through reads.ts and written through transaction.ts. One connection serves the app, so transactions take
 * turns: one waits for the transaction in progress to end (SQLite has one writer anyway), so code
 * inside a transaction uses its handle (or JoinedStorage), never a new transaction. Reads outside a
 * transaction are answered at once, from the same connection: between the awaits of an open
 * transaction they may see its writes before it commits (docs/parse-differences.md).
 */
export class SqliteAdapter implements StorageAdapter {
  readonly dialect = sqliteDialect;
  private readonly database: SqliteDatabase;
  private readonly reads: SqliteReads;
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  constructor(file: string) {
    this.database = new SqliteDatabase(file);
    this.reads = new SqliteReads(this.database);
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    const tx = new SqliteTransaction(this.database);
    try {
      this.database.begin();
      let result: T;
      try {
        result = await fn(tx);
        tx.ended = true;
        this.database.commit();
      } catch (error) {
        tx.ended = true;
        this.database.rollback();
        throw error;
      }
      return result;
    } finally {
      // Handed over while still busy, so that nobody slips in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    }
  }

  durable(alone = false): Promise<void> {
    return this.database.durable(alone);
  }

  loadSchema(): StoredClass[] {
    return this.database.classes.load();
  }
  schemaGeneration(): number {
    return this.database.classes.generation;
  }
  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.database.getClass(className);
  }
  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.database.fields(className);
  }

  get: StorageReads['get'] = (className, objectId) => this.reads.get(className, objectId);
  find: StorageReads['find'] = (className, options) => this.reads.find(className, options);
  findText: NonNullable<StorageReads['findText']> = (className, options) => this.reads.findText(className, options);
  count: StorageReads['count'] = (className, options) => this.reads.count(className, options);
  relatedIds: StorageReads['relatedIds'] = (ownerClass, field, owningId) => this.reads.relatedIds(ownerClass, field, owningId);
  owningIds: StorageReads['owningIds'] = (ownerClass, field, relatedIds) => this.reads.owningIds(ownerClass, field, relatedIds);
  getConfig: StorageReads['getConfig'] = () => this.reads.getConfig();
  group: StorageReads['group'] = (className, where, plan) => this.reads.group(className, where, plan);

  async close(): Promise<void> {
    this.database.close();
  }
}
