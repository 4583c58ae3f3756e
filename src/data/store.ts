import { ObjectChanges, type ObjectChange } from './livequery/changes.js';
import type { FileUrl } from './objects/output.js';
import { objectJson } from './objects/output.js';
import { Schema } from './schema.js';
import { DEFAULT_SETTINGS, type ServerSettings } from './settings.js';
import type { ConfigEntry, FindOptions, StorageAdapter, StoredClass, StoredRow } from './storage/adapter.js';
import { JoinedStorage } from './storage/joined.js';
import type { GroupPlan } from './aggregate/groupPlan.js';
import type { FieldType } from './types.js';

/**
 * One Backend App's master view of its data: rows read and written as they are stored, with no ACL,
 * class-level permission or protected field in the way, as Parse Server's `DatabaseController`
 * answers a call made with `{ acl: undefined }` (src/Controllers/DatabaseController.js). It alone
 * holds the storage adapter, so that every transaction is opened here.
 *
 * Routes never hold one: they are given the checking face (`DataEngine`, engine.ts, which runs
 * over a store) and the app's services (appServices.ts), which hold the store for users,
 * sessions, roles, config, schemas, aggregation and push. Callers of the data API's own (the job
 * scheduler, LiveQuery's session checks, tests) get it from `DataApps.store`.
 */
export class DataStore {
  readonly schema: Schema;

  constructor(
    readonly appId: string,
    /** The storage adapter of the app (storage/adapter.ts); a JoinedStorage inside `atomically`. */
    readonly storage: StorageAdapter,
    /** The public URL of a stored file name. */
    readonly fileUrl: FileUrl,
    /** The app's server options in force (settings.ts), kept fresh by the caller (apps.ts). */
    readonly settings: () => ServerSettings = () => DEFAULT_SETTINGS,
    /** Committed object changes of create, update and delete, for LiveQuery (livequery/server.ts). */
    readonly changes: ObjectChanges = new ObjectChanges(),
  ) {
    this.schema = new Schema(storage);
  }

  /** The API form of a row (Parse REST guide, "Objects": pointers, dates, files as JSON). */
  toJson(className: string, row: StoredRow): Record<string, unknown> {
    return objectJson(row, this.schema.fields(className), this.fileUrl);
  }

  /** Whether this store runs inside a transaction of `atomically` (its writes commit with it). */
  get bound(): boolean {
    return this.storage instanceof JoinedStorage;
  }

  /**
   * Runs `fn` all or nothing with a store bound to one storage transaction (storage/joined.ts):
   * every write made through that store (and the engines and services over it) commits when `fn`
   * resolves and is rolled back when it rejects (a transactional batch, a sign-up with its session).
   * Called on a bound store, runs `fn` in the same transaction. Changes are told on this store's
   * `changes` once the whole transaction has committed, and not at all if it rolls back.
   */
  atomically<T>(fn: (store: DataStore) => Promise<T>): Promise<T> {
    if (this.bound) return fn(this);
    const committed: ObjectChange[] = [];
    return this.storage
      .transaction((tx) => {
        const joined = new DataStore(this.appId, new JoinedStorage(this.storage, tx), this.fileUrl, this.settings);
        if (this.changes.heard) joined.changes.listen((change) => committed.push(change));
        return fn(joined);
      })
      .then((result) => {
        for (const change of committed) this.changes.emit(change);
        return result;
      });
  }

  /**
   * Whether the class exists. With a storage other processes share, a class this process does not
   * know is looked for there first (StorageAdapter.catchUp), so that a class another process just
   * made (a first sign-up's `_Session`) is not answered as missing.
   */
  known(className: string): boolean | Promise<boolean> {
    if (this.schema.has(className) || !this.storage.catchUp) return this.schema.has(className);
    return this.storage.catchUp().then(() => this.schema.has(className));
  }

  /** `read()` when the class exists, else `none`, without a promise turn when that is known at once. */
  private ifKnown<T>(className: string, read: () => Promise<T>, none: T): Promise<T> {
    const known = this.known(className);
    if (known === true) return read();
    if (known === false) return Promise.resolve(none);
    return known.then((yes) => (yes ? read() : none));
  }

  /** Rows of a class by a query, without ACL checks; none for an unknown class. */
  rows(className: string, options: FindOptions): Promise<StoredRow[]> {
    return this.ifKnown(className, () => this.storage.find(className, options), []);
  }

  /** One row by objectId, without ACL checks; undefined for an unknown class or object. */
  row(className: string, objectId: string): Promise<StoredRow | undefined> {
    return this.ifKnown(className, () => this.storage.get(className, objectId), undefined);
  }

  /** How many rows of a class match `where`, without ACL checks. */
  countRows(className: string, where: Record<string, unknown> = {}): Promise<number> {
    return this.ifKnown(className, () => this.storage.count(className, { where }), 0);
  }

  /** A `$group` the storage answers itself (aggregate/groupPlan.ts), without ACL checks; none for an unknown class. */
  groupRows(className: string, where: unknown, plan: GroupPlan): Promise<Array<Record<string, unknown>>> {
    return this.ifKnown(className, () => this.storage.group(className, where, plan), []);
  }

  /** owningIds of `ownerClass` whose `field` relation holds one of `relatedIds` (role inheritance). */
  owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): Promise<string[]> {
    return this.storage.owningIds(ownerClass, field, relatedIds);
  }

  /**
   * Replaces a stored row as is (fields the engine computed already: a user's password hash).
   * @param announce tell LiveQuery of the change, as an update (a verified email, a reset password);
   *   not for the second half of a write that announced itself (a signup's ACL).
   */
  replaceRow(className: string, row: StoredRow, announce = false): Promise<boolean> {
    if (!announce || !this.changes.heard) return this.storage.transaction((tx) => tx.replace(className, row));
    let original: StoredRow | undefined;
    const written = this.storage.transaction(async (tx) => {
      original = await tx.get(className, row.objectId);
      return tx.replace(className, row);
    });
    return written.then((changed) => {
      if (changed) this.changes.emit({ kind: 'save', className, object: row, original });
      return changed;
    });
  }

  /**
   * Deletes rows by objectId, without ACL checks (a user's sessions on logout or password change).
   * Each deletion is told as a change, so that LiveQuery ends a deleted session's subscriptions at once.
   */
  deleteRows(className: string, objectIds: readonly string[]): Promise<void> {
    if (!this.changes.heard) {
      return this.storage.transaction(async (tx) => {
        for (const objectId of objectIds) await tx.delete(className, objectId);
      });
    }
    let gone: StoredRow[] = [];
    const deleted = this.storage.transaction(async (tx) => {
      gone = [];
      for (const objectId of objectIds) {
        const original = await tx.get(className, objectId);
        if (original && (await tx.delete(className, objectId))) gone.push(original);
      }
    });
    return deleted.then(() => {
      for (const original of gone) this.changes.emit({ kind: 'delete', className, original });
    });
  }

  /** Creates an index unless the class has it (authData ids on `_User`); not recorded in the class's `indexes`. */
  ensureIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void> {
    return this.storage.transaction((tx) => tx.createIndex(className, name, keys));
  }

  /** The app's config parameters (Parse's `/config`). */
  config(): Promise<ConfigEntry[]> {
    return this.storage.getConfig();
  }

  /** Sets config parameters (Parse's `PUT /config`). */
  putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): Promise<void> {
    return this.storage.transaction((tx) => tx.putConfig(params, masterKeyOnly));
  }

  /** Deletes every object of a class (Parse's `DELETE /purge/<className>`). */
  purge(className: string): Promise<void> {
    return this.storage.transaction(async (tx) => {
      if (this.schema.has(className)) await tx.deleteAll(className);
    });
  }

  /**
   * Runs a schema change (schemaChanges.ts: create, update or drop a class) in one transaction,
   * handing it only the storage steps a schema change takes; a rejection takes every step back.
   */
  changeSchema<T>(change: (tx: SchemaTransaction) => Promise<T>): Promise<T> {
    return this.storage.transaction((tx) =>
      change({
        save: (cls) => tx.saveClass(cls),
        drop: (className) => tx.dropClass(className),
        createIndex: (className, name, keys) => tx.createIndex(className, name, keys),
        dropIndex: (className, name) => tx.dropIndex(className, name),
        removeField: (className, field, type) => tx.removeField(className, field, type),
        count: (className) => tx.count(className, {}),
      }),
    );
  }

  /** Resolves once every committed write is on stable storage (StorageAdapter.durable). */
  durable(alone?: boolean): Promise<void> {
    return this.storage.durable(alone);
  }

  /** While the storage is still opening: resolves once it is open (call nothing else before). */
  get opened(): Promise<void> | undefined {
    return this.storage.opened;
  }

  close(): Promise<void> {
    return this.storage.close();
  }
}

/** The storage steps a schema change may take (`DataStore.changeSchema`). */
export interface SchemaTransaction {
  save(cls: StoredClass): Promise<void>;
  drop(className: string): Promise<void>;
  createIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void>;
  dropIndex(className: string, name: string): Promise<void>;
  removeField(className: string, field: string, type: FieldType): Promise<void>;
  count(className: string): Promise<number>;
}
