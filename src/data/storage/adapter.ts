import type { QueryAccess } from '../auth/context.js';
import type { FieldType } from '../types.js';

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

/** What a find asks storage for; `where` is validated by the adapter's compiler. */
export interface FindOptions {
  where?: unknown;
  /** Parse's `order`: "a,-b". */
  order?: string;
  limit?: number;
  skip?: number;
  /**
   * Principals whose read access counts (`*`, a user's objectId, `role:<name>`); undefined for the
   * master key, which reads everything.
   */
  principals?: readonly string[];
  /** The caller's class-level permissions for the other classes and the fields the query names; undefined for the master key and internal reads. */
  access?: QueryAccess;
}

/**
 * The storage a Backend App's data API runs on (issue 3: behind an interface that a PostgreSQL
 * adapter could later implement). All methods are synchronous so that `transaction` can make a
 * read-modify-write atomic; the SQLite adapter implements them over better-sqlite3.
 * Methods throw ParseError for the caller's mistakes in queries (102, 105) and plain Errors for
 * storage failures.
 */
export interface StorageAdapter {
  /** Runs `fn` atomically: everything it writes is committed when it returns, or nothing is. */
  transaction<T>(fn: () => T): T;
  /**
   * Resolves once every change committed before the call is on stable storage. Front ends await it
   * before answering a write, so a success answer means the change is on disk.
   * @param alone true when no other request is in flight: an adapter may then sync at once on this
   *   thread rather than hand the sync to another and wait to be woken (nobody could share it).
   */
  durable(alone?: boolean): Promise<void>;

  loadSchema(): StoredClass[];
  /** One class's schema entry, shared and read-only (copy it to change it), or undefined. */
  getClass(className: string): Readonly<StoredClass> | undefined;
  /** Every field of a class with its type, the default fields included; undefined for an unknown class. */
  fields(className: string): Readonly<Record<string, FieldType>> | undefined;
  /** Creates or replaces a class's schema entry, creating its table when it has none. */
  saveClass(cls: StoredClass): void;
  /** Drops the class, its rows, its relation tables and its indexes. */
  dropClass(className: string): void;
  /** Creates a real index over the fields of `keys`; a relation or unknown field is the caller's to refuse. */
  createIndex(className: string, name: string, keys: Record<string, 1 | -1>): void;
  dropIndex(className: string, name: string): void;
  /** Removes a field from every object of the class (and drops a relation's table). */
  removeField(className: string, field: string, type: FieldType): void;

  insert(className: string, row: StoredRow): void;
  /** Replaces the row's data, acl and updatedAt. Returns false when there is no such row. */
  replace(className: string, row: StoredRow): boolean;
  delete(className: string, objectId: string): boolean;
  /** Deletes every row of the class (Parse's purge). */
  deleteAll(className: string): void;
  get(className: string, objectId: string): StoredRow | undefined;
  find(className: string, options: FindOptions): StoredRow[];
  count(className: string, options: Pick<FindOptions, 'where' | 'principals' | 'access'>): number;

  addRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): void;
  removeRelations(ownerClass: string, field: string, owningId: string, relatedIds: readonly string[]): void;
  /** objectIds related to `owningId` through `ownerClass.field`. */
  relatedIds(ownerClass: string, field: string, owningId: string): string[];
  /** owningIds of `ownerClass` whose `field` relation holds one of `relatedIds`. */
  owningIds(ownerClass: string, field: string, relatedIds: readonly string[]): string[];

  /** The app's config parameters (Parse's `/config`), each with whether only the master key sees it. */
  getConfig(): Array<{ key: string; value: unknown; masterKeyOnly: boolean }>;
  /** Sets config parameters; `masterKeyOnly` marks those hidden from client keys. */
  putConfig(params: Record<string, unknown>, masterKeyOnly: Record<string, boolean>): void;

  close(): void;
}
