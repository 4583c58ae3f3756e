import type { Auth } from '../auth/context.js';
import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';

/** Fields no `protectedFields` entry can hide (Parse docs, "Protected Fields": default fields). */
const ALWAYS_VISIBLE = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);

/** Whether `value` (a Pointer, or an Array holding Pointers) points to the user `userId`. */
const pointsTo = (value: unknown, userId: string): boolean =>
  Array.isArray(value)
    ? value.some((v) => pointsTo(v, userId))
    : isPlainObject(value) && value.__type === 'Pointer' && value.className === '_User' && value.objectId === userId;

/**
 * The fields of `object` that `auth` may not see, from a class's CLP `protectedFields` (Parse docs,
 * "Class Level Permissions", "Protected Fields"). Every scope the caller belongs to counts: `*`;
 * `authenticated` for a signed-in user; the user's objectId; each `role:<name>` among the caller's
 * principals (inherited roles included); and `userField:<field>` when the object's field points to
 * the user (a `Pointer<_User>`, or an Array of them). The hidden fields are those listed by every
 * applicable scope (the intersection); with no applicable scope, none. The master key sees all.
 */
export function hiddenFields(object: Record<string, unknown>, protectedFields: Readonly<Record<string, readonly string[]>> | undefined, auth: Auth): Set<string> {
  if (auth.master || !protectedFields) return new Set();
  const userId = auth.user?.objectId;
  const principals = new Set(auth.principals ?? ['*']);
  let hidden: Set<string> | undefined;
  for (const [scope, fields] of Object.entries(protectedFields)) {
    const applies =
      scope === '*' ||
      (scope === 'authenticated' && userId !== undefined) ||
      (scope.startsWith('role:') && principals.has(scope)) ||
      (userId !== undefined && scope === userId) ||
      (userId !== undefined && scope.startsWith('userField:') && pointsTo(object[scope.slice('userField:'.length)], userId));
    if (!applies) continue;
    const listed = new Set(fields.filter((f) => !ALWAYS_VISIBLE.has(f)));
    hidden = hidden ? new Set([...hidden].filter((f) => listed.has(f))) : listed;
  }
  return hidden ?? new Set();
}

/** Whether `protectedFields` (a CLP's, with the app's option) hides any field from anyone. */
export const listsAny = (protectedFields: Readonly<Record<string, readonly string[]>> | undefined): boolean => {
  if (!protectedFields) return false;
  for (const scope in protectedFields) if (protectedFields[scope]!.length > 0) return true;
  return false;
};

/** `object` without the fields `hiddenFields` names; the same object when none are hidden. */
export function withoutHidden(object: Record<string, unknown>, protectedFields: Readonly<Record<string, readonly string[]>> | undefined, auth: Auth): Record<string, unknown> {
  // Most classes list nothing (the default is `{"*": []}`): no sets built for every object answered.
  if (!protectedFields || !listsAny(protectedFields)) return object;
  const hidden = hiddenFields(object, protectedFields, auth);
  if (hidden.size === 0) return object;
  return Object.fromEntries(Object.entries(object).filter(([key]) => !hidden.has(key)));
}

/**
 * Refuses a `where` key (`use` "query") or an `order` key ("sort") that names a field of `className`
 * hidden from the caller, or a sub-field of one (`ssn.x`), as Parse Server 9 does
 * (RestQuery.denyProtectedFields, after advisories GHSA-72hp-qff8-4pvv and GHSA-r2m8-pxm9-9c4g):
 * filtering or sorting on a hidden field would reveal its values. A query's rows are not known
 * beforehand, so `userField:` scopes never lift a field here (Parse's addProtectedFields skips them
 * too): `hidden` is hiddenFields of an empty object.
 * @throws ParseError 119 "This user is not allowed to query ssn on class Person" (or "to sort by").
 */
export function checkQueryable(hidden: ReadonlySet<string>, className: string, key: string, use: 'query' | 'sort'): void {
  if (!hidden.has(key) && !hidden.has(key.split('.')[0]!)) return;
  throw new ParseError(ParseCode.OPERATION_FORBIDDEN, `This user is not allowed to ${use === 'sort' ? 'sort by' : 'query'} ${key} on class ${className}`);
}
