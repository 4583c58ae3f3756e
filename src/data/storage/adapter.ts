import type { GroupPlan } from '../aggregate/groupPlan.js';
import type { FieldType } from '../types.js';
import type { Dialect } from '../query/dialect.js';
import type { ReadQuery } from '../query/statement.js';

/** Class-level permissions as `/schemas` carries them (Parse docs, "Class Level Permissions"). */
export type ClassLevelPermissions = Partial<
  Record<'find' | 'count' | 'get' | 'create' | 'update' | 'delete' | 'addField', Record<string, boolean>>
> & {
  protectedFields?: Record<string, string[]>;
  /** The ACL a new object of the class gets when it is created without one (`currentUser`: its creator). */
  ACL?: Record<string, { read?: boolean; write?: boolean }>;
};

/** One class as the schema stores it. */
export interface StoredClass {
  className: string;
  /** Every field but objectId, createdAt, updatedAt and ACL, which every class has. */
  fields: Record<string, FieldType>;
  classLevelPermissions: ClassLevelPermissions;
  /** Index name → keys (`{ "score": 1 }`), as Parse's `indexes` key. `_id_` is implicit. */
  indexes: Record<string, Record<string, 1 | -1>>;
}

/** An object as storage keeps it. `data` holds every field but the columns, in Parse JSON form. */
export interface StoredRow {
  objectId: string;
  createdAt: string;
  updatedAt: string;
  data: Record<string, unknown>;
  acl: Record<string, { read?: boolean; write?: boolean }> | null;
}

/** What a find asks storage for: the statement compiler's query (query/statement.ts), whose `where` it validates. */
export type FindOptions = ReadQuery;

/** The app's config parameters (Parse's `/config`), each with whether only the master key sees it. */
export interface ConfigEntry {
  key: string;
  value: unknown;
  masterKeyOnly: boolean;
}

/**
 * Reads of a Backend App's objects, relations and config. Asynchronous, so that a network database
 * can answer them. Throws ParseError for the caller's mistakes in queries (102, 105) and
 * plain Errors for storage failures.
 */
export interface StorageReads {
  get(className: string, objectId: string): Promise<StoredRow | undefined>;
  find(className: string, options: FindOptions): Promise<StoredRow[]>;
  /**
   * The objects `find` answers as JSON texts joined by commas ('' for none; the inside of a JSON
   * array), each the object objects/output.ts `objectJson` makes of the row, written by the database
   * from what it stores rather than parsed and written again here: for engine.ts `findText` (which
   * sends it on) and `findObjects` (which parses it), only where objectJson leaves the stored data
   * as it is (engine.ts `asTextApplies`). A joined storage (a transactional batch) leaves it out,
   * and the engine reads objects.
   */
  findText?(className: string, options: FindOptions): Promise<string>;
  /**
   * The object `get` reads, as the JSON text `findText` writes for each (`json`), with its row's ACL
   * (`acl`) for the caller's read check; undefined when there is none. For engine.ts `getText`, where
   * `findText` would apply; a joined storage leaves it out as it does `findText`.
   */
  getText?(className: string, objectId: string): Promise<{ acl: StoredRow['acl']; json: string } | undefined>;
  count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): Promise<number>;
  /** objectIds related to `owningId` through `ownerClass.field`. */
  relatedIds(ownerClass: string, field: string, owningId: string): Promise<string[]>;
  /** owningIds of `ownerClass` whose `field` relation holds one of `relatedIds`. */
  owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): Promise<string[]>;
  getConfig(): Promise<ConfigEntry[]>;
  /**
   * A `$group` answered by the database (aggregate/groupPlan.ts) over the objects `where` selects,
   * without ACL checks (aggregation is the master key's): one document per group, `{objectId: key,
   * <output>: value}`, in the order the groups first appear by `createdAt` (then objectId),
   * as the objects are read for the in-memory run.
   */
  group(className: string, where: unknown, plan: GroupPlan): Promise<Array<Record<string, unknown>>>;
}

/**
 * A transaction of the storage: its reads see its own writes, and its writes are committed together
 * when the function given to `StorageAdapter.transaction` resolves, or not at all. Writes exist only
 * here: every change to an app's data is made in a transaction, which the engine opens.
 */
export interface StorageTransaction extends StorageReads {
  /** Creates or replaces a class's schema entry, creating its table when it has none. */
  saveClass(cls: StoredClass): Promise<void>;
  /** Drops the class, its rows, its relation tables and its indexes. */
  dropClass(className: string): Promise<void>;
  /** Creates a real index over the fields of `keys`; a relation or unknown field is the caller's to refuse. */
  createIndex(className: string, name: string, keys: Record<string, 1 | -1>): Promise<void>;
  dropIndex(className: string, name: string): Promise<void>;
  /** Removes a field from every object of the class (and drops a relation's table). */
  removeField(className: string, field: string, type: FieldType): Promise<void>;

  insert(className: string, row: StoredRow): Promise<void>;
  /** Replaces the row's data, acl and updatedAt. Resolves false when there is no such row. */
  replace(className: string, row: StoredRow): Promise<boolean>;
  delete(className: string, objectId: string): Promise<boolean>;
  /** Deletes every row of the class (Parse's purge). */
  deleteAll(className: string): Promise<void>;
  addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void>;
  removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): Promise<void>;
  /** Sets config parameters; `masterKeyOnly` marks those hidden from client keys. */
  putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): Promise<void>;
}

/**
 * The storage a Backend App's data API runs on (asynchronous, with an explicit
 * transaction handle, so that a network database such as PostgreSQL can implement it).
 * The schema is read from the adapter's cache, synchronously: it changes only through
 * `saveClass`/`dropClass` in a transaction, and a rolled-back transaction leaves it as it was.
 */
export interface StorageAdapter extends StorageReads {
  /** The SQL its queries compile to (query/dialect.ts); the engine checks queries of tableless classes with it. */
  readonly dialect: Dialect;
  /**
   * While the adapter is still opening (a network database loading the schema): resolves once it
   * is open; await it before any other call. Undefined once open (and always for SQLite).
   */
  readonly opened?: Promise<void>;
  /**
   * For a storage other processes share: brings the schema cache up to date with their changes
   * (which it otherwise learns within one notification's delay). Called when a class is not in the
   * cache, before answering that it does not exist. Undefined when no other process writes.
   */
  catchUp?(): Promise<void>;
  /**
   * Runs `fn` with a transaction: everything it writes is committed when its promise resolves, or
   * nothing is when it rejects. Transactions may take turns: inside `fn`, use `tx` (or a
   * JoinedStorage over it, joined.ts), never a new transaction of the same adapter.
   * @throws what `fn` throws, after rolling back.
   */
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T>;
  /**
   * Resolves once every change committed before the call is on stable storage. Front ends await it
   * before answering a write, so a success answer means the change is on disk.
   * @param alone true when no other request is in flight: an adapter may then sync at once on this
   *   thread rather than hand the sync to another and wait to be woken (nobody could share it).
   */
  durable(alone?: boolean): Promise<void>;

  /** Every class's schema entry (copies). */
  loadSchema(): StoredClass[];
  /** A number that changes whenever any class's schema entry does (storage/schemaCache.ts `generation`). */
  schemaGeneration(): number;
  /** One class's schema entry, shared and read-only (copy it to change it), or undefined. */
  getClass(className: string): Readonly<StoredClass> | undefined;
  /** Every field of a class with its type, the default fields included; undefined for an unknown class. */
  fields(className: string): Readonly<Record<string, FieldType>> | undefined;

  close(): Promise<void>;
}
