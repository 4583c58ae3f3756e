import type { GroupPlan } from '../../aggregate/groupPlan.js';
import type { FieldType } from '../../types.js';
import type { ConfigEntry, FindOptions, StorageAdapter, StorageTransaction, StoredClass, StoredRow } from '../adapter.js';
import { sqliteDialect } from './dialect.js';
import { SqliteStore } from './store.js';
import { uniqueFault } from './uniqueUsers.js';

/**
 * A transaction on a SqliteStore: the store's synchronous statements behind the asynchronous
 * interface. Refuses use once its transaction has ended (a promise left running past it).
 */
class SqliteTransaction implements StorageTransaction {
  ended = false;

  constructor(private readonly store: SqliteStore) {}

  private live(): SqliteStore {
    if (this.ended) throw new Error('This storage transaction has already ended.');
    return this.store;
  }

  async get(className: string, objectId: string) {
    return this.live().get(className, objectId);
  }
  async find(className: string, options: FindOptions) {
    return this.live().find(className, options);
  }
  async count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>) {
    return this.live().count(className, options);
  }
  async relatedIds(ownerClass: string, field: string, owningId: string) {
    return this.live().relatedIds(ownerClass, field, owningId);
  }
  async owningIds(ownerClass: string, field: string, relatedIds: readonly string[]) {
    return this.live().owningIds(ownerClass, field, relatedIds);
  }
  async getConfig(): Promise<ConfigEntry[]> {
    return this.live().getConfig();
  }
  async group(className: string, where: unknown, plan: GroupPlan) {
    return this.live().group(className, where, plan);
  }
  async saveClass(cls: StoredClass) {
    this.live().saveClass(cls);
  }
  async dropClass(className: string) {
    this.live().dropClass(className);
  }
  async createIndex(className: string, name: string, keys: Record<string, 1 | -1>) {
    this.live().createIndex(className, name, keys);
  }
  async dropIndex(className: string, name: string) {
    this.live().dropIndex(className, name);
  }
  async removeField(className: string, field: string, type: FieldType) {
    this.live().removeField(className, field, type);
  }
  /** A `_User` write first gets its providers' unique indexes; a refusal by a unique index of `_User` is Parse's 202, 203 or 208 (uniqueUsers.ts). */
  async insert(className: string, row: StoredRow) {
    const store = this.live();
    if (className === '_User') store.uniqueUsers.beforeWrite(row.data.authData);
    try {
      store.insert(className, row);
    } catch (error) {
      throw uniqueFault(error);
    }
  }
  async replace(className: string, row: StoredRow) {
    const store = this.live();
    if (className === '_User') store.uniqueUsers.beforeWrite(row.data.authData);
    try {
      return store.replace(className, row);
    } catch (error) {
      throw uniqueFault(error);
    }
  }
  async delete(className: string, objectId: string) {
    return this.live().delete(className, objectId);
  }
  async deleteAll(className: string) {
    this.live().deleteAll(className);
  }
  async addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]) {
    this.live().addRelations(ownerClass, field, owningId, relatedIds);
  }
  async removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]) {
    this.live().removeRelations(ownerClass, field, owningId, relatedIds);
  }
  async putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>) {
    this.live().putConfig(params, masterKeyOnly);
  }
}

/**
 * The SQLite StorageAdapter (issue 3; asynchronous since issue 16): one `data.db` per Backend App,
 * answered by a SqliteStore on this thread. One connection serves the app, so transactions take
 * turns: one waits for the transaction in progress to end (SQLite has one writer anyway), so code
 * inside a transaction uses its handle (or JoinedStorage), never a new transaction. Reads outside a
 * transaction are answered at once, from the same connection: between the awaits of an open
 * transaction they may see its writes before it commits (docs/parse-differences.md).
 */
export class SqliteAdapter implements StorageAdapter {
  readonly dialect = sqliteDialect;
  private readonly store: SqliteStore;
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  constructor(file: string) {
    this.store = new SqliteStore(file);
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy = true;
    const tx = new SqliteTransaction(this.store);
    try {
      this.store.begin();
      let result: T;
      try {
        result = await fn(tx);
        tx.ended = true;
        this.store.commit();
      } catch (error) {
        tx.ended = true;
        this.store.rollback();
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
    return this.store.durable(alone);
  }

  loadSchema(): StoredClass[] {
    return this.store.loadSchema();
  }
  getClass(className: string): Readonly<StoredClass> | undefined {
    return this.store.getClass(className);
  }
  fields(className: string): Readonly<Record<string, FieldType>> | undefined {
    return this.store.fields(className);
  }

  async get(className: string, objectId: string) {
    return this.store.get(className, objectId);
  }
  async find(className: string, options: FindOptions) {
    return this.store.find(className, options);
  }
  async count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>) {
    return this.store.count(className, options);
  }
  async relatedIds(ownerClass: string, field: string, owningId: string) {
    return this.store.relatedIds(ownerClass, field, owningId);
  }
  async owningIds(ownerClass: string, field: string, relatedIds: readonly string[]) {
    return this.store.owningIds(ownerClass, field, relatedIds);
  }
  async getConfig(): Promise<ConfigEntry[]> {
    return this.store.getConfig();
  }
  async group(className: string, where: unknown, plan: GroupPlan) {
    return this.store.group(className, where, plan);
  }

  async close(): Promise<void> {
    this.store.close();
  }
}
