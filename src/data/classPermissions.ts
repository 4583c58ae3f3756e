import { ParseCode, ParseError } from './errors.js';
import type { ClassLevelPermissions } from './storage/adapter.js';
import { isPlainObject } from './values.js';

/**
 * The `classLevelPermissions` of a `/schemas` body, checked as Parse Server 9 checks them
 * (SchemaController's `validateCLP`), all errors 107. Backyard enforces each action's principals and
 * `protectedFields`; Parse's pointer permissions (`pointerFields`, `readUserFields`, `writeUserFields`)
 * are refused rather than stored and ignored, so that no one believes a class is guarded by them.
 * `ACL` is the default ACL of objects created without one (Parse Server's RestWrite), `currentUser`
 * standing for their creator.
 */

const ACTIONS = ['find', 'count', 'get', 'create', 'update', 'delete', 'addField'] as const;
const POINTER_PERMISSIONS = new Set(['pointerFields', 'readUserFields', 'writeUserFields']);

/** A user's objectId as Parse Server 9 matches it in CLP keys (its `userIdRegEx` without custom ids). */
const USER_ID = /^[a-zA-Z0-9]+$/;
/** Principals of an action: everyone, signed-in users, a role, a user. */
const isActionKey = (key: string) => key === '*' || key === 'requiresAuthentication' || key.startsWith('role:') || USER_ID.test(key);
/** Principals of `protectedFields`: also `authenticated` and `userField:<pointer field>`. */
const isProtectedFieldsKey = (key: string) => key === '*' || key === 'authenticated' || key.startsWith('role:') || key.startsWith('userField:') || USER_ID.test(key);

const invalid = (message: string) => new ParseError(ParseCode.INVALID_JSON, message);
/** A value as Parse Server's texts show it: strings bare, objects as JSON. */
const shown = (value: unknown): string => (value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value));

const badKey = (key: string) => invalid(`'${key}' is not a valid key for class level permissions`);

function pointerPermission(name: string): ParseError {
  return invalid(`${name}: pointer permissions are not supported; list users or roles ("*", a user id, "role:name", "requiresAuthentication") instead.`);
}

/** Fields every object has, which `protectedFields` cannot hide (Parse Server's `defaultColumns._Default`). */
const DEFAULT_FIELDS = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/** Every action closed to clients (`{}`) and nothing protected: what Parse Server stores for actions a body leaves out. */
const closedClp = (): ClassLevelPermissions => ({ ...Object.fromEntries(ACTIONS.map((a) => [a, {}])), protectedFields: {} });

/**
 * Reads a body's `classLevelPermissions`: undefined leaves them as they are; null resets them to the
 * defaults (everything open), as in Parse Server; an object replaces them all, every action it leaves
 * out closed to clients (`{}`), as Parse Server 9 stores them.
 * With `fields` (the class's fields after the change), `protectedFields` may name only those, and
 * never a field every object has.
 * @returns the permissions to store, or undefined when the body has none.
 * @throws ParseError 107 "'<key>' is not a valid key for class level permissions" for a principal
 *   outside Parse's forms (`' *'`, `'12345 '`), "<name> is not a valid operation for class level
 *   permissions" for an unknown action, "Default field '<f>' can not be protected", "Field '<f>' in
 *   protectedFields:<principal> does not exist", and 107 for any other malformed entry.
 */
export function parseClassLevelPermissions(raw: unknown, fields?: Readonly<Record<string, unknown>>): ClassLevelPermissions | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return {};
  if (!isPlainObject(raw)) throw invalid('classLevelPermissions must be an object, e.g. {"find": {"*": true}}.');
  // Permissions given replace all of them: an action left out is closed to clients, as in Parse Server.
  const out: ClassLevelPermissions = { ...closedClp() };
  for (const [action, entry] of Object.entries(raw)) {
    if (POINTER_PERMISSIONS.has(action)) throw pointerPermission(action);
    if (action === 'protectedFields') {
      out.protectedFields = parseProtectedFields(entry, fields);
      continue;
    }
    if (action === 'ACL') {
      out.ACL = parseDefaultAcl(entry);
      continue;
    }
    if (!(ACTIONS as readonly string[]).includes(action)) {
      // Parse Server's texts to the letter (SchemaController.validateCLP), so clients matching them keep working.
      throw invalid(`${action} is not a valid operation for class level permissions`);
    }
    if (!isPlainObject(entry)) throw invalid(`'${JSON.stringify(entry)}' is not a valid value for class level permissions ${action} - must be an object`);
    for (const [principal, allowed] of Object.entries(entry)) {
      if (principal === 'pointerFields') throw pointerPermission(`${action}.pointerFields`);
      if (!isActionKey(principal)) throw badKey(principal);
      if (allowed !== true) throw invalid(`'${shown(allowed)}' is not a valid value for class level permissions acl ${action}:${principal}`);
    }
    out[action as (typeof ACTIONS)[number]] = entry as Record<string, boolean>;
  }
  return out;
}

function parseProtectedFields(entry: unknown, known: Readonly<Record<string, unknown>> | undefined): Record<string, string[]> {
  if (!isPlainObject(entry)) throw invalid('classLevelPermissions.protectedFields must map principals to arrays of field names.');
  for (const [principal, fields] of Object.entries(entry)) {
    if (!isProtectedFieldsKey(principal)) throw badKey(principal);
    if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) {
      throw invalid(`'${JSON.stringify(fields)}' is not a valid value for protectedFields[${principal}] - expected an array of field names.`);
    }
    if (!known) continue;
    for (const field of fields as string[]) {
      if (DEFAULT_FIELDS.has(field)) throw invalid(`Default field '${field}' can not be protected`);
      if (!Object.hasOwn(known, field)) throw invalid(`Field '${field}' in protectedFields:${principal} does not exist`);
    }
  }
  return entry as Record<string, string[]>;
}

/** The CLP `ACL` entry: principals (as for actions, and `currentUser`) to `{read?, write?}` with boolean values. */
function parseDefaultAcl(entry: unknown): Record<string, { read?: boolean; write?: boolean }> {
  if (!isPlainObject(entry)) throw invalid(`'${JSON.stringify(entry)}' is not a valid value for class level permissions ACL - must be an object`);
  for (const [principal, permit] of Object.entries(entry)) {
    if (!isActionKey(principal)) throw badKey(principal);
    if (!isPlainObject(permit)) throw invalid(`'${JSON.stringify(permit)}' is not a valid value for class level permissions acl`);
    const badKeys = Object.keys(permit).filter((k) => k !== 'read' && k !== 'write');
    if (badKeys.length) throw invalid(`'${badKeys.join(',')}' is not a valid key for class level permissions acl`);
    const badValues = Object.values(permit).filter((v) => typeof v !== 'boolean');
    if (badValues.length) throw invalid(`'${badValues.join(',')}' is not a valid value for class level permissions acl`);
  }
  return entry as Record<string, { read?: boolean; write?: boolean }>;
}

/**
 * The ACL a new object gets from its class's CLP `ACL` when the request gives none (Parse Server's
 * RestWrite): a copy with `currentUser` replaced by the creating user's objectId (dropped without a
 * user). Undefined when the class has none, or the all-open one, which is as good as none.
 */
export function defaultAclFor(clp: ClassLevelPermissions | undefined, userId: string | undefined): Record<string, { read?: boolean; write?: boolean }> | undefined {
  const acl = clp?.ACL;
  if (!acl || JSON.stringify(acl) === JSON.stringify({ '*': { read: true, write: true } })) return undefined;
  const { currentUser, ...rest } = structuredClone(acl);
  return currentUser && userId ? { ...rest, [userId]: currentUser } : rest;
}
