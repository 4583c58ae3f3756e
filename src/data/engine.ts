import { randomAlphanumeric } from '../shared/ids.js';
import { aclAllows, clpAllows, type Auth, type QueryAccess } from './auth/context.js';
import { ownSessionsOnly } from './auth/sessions.js';
import { defaultAclFor } from './classPermissions.js';
import { ParseCode, ParseError } from './errors.js';
import { applyFieldOptions } from './objects/fieldOptions.js';
import { applyChanges } from './objects/operations.js';
import { parseFindParams, type FindParams } from './objects/findParams.js';
import { includePointers, planSelection } from './objects/include.js';
import { checkProhibitedKeywords } from './objects/keywords.js';
import { objectJson, selectKeys, type FileUrl } from './objects/output.js';
import { checkQueryable, hiddenFields, withoutHidden } from './objects/protectedFields.js';
import { checkClassName, checkWriteKey, MASTER_ONLY_CLASSES, Schema } from './schema.js';
import type { StorageAdapter, StoredRow } from './storage/adapter.js';
import { checkAcl, isPlainObject } from './values.js';
import { DEFAULT_SETTINGS, protectedFieldsFor, type ServerSettings } from './settings.js';
import { SYSTEM_CLASSES } from './types.js';
import { checkQuery } from './query/compile.js';

type ClpAction = 'find' | 'count' | 'get' | 'create' | 'update' | 'delete' | 'addField';
type RestMethod = 'find' | 'get' | 'create' | 'update' | 'delete';

/** Parse objectIds: 10 characters of `[A-Za-z0-9]` (design.md, decision 1). */
export const newObjectId = (): string => randomAlphanumeric(10);

const notFound = () => new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');

/** Fields of a body that are not data: kept in columns, or set by the platform. */
const RESERVED = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/** What a write hands to storage and answers. */
export interface WriteResult {
  row: StoredRow;
  computed: Record<string, unknown>;
}

/**
 * One Backend App's data engine: objects of schemaless classes with ACLs and class-level
 * permissions (Parse's semantics), over a storage adapter. Knows nothing of HTTP.
 */
export class DataEngine {
  readonly schema: Schema;

  constructor(
    readonly appId: string,
    readonly storage: StorageAdapter,
    readonly fileUrl: FileUrl,
    /** The app's server options in force (settings.ts), kept fresh by the caller (apps.ts). */
    readonly settings: () => ServerSettings = () => DEFAULT_SETTINGS,
  ) {
    this.schema = new Schema(storage);
  }

  /**
   * Parse Server's `validateClientClassCreation`: with `allowClientClassCreation` off, a client may
   * neither create, update nor query a class that does not exist yet (system classes excepted).
   * @throws ParseError 119 "This user is not allowed to access non-existent class: <name>".
   */
  private checkClassCreation(className: string, auth: Auth): void {
    if (auth.master || this.schema.has(className) || (SYSTEM_CLASSES as readonly string[]).includes(className)) return;
    if (this.settings().allowClientClassCreation) return;
    throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `This user is not allowed to access non-existent class: ${className}`);
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
   * Parse Server's `enforceRoleSecurity` (SharedRest.js), run before anything else of a request:
   * clients may not find or delete `_Installation` objects, nor touch the master-only classes
   * (GHSA-7xg7-rqf6-pw6c).
   * @throws ParseError 103 for a bad class name; 119 "Clients aren't allowed to perform the find
   *   operation on the installation collection." and the like.
   */
  private enforceRoleSecurity(method: RestMethod, className: string, auth: Auth): void {
    checkClassName(className);
    const collection = this.roleSecurityRefuses(method, className, auth);
    if (collection) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `Clients aren't allowed to perform the ${method} operation on the ${collection} collection.`);
  }

  /** The collection `enforceRoleSecurity` names when it refuses the caller, else undefined. */
  private roleSecurityRefuses(method: RestMethod, className: string, auth: Auth): string | undefined {
    if (auth.master) return undefined;
    if (className === '_Installation') return method === 'find' || method === 'delete' ? 'installation' : undefined;
    return MASTER_ONLY_CLASSES.has(className) ? className : undefined;
  }

  /**
   * Whether the caller may query the class at all, e.g. to resolve an `include`: enforceRoleSecurity,
   * and a user for `_Session` (ownSessionsOnly).
   */
  mayFind(className: string, auth: Auth): boolean {
    return this.roleSecurityRefuses('find', className, auth) === undefined && (className !== '_Session' || auth.master || auth.user !== undefined);
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
  create(className: string, body: unknown, auth: Auth, extra: Record<string, unknown> = {}): WriteResult {
    this.enforceRoleSecurity('create', className, auth);
    const { acl, fields } = this.splitBody(className, body, true);
    return this.storage.transaction(() => {
      this.checkClassCreation(className, auth);
      const exists = this.schema.has(className);
      if (exists) this.checkClp(className, 'create', auth);
      const applied = applyChanges({}, fields);
      this.schema.learn(className, applied.types, !exists || auth.master || clpAllows(this.schema.get(className)?.classLevelPermissions.addField, auth));
      applyFieldOptions(this.schema.fields(className), fields, applied, true);
      const now = new Date().toISOString();
      // The class's default ACL is answered like a value the server filled in (Parse Server's RestWrite).
      const defaulted = acl === undefined ? defaultAclFor(this.schema.get(className)?.classLevelPermissions, auth.user?.objectId) : undefined;
      const row: StoredRow = { objectId: newObjectId(), createdAt: now, updatedAt: now, data: { ...applied.data, ...extra }, acl: acl ?? defaulted ?? null };
      this.storage.insert(className, row);
      for (const change of applied.relations) this.storage.addRelations(className, change.field, row.objectId, change.add);
      return { row, computed: defaulted ? { ...applied.computed, ACL: defaulted } : applied.computed };
    });
  }

  /**
   * Updates an object the caller may write (Parse REST guide, "Updating Objects").
   * @throws ParseError 101 when there is no such object or the caller may not write it.
   */
  update(className: string, objectId: string, body: unknown, auth: Auth, extra: Record<string, unknown> = {}): WriteResult {
    this.enforceRoleSecurity('update', className, auth);
    const { acl, fields } = this.splitBody(className, body, false);
    return this.storage.transaction(() => {
      this.checkClassCreation(className, auth);
      if (!this.schema.has(className)) throw notFound();
      this.checkClp(className, 'update', auth);
      const current = this.storage.get(className, objectId);
      if (!current || !aclAllows(current.acl, auth, 'write')) throw notFound();
      const applied = applyChanges(current.data, fields);
      this.schema.learn(className, applied.types, auth.master || clpAllows(this.schema.get(className)?.classLevelPermissions.addField, auth));
      applyFieldOptions(this.schema.fields(className), fields, applied, false);
      const row: StoredRow = {
        ...current,
        updatedAt: new Date().toISOString(),
        data: { ...applied.data, ...extra },
        acl: acl === undefined ? current.acl : acl,
      };
      this.storage.replace(className, row);
      for (const change of applied.relations) {
        if (change.add.length) this.storage.addRelations(className, change.field, objectId, change.add);
        if (change.remove.length) this.storage.removeRelations(className, change.field, objectId, change.remove);
      }
      return { row, computed: applied.computed };
    });
  }

  /** Deletes an object the caller may write. @throws ParseError 101 otherwise. */
  delete(className: string, objectId: string, auth: Auth): StoredRow {
    this.enforceRoleSecurity('delete', className, auth);
    return this.storage.transaction(() => {
      if (!this.schema.has(className)) throw notFound();
      this.checkClp(className, 'delete', auth);
      const current = this.storage.get(className, objectId);
      if (!current || !aclAllows(current.acl, auth, 'write')) throw notFound();
      this.storage.delete(className, objectId);
      return current;
    });
  }

  /** A stored row the caller may read, or undefined. */
  getRow(className: string, objectId: string, auth: Auth): StoredRow | undefined {
    const row = this.storage.get(className, objectId);
    return row && aclAllows(row.acl, auth, 'read') ? row : undefined;
  }

  /** The API form of a row. */
  toJson(className: string, row: StoredRow): Record<string, unknown> {
    return objectJson(row, this.schema.fields(className), this.fileUrl);
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
        this.enforceRoleSecurity('find', className, auth);
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
   * @throws ParseError 101 when it does not exist or the caller may not read it.
   */
  get(className: string, objectId: string, auth: Auth, rawParams: Record<string, unknown> = {}): Record<string, unknown> {
    this.enforceRoleSecurity('get', className, auth);
    const params = parseFindParams(rawParams);
    this.checkClassCreation(className, auth);
    if (!this.schema.has(className)) throw notFound();
    this.checkClp(className, 'get', auth);
    const row = this.getRow(className, objectId, auth);
    if (!row) throw notFound();
    const [object] = this.present(className, [row], params, auth);
    return object!;
  }

  /**
   * Runs a query (Parse REST guide, "Queries"): SQL does the filtering, sorting, paging and counting.
   * @returns `{results}`, plus an exact `count` when asked for.
   * @throws ParseError 102 for a bad parameter or operator, 105 for a bad key, 119 for CLP (of the class
   *   and of every class a sub-query reads), for a protected field in `where` or `order` (QueryAccess)
   *   and for a master-only class (enforceRoleSecurity); 209 for a `_Session` query without a user.
   */
  find(className: string, rawParams: Record<string, unknown>, auth: Auth): { results: Record<string, unknown>[]; count?: number } {
    this.enforceRoleSecurity('find', className, auth);
    const params = parseFindParams(rawParams, this.settings());
    if (params.redirectClassNameForKey) {
      const target = this.schema.fields(className)?.[params.redirectClassNameForKey];
      if (target?.type === 'Relation' && target.targetClass) {
        className = target.targetClass;
        // Checked again for the class the query now reads (GHSA-6r2j-cxgf-495f).
        this.enforceRoleSecurity('find', className, auth);
      }
    }
    this.checkClassCreation(className, auth);
    params.where = this.scopeWhere(className, params.where, auth);
    const countOnly = params.count && params.limit === 0;
    this.checkClp(className, countOnly ? 'count' : 'find', auth);
    if (params.count && !countOnly) this.checkClp(className, 'count', auth);
    const principals = auth.master ? undefined : auth.principals;
    const access = this.queryAccess(auth);
    // Storage answers nothing for a class without a table; the where and order are checked all the same.
    if (!this.schema.has(className)) checkQuery(className, params.where, params.order, { schema: this.schema, access });
    const rows =
      params.limit === 0
        ? []
        : this.storage.find(className, { where: params.where, order: params.order, limit: params.limit, skip: params.skip, principals, access });
    const results = this.present(className, rows, params, auth);
    // The JS SDK reads the class of a relation's objects from each result (Parse Server's runFind).
    const answer: { results: Record<string, unknown>[]; count?: number } = { results: params.redirectClassNameForKey ? results.map((o) => ({ ...o, className })) : results };
    if (params.count) answer.count = this.storage.count(className, { where: params.where, principals, access });
    else if (params.limit === 0) this.storage.count(className, { where: params.where, principals, access }); // still validates where
    return answer;
  }

  private present(className: string, rows: StoredRow[], params: FindParams, auth: Auth): Record<string, unknown>[] {
    const objects = rows.map((r) => this.protect(className, this.toJson(className, r), auth));
    const selection = planSelection(params, this.schema.fields(className));
    if (selection.paths.length) includePointers(this, objects, selection, auth);
    return objects.map((o) => selectKeys(o, selection.keys, selection.excludeKeys));
  }
}
