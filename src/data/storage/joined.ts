import type { StorageAdapter, StorageTransaction } from './adapter.js';

/**
 * A StorageAdapter whose every call goes to one open transaction `tx` of `base`: its reads see the
 * transaction's writes, and `transaction(fn)` runs `fn` in `tx` itself instead of waiting for a new
 * one. The engine bound to a transaction (DataEngine.atomically) runs on it, so that the engine
 * writes of a transactional batch or a sign-up commit together. The schema cache, `durable` and
 * `close` are the base adapter's.
 */
export class JoinedStorage implements StorageAdapter {
  constructor(
    private readonly base: StorageAdapter,
    private readonly tx: StorageTransaction,
  ) {}

  get dialect() {
    return this.base.dialect;
  }
  get opened() {
    return this.base.opened;
  }
  // A transaction's cache was brought up to date when it began (and nobody else changes it meanwhile).
  readonly catchUp = undefined;
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    return fn(this.tx);
  }
  durable(alone?: boolean): Promise<void> {
    return this.base.durable(alone);
  }
  loadSchema() {
    return this.base.loadSchema();
  }
  schemaGeneration() {
    return this.base.schemaGeneration();
  }
  getClass(className: string) {
    return this.base.getClass(className);
  }
  fields(className: string) {
    return this.base.fields(className);
  }
  get: StorageTransaction['get'] = (className, objectId) => this.tx.get(className, objectId);
  find: StorageTransaction['find'] = (className, options) => this.tx.find(className, options);
  count: StorageTransaction['count'] = (className, options) => this.tx.count(className, options);
  relatedIds: StorageTransaction['relatedIds'] = (ownerClass, field, owningId) => this.tx.relatedIds(ownerClass, field, owningId);
  owningIds: StorageTransaction['owningIds'] = (ownerClass, field, relatedIds) => this.tx.owningIds(ownerClass, field, relatedIds);
  getConfig: StorageTransaction['getConfig'] = () => this.tx.getConfig();
  group: StorageTransaction['group'] = (className, where, plan) => this.tx.group(className, where, plan);
  close(): Promise<void> {
    return this.base.close();
  }
}
