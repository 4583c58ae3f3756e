import { checkGetParams } from '../../objects/findParams.js';
import { aclAllows } from '../../auth/context.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import type { DataRouter } from '../router.js';
import { ok, type DataRequest, type RouteHandler } from '../types.js';

/** `/roles` and `/classes/_Role` name the same objects (Parse REST guide, "Roles"). */
const ROLE_PATHS = ['/roles', '/classes/_Role'] as const;

/** The Parse SDKs' rule for role names (`Parse.Role._validateName`). */
export const ROLE_NAME = /^[0-9a-zA-Z\-_ ]+$/;

const required = (field: string) => new ParseError(ParseCode.INCORRECT_TYPE, `${field} is required.`);

/**
 * Checks a role's name.
 * @throws ParseError 111 "name is required." when absent or empty (Parse Server's required columns
 *   of `_Role`); 139 when it is not a string of letters, digits, `_`, `-` and spaces (the rule the
 *   Parse SDKs apply before saving).
 */
export function checkRoleName(name: unknown): string {
  if (name === undefined || name === null || name === '') throw required('name');
  if (typeof name !== 'string' || !ROLE_NAME.test(name)) {
    throw new ParseError(ParseCode.INVALID_ROLE_NAME, "A role's name can only contain alphanumeric characters, _, -, and spaces.");
  }
  return name;
}

/**
 * `POST /roles`: Parse Server requires `name` and `ACL` on every role and keeps names unique.
 * @throws ParseError 111 ("name is required.", "ACL is required."), 139 (bad name), 137 "Cannot add
 *   duplicate role name of <name>", and the engine's errors (119, 105, 111).
 */
const createRole: RouteHandler = async (req) => {
  const body = req.body;
  if (!isPlainObject(body)) throw new ParseError(ParseCode.INVALID_JSON, 'The body must be a JSON object of fields.');
  const name = checkRoleName(body.name);
  if (body.ACL === undefined || body.ACL === null) throw required('ACL');
  const { row } = await req.services.atomically(async ({ roles, engine }) => {
    if (await roles.named(name)) throw new ParseError(ParseCode.DUPLICATE_VALUE, `Cannot add duplicate role name of ${name}`);
    return engine.create('_Role', body, req.auth);
  });
  return ok({ objectId: row.objectId, createdAt: row.createdAt }, 201, { location: location(req, row.objectId) });
};

const location = (req: DataRequest, objectId: string) => `${req.mountUrl}/classes/_Role/${encodeURIComponent(objectId)}`;

/**
 * `PUT /roles/<objectId>`: membership changes through the `users` and `roles` relations
 * (AddRelation, RemoveRelation) and other fields; the name is fixed once saved and the ACL cannot be
 * removed.
 * @throws ParseError 101 (no such role, or the caller may not write it), 136 (name changed),
 *   111 ("ACL is required." for `"ACL": null`), and the engine's errors.
 */
const updateRole: RouteHandler = async (req, { objectId }) => {
  const body = req.body;
  const { row, computed } = await req.services.atomically(async ({ roles, engine }) => {
    if (isPlainObject(body) && ('name' in body || 'ACL' in body)) {
      const current = await roles.stored(objectId!);
      if (!current || !aclAllows(current.acl, req.auth, 'write')) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');
      if ('name' in body && body.name !== current.data.name) {
        throw new ParseError(ParseCode.CHANGED_IMMUTABLE_FIELD, "A role's name can only be set before it has been saved.");
      }
      if ('ACL' in body && body.ACL === null) throw required('ACL');
    }
    return engine.update('_Role', objectId!, body, req.auth);
  });
  return ok({ updatedAt: row.updatedAt, ...computed });
};

/**
 * The role endpoints (Parse REST guide, "Roles"; Parse Server's `RolesRouter`): create, query, get,
 * update and delete under `/roles` and `/classes/_Role`, through the engine's `_Role` class (ACLs and
 * class-level permissions apply). Membership becomes `role:<name>` principals in `auth/roles.ts`.
 * They run inside transactional batches.
 */
export function roleRoutes(router: DataRouter): void {
  for (const base of ROLE_PATHS) {
    router.on('POST', base, createRole);
    router.on('GET', base, async (req) => ok(await req.engine.find('_Role', req.query, req.auth)));
    router.on('GET', `${base}/:objectId`, async (req, { objectId }) => {
      checkGetParams(req.query);
      return ok(await req.engine.get('_Role', objectId!, req.auth, req.query));
    });
    router.on('PUT', `${base}/:objectId`, updateRole);
    router.on('DELETE', `${base}/:objectId`, async (req, { objectId }) => {
      await req.engine.delete('_Role', objectId!, req.auth);
      return ok({});
    });
  }
}
