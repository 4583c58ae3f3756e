import { randomAlphanumeric } from '../shared/ids.js';
import { aclAllows, clpAllows, type Auth } from './auth/context.js';
import type { QueryAccess } from './auth/queryAccess.js';
import { ownSessionsOnly } from './auth/sessions.js';
import { defaultAclFor } from './classPermissions.js';
import { ParseCode, ParseError } from './errors.js';
import { applyFieldOptions } from './objects/fieldOptions.js';
import { applyChanges } from './objects/operations.js';
import { parseFindParams, type FindParams } from './objects/findParams.js';
import { includePointers, planSelection, type IncludeSource } from './objects/include.js';
import { checkProhibitedKeywords } from './objects/keywords.js';
import { selectKeys, type FileUrl } from './objects/output.js';
import { checkQueryable, hiddenFields, listsAny, withoutHidden } from './objects/protectedFields.js';
import { checkWriteKey, type Schema } from './schema.js';
import { checkClassCreation, enforceRoleSecurity, roleSecurityRefuses } from './access.js';
import type { FindOptions, StorageAdapter, StoredRow } from './storage/adapter.js';
import type { DataStore } from './store.js';
import { checkAcl, isPlainObject } from './values.js';
import { protectedFieldsFor, type ServerSettings } from './settings.js';
import { checkQuery } from './query/compile.js';
import type { ObjectChanges } from './livequery/changes.js';

type ClpAction = 'find' | 'count' | 'get' | 'create' | 'update' | 'delete' | 'addField';

/** Parse objectIds: 10 characters of `[A-Za-z0-9]` (docs/design.md, decision 1). */
export const newObjectId = (): string => randomAlphanumeric(10);

const notFound = () => new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');

/** Fields of a body that are not data: kept in columns, or set by the platform. */
const RESERVED = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/** A find after its checks (DataEngine.prepareFind): the class it reads, its parameters, and what storage is asked. */
interface PreparedFind {
  className: string;
  params: FindParams;
  read: FindOptions;
}

/** An object as a write stored it: its class and its row (DataResponse.stored, DataRequest.stored). */
export interface StoredObject {
  className: string;
  row: StoredRow;
}

/** What a write hands to storage and answers. */
export interface WriteResult {
  row: StoredRow;
  computed: Record<string, unknown>;
}

/**
 * One Backend App's data engine, its checking face: objects of schemaless classes with ACLs and
 * class-level permissions (Parse's semantics), over the app's master view (store.ts). As Parse
 * Server's `RestQuery` and `RestWrite` check what its `DatabaseController` does not, every call
 * here takes the caller's `Auth`; the store it runs over is kept in a private field, so that a
 * caller holding an engine (a route) cannot slip into the master view. Knows nothing of HTTP.
 */
export class DataEngine {
  readonly appId: string;
  readonly schema: Schema;
  /** Committed object changes of create, update and delete, for LiveQuery (livequery/server.ts). */
  readonly changes: ObjectChanges;
  readonly fileUrl: FileUrl;
  /** The app's server options in force (settings.ts), kept fresh by the caller (apps.ts). */
  readonly settings: () => ServerSettings;
  readonly #store: DataStore;
  readonly #storage: StorageAdapter;
  /** What `include` reads through (objects/include.ts): the store's rows, this engine's checks. */
  readonly #includes: IncludeSource;

  /** The checking face over `store`; services get the one of their store from `checkingFace`. */
  constructor(store: DataStore) {
    this.#store = store;
    this.#storage = store.storage;
    this.appId = store.appId;
    this.schema = store.schema;
    this.changes = store.changes;
    this.fileUrl = store.fileUrl;
    this.settings = store.settings;
    this.#includes = {
      schema: store.schema,
      rows: (className, options) => store.rows(className, options),
      mayFind: (className, auth) => this.mayFind(className, auth),
      mayGet: (className, auth) => this.allows(className, 'get', auth),
      scopeWhere: (className, where, auth) => this.scopeWhere(className, where, auth),
      present: (className, row, auth) => this.protect(className, this.toJson(className, row), auth),
    };
  }

  private checkClassCreation(className: string, auth: Auth): void {
    checkClassCreation(this.schema, this.settings(), className, auth);
  }

  /** Whether class-level permissions let the caller `action` on the class (Parse's SchemaController.testPermissions). */
  allows(className: string, action: ClpAction, auth: Auth): boolean {
    return auth.master || clpAllows(this.schema.get(className)?.classLevelPermissions[action], auth);
  }

  /** @throws ParseError 119 when class-level permissions refuse `action` to the caller. */
  checkClp(className: string, action: ClpAction, auth: Auth): void {
    if (!this.allows(className, action, auth)) {
      throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Permission denied for action ${action} on class ${className}.`);
    }
  }

  /**
   * Whether the caller may query the class at all, e.g. to resolve an `include`: enforceRoleSecurity,
   * and a user for `_Session` (ownSessionsOnly).
   */
  mayFind(className: string, auth: Auth): boolean {
    return roleSecurityRefuses('find', className, auth) === undefined && (className !== '_Session' || auth.master || auth.user !== undefined);
  }

  /** `where` as the caller runs it on the class: a client reads only its own `_Session` objects (ownSessionsOnly). */
  scopeWhere(className: string, where: Record<string, unknown>, auth: Auth): Record<string, unknown> {
    return className === '_Session' && !auth.master ? ownSessionsOnly(where, auth) : where;
  }

  /** Splits a body into its ACL and its data fields, checking names. */
  private splitBody(className: string, body: unknown, creating: boolean): { acl: StoredRow['acl'] | undefined; fields: Record<string, unknown> } {
    if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
    checkProhibitedKeywords(body);
    const fields: Record<string, unknown> = {};
    let acl: StoredRow['acl'] | undefined;
    for (const [key, value] of Object.entries(body)) {
      if (key === 'ACL') acl = value === null ? null : checkAcl(value);
      else if (key === 'objectId' && creating) throw new ParseError(ParseCode.INVALID_KEY_NAME, 'objectId is an invalid field name.');
      else if (RESERVED.has(key)) continue;
      else {
        checkWriteKey(className, key);
        fields[key] = value;
      }
    }
    return { acl, fields };
  }

  /**
   * Creates an object (Parse REST guide, "Creating Objects"); the class and new keys extend the schema.
   * `extra` data is stored as is (internal fields such as a user's password hash).
   * @throws ParseError 103, 105 (also for a prohibited keyword: objects/keywords.ts), 111, 119, 107.
   */
  create(className: string, body: unknown, auth: Auth, extra: Record<string, unknown> = {}): Promise<WriteResult> {
    enforceRoleSecurity('create', className, auth);
    const { acl, fields } = this.splitBody(className, body, true);
    const written = this.#storage.transaction(async (tx) => {
      this.checkClassCreation(className, auth);
      const exists = this.schema.has(className);
      if (exists) this.checkClp(className, 'create', auth);
      const applied = applyChanges({}, fields);
      const learning = this.schema.learn(tx, className, applied.types, !exists || auth.master || clpAllows(this.schema.get(className)?.classLevelPermissions.addField, auth));
      if (learning) await learning;
      applyFieldOptions(this.schema.fields(className), fields, applied, true);
      const now = new Date().toISOString();
      // The class's default ACL is answered like a value the server filled in (Parse Server's RestWrite).
      const defaulted = acl === undefined ? defaultAclFor(this.schema.get(className)?.classLevelPermissions, auth.user?.objectId) : undefined;
      const row: StoredRow = { objectId: newObjectId(), createdAt: now, updatedAt: now, data: { ...applied.data, ...extra }, acl: acl ?? defaulted ?? null };
      await tx.insert(className, row);
      for (const change of applied.relations) await tx.addRelations(className, change.field, row.objectId, change.add);
      return { row, computed: defaulted ? { ...applied.computed, ACL: defaulted } : applied.computed };
    });
    if (!this.changes.heard) return written;
    return written.then((result) => (this.changes.emit({ kind: 'save', className, object: result.row, original: undefined }), result));
  }

  /**
   * Updates an object the caller may write (Parse REST guide, "Updating Objects"). `extra` data is
   * stored as is, and a field it gives as undefined is removed (internal fields such as a user's
   * spent reset token).
   * @throws ParseError 101 when there is no such object or the caller may not write it.
   */
  update(className: string, objectId: string, body: unknown, auth: Auth, extra: Record<string, unknown> = {}): Promise<WriteResult> {
    enforceRoleSecurity('update', className, auth);
    const { acl, fields } = this.splitBody(className, body, false);
    let original: StoredRow | undefined;
    const written = this.#storage.transaction(async (tx) => {
      this.checkClassCreation(className, auth);
      if (!this.schema.has(className)) throw notFound();
      this.checkClp(className, 'update', auth);
      const current = await tx.get(className, objectId);
      if (!current || !aclAllows(current.acl, auth, 'write')) throw notFound();
      original = current;
      const applied = applyChanges(current.data, fields);
      const learning = this.schema.learn(tx, className, applied.types, auth.master || clpAllows(this.schema.get(className)?.classLevelPermissions.addField, auth));
      if (learning) await learning;
      applyFieldOptions(this.schema.fields(className), fields, applied, false);
      const data = { ...applied.data, ...extra };
      for (const [key, value] of Object.entries(extra)) if (value === undefined) delete data[key];
      const row: StoredRow = { ...current, updatedAt: new Date().toISOString(), data, acl: acl === undefined ? current.acl : acl };
      await tx.replace(className, row);
      for (const change of applied.relations) {
        if (change.add.length) await tx.addRelations(className, change.field, objectId, change.add);
        if (change.remove.length) await tx.removeRelations(className, change.field, objectId, change.remove);
      }
      return { row, computed: applied.computed };
    });
    if (!this.changes.heard) return written;
    return written.then((result) => (this.changes.emit({ kind: 'save', className, object: result.row, original }), result));
  }

  /** Deletes an object the caller may write. @throws ParseError 101 otherwise. */
  delete(className: string, objectId: string, auth: Auth): Promise<StoredRow> {
    enforceRoleSecurity('delete', className, auth);
    const deleted = this.#storage.transaction(async (tx) => {
      if (!this.schema.has(className)) throw notFound();
      this.checkClp(className, 'delete', auth);
      const current = await tx.get(className, objectId);
      if (!current || !aclAllows(current.acl, auth, 'write')) throw notFound();
      await tx.delete(className, objectId);
      return current;
    });
    if (!this.changes.heard) return deleted;
    return deleted.then((original) => (this.changes.emit({ kind: 'delete', className, original }), original));
  }

  /** A stored row the caller may read, or undefined. */
  async getRow(className: string, objectId: string, auth: Auth): Promise<StoredRow | undefined> {
    const row = await this.#storage.get(className, objectId);
    return row && aclAllows(row.acl, auth, 'read') ? row : undefined;
  }

  /** The API form of a row. */
  toJson(className: string, row: StoredRow): Record<string, unknown> {
    return this.#store.toJson(className, row);
  }

  /**
   * `object` (API form) as `auth` may see it: without the fields its class's CLP `protectedFields`
   * hide from this caller (objects/protectedFields.ts). `_User` adds Parse Server's default, `email`
   * under `*`, and users always see their own object whole. The master key sees everything.
   */
  protect(className: string, object: Record<string, unknown>, auth: Auth): Record<string, unknown> {
    if (auth.master || (className === '_User' && auth.user?.objectId === object.objectId)) return object;
    return withoutHidden(object, this.protectedFields(className), auth);
  }

  /** A class's CLP `protectedFields` joined with the app's `protectedFields` option (settings.ts; `_User` always hides `email`). */
  private protectedFields(className: string): Readonly<Record<string, readonly string[]>> | undefined {
    return protectedFieldsFor(this.settings(), className, this.schema.get(className)?.classLevelPermissions.protectedFields);
  }

  /**
   * The checks a query by `auth` passes for every class and field it names (auth/context.ts,
   * QueryAccess): enforceRoleSecurity, CLP `find` and scopeWhere on sub-queried classes, CLP `get`
   * on a `$relatedTo` owner, and no protected field in `where` or `order`. Undefined for the master key.
   */
  private queryAccess(auth: Auth): QueryAccess | undefined {
    if (auth.master) return undefined;
    const hidden = new Map<string, ReadonlySet<string>>();
    return {
      checkFind: (className) => {
        enforceRoleSecurity('find', className, auth);
        this.checkClp(className, 'find', auth);
      },
      scopeWhere: (className, where) => this.scopeWhere(className, where, auth),
      mayGet: (className) => this.allows(className, 'get', auth),
      checkField: (className, key, use) => {
        if (!hidden.has(className)) hidden.set(className, hiddenFields({}, this.protectedFields(className), auth));
        checkQueryable(hidden.get(className)!, className, key, use);
      },
    };
  }

  /**
   * Fetches one object (Parse REST guide, "Retrieving Objects") with `keys`, `excludeKeys` and `include`.
   * @param stored the object's row as a write of this caller just stored it (DataRequest.stored),
   *   used instead of reading it again when it is the object asked for; every check still applies.
   * @throws ParseError 101 when it does not exist or the caller may not read it.
   */
  async get(className: string, objectId: string, auth: Auth, rawParams: Record<string, unknown> = {}, stored?: StoredRow): Promise<Record<string, unknown>> {
    const known = this.#store.known(className);
    if (known instanceof Promise) await known;
    return this.getChecked(className, objectId, auth, this.checkGet(className, auth, rawParams), stored);
  }

  /**
   * `get`'s object as JSON text, for a caller that only sends it on (the data API's HTTP handler).
   * Where `present` would answer the row as stored (asTextApplies), it is the database's text of
   * the object (StorageReads.getText), as `findText` does for a find; otherwise `get`'s object,
   * stringified. The checks and errors are `get`'s.
   */
  async getText(className: string, objectId: string, auth: Auth, rawParams: Record<string, unknown> = {}, stored?: StoredRow): Promise<string> {
    const known = this.#store.known(className);
    if (known instanceof Promise) await known;
    const params = this.checkGet(className, auth, rawParams);
    const getText = this.#storage.getText;
    if (!getText || stored?.objectId === objectId || !this.asTextApplies(className, params, auth)) {
      return JSON.stringify(await this.getChecked(className, objectId, auth, params, stored));
    }
    const found = await getText.call(this.#storage, className, objectId);
    if (!found || !aclAllows(found.acl, auth, 'read')) throw notFound();
    return found.json;
  }

  /** What `get` checks before reading: role security, the parameters, the class and its CLP `get`. @returns the parameters. */
  private checkGet(className: string, auth: Auth, rawParams: Record<string, unknown>): FindParams {
    enforceRoleSecurity('get', className, auth);
    const params = parseFindParams(rawParams);
    this.checkClassCreation(className, auth);
    if (!this.schema.has(className)) throw notFound();
    this.checkClp(className, 'get', auth);
    return params;
  }

  /** `get` once checkGet passed: the row (the one just stored, or read) the caller may read, presented. */
  private async getChecked(className: string, objectId: string, auth: Auth, params: FindParams, stored?: StoredRow): Promise<Record<string, unknown>> {
    const row = stored?.objectId === objectId ? (aclAllows(stored.acl, auth, 'read') ? stored : undefined) : await this.getRow(className, objectId, auth);
    if (!row) throw notFound();
    const presented = this.present(className, [row], params, auth);
    const [object] = presented instanceof Promise ? await presented : presented;
    return object!;
  }

  /**
   * Runs a query (Parse REST guide, "Queries"): SQL does the filtering, sorting, paging and counting.
   * @returns `{results}`, plus an exact `count` when asked for.
   * @throws ParseError 102 for a bad parameter or operator, 105 for a bad key, 119 for CLP (of the class
   *   and of every class a sub-query reads), for a protected field in `where` or `order` (QueryAccess)
   *   and for a master-only class (enforceRoleSecurity); 209 for a `_Session` query without a user.
   */
  async find(className: string, rawParams: Record<string, unknown>, auth: Auth): Promise<{ results: Record<string, unknown>[]; count?: number }> {
    return this.findPrepared(await this.prepareFind(className, rawParams, auth), auth);
  }

  private async findPrepared(query: PreparedFind, auth: Auth): Promise<{ results: Record<string, unknown>[]; count?: number }> {
    const { className, params } = query;
    const results = params.limit === 0 ? [] : await this.findObjects(query, auth);
    // The JS SDK reads the class of a relation's objects from each result (Parse Server's runFind).
    const answer: { results: Record<string, unknown>[]; count?: number } = { results: params.redirectClassNameForKey ? results.map((o) => ({ ...o, className })) : results };
    if (params.count) answer.count = await this.countOf(query);
    else if (params.limit === 0) await this.countOf(query); // still validates where
    return answer;
  }

  /**
   * The objects of a find. Where `present` would answer the rows as stored (asTextApplies), they are
   * parsed from the database's text of them (StorageReads.findText): one JSON.parse of one string,
   * rather than a row per object from the driver, each with its JSON columns parsed, then presented.
   */
  private async findObjects(query: PreparedFind, auth: Auth): Promise<Record<string, unknown>[]> {
    const findText = this.#storage.findText;
    if (findText && this.asTextApplies(query.className, query.params, auth)) return JSON.parse(`[${await findText.call(this.#storage, query.className, query.read)}]`) as Record<string, unknown>[];
    const rows = await this.#storage.find(query.className, query.read);
    // No turn of the microtask queue when nothing is included (the common case: bench/data-api).
    const presented = rows.length ? this.present(query.className, rows, query.params, auth) : [];
    return presented instanceof Promise ? await presented : presented;
  }

  /**
   * `find`'s answer as the JSON text of its body, `{"results":[...]}` (and `"count"`), for a caller
   * that only sends it on (the data API's HTTP handler). When the rows need nothing of what `present`
   * does (asTextApplies), their stored JSON is spliced into the answer as the database gave it,
   * without being parsed and written again; otherwise it is `find`'s answer, stringified. The checks
   * and errors are `find`'s.
   */
  async findText(className: string, rawParams: Record<string, unknown>, auth: Auth): Promise<string> {
    const query = await this.prepareFind(className, rawParams, auth);
    const findText = this.#storage.findText;
    if (!findText || !this.asTextApplies(query.className, query.params, auth)) return JSON.stringify(await this.findPrepared(query, auth));
    const { params } = query;
    const rows = params.limit === 0 ? '' : await findText.call(this.#storage, query.className, query.read);
    const text = `{"results":[${rows}`;
    if (params.count) return `${text}],"count":${await this.countOf(query)}}`;
    if (params.limit === 0) await this.countOf(query); // still validates where
    return `${text}]}`;
  }

  /**
   * Whether `present` would answer the rows of a read of `className` with `params` as they are
   * stored, so that findText and getText may send the database's JSON of them: no `keys`,
   * `excludeKeys` or `include`, no redirect, a class whose name does not start with `_` (those hold
   * internal `_` keys: objects/output.ts) without File or Relation fields (objectJson rewrites
   * those), and no protected field listed for the class.
   */
  private asTextApplies(className: string, params: FindParams, auth: Auth): boolean {
    if (params.keys || params.excludeKeys || params.include.length || params.includeAll || params.redirectClassNameForKey || className.startsWith('_')) return false;
    for (const type of Object.values(this.schema.fields(className) ?? {})) if (type.type === 'File' || type.type === 'Relation') return false;
    return auth.master || !listsAny(this.protectedFields(className));
  }

  /**
   * Everything a find checks before storage is asked (Parse REST guide, "Queries"), and what storage
   * is asked: the class read (after `redirectClassNameForKey`), the parsed parameters, and the
   * query with its caller's principals and checks.
   */
  private async prepareFind(className: string, rawParams: Record<string, unknown>, auth: Auth): Promise<PreparedFind> {
    enforceRoleSecurity('find', className, auth);
    const params = parseFindParams(rawParams, this.settings());
    if (params.redirectClassNameForKey) {
      const target = this.schema.fields(className)?.[params.redirectClassNameForKey];
      if (target?.type === 'Relation' && target.targetClass) {
        className = target.targetClass;
        // Checked again for the class the query now reads (GHSA-6r2j-cxgf-495f).
        enforceRoleSecurity('find', className, auth);
      }
    }
    const known = this.#store.known(className);
    if (known instanceof Promise) await known;
    this.checkClassCreation(className, auth);
    params.where = this.scopeWhere(className, params.where, auth);
    const countOnly = params.count && params.limit === 0;
    this.checkClp(className, countOnly ? 'count' : 'find', auth);
    if (params.count && !countOnly) this.checkClp(className, 'count', auth);
    const principals = auth.master ? undefined : auth.principals;
    const access = this.queryAccess(auth);
    // Storage answers nothing for a class without a table; the where and order are checked all the same.
    if (!this.schema.has(className)) checkQuery(className, params.where, params.order, { dialect: this.#storage.dialect, schema: this.schema, access });
    return { className, params, read: { where: params.where, order: params.order, limit: params.limit, skip: params.skip, principals, access } };
  }

  /** The count of what a prepared find reads, with its caller's principals and checks. */
  private countOf(query: PreparedFind): Promise<number> {
    const { where, principals, access } = query.read;
    return this.#storage.count(query.className, { where, principals, access });
  }

  /** Rows as the caller sees them: protected fields hidden, pointers included, keys selected; a promise only when something is included. */
  private present(className: string, rows: StoredRow[], params: FindParams, auth: Auth): Record<string, unknown>[] | Promise<Record<string, unknown>[]> {
    const objects = rows.map((r) => this.protect(className, this.toJson(className, r), auth));
    const selection = planSelection(params, this.schema.fields(className));
    const selected = () => objects.map((o) => selectKeys(o, selection.keys, selection.excludeKeys));
    return selection.paths.length ? includePointers(this.#includes, objects, selection, auth).then(selected) : selected();
  }

  /**
   * Runs `fn` all or nothing with an engine bound to one storage transaction (DataStore.atomically):
   * every write made through that engine commits when `fn` resolves and is rolled back when it
   * rejects (a transactional batch). Called on a bound engine, runs `fn` in the same transaction.
   */
  atomically<T>(fn: (engine: DataEngine) => Promise<T>): Promise<T> {
    return this.#store.atomically((store) => fn(checkingFace(store)));
  }

  /** Resolves once every committed write is on stable storage (StorageAdapter.durable). */
  durable(alone?: boolean): Promise<void> {
    return this.#store.durable(alone);
  }

  /** While the storage is still opening: resolves once it is open (call nothing else before). */
  get opened(): Promise<void> | undefined {
    return this.#store.opened;
  }
}

const faces = new WeakMap<DataStore, DataEngine>();

/**
 * The checking face over a store, one per store: what a service holding the master view uses for
 * the writes and reads that must pass ACLs and class-level permissions (a sign-up's `_User`, a
 * job's `_JobStatus` with the master key).
 */
export function checkingFace(store: DataStore): DataEngine {
  let engine = faces.get(store);
  if (!engine) faces.set(store, (engine = new DataEngine(store)));
  return engine;
}
