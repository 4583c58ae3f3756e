import { ParseCode } from '../errors.js';
import type { FieldType } from '../types.js';
import { parseError, type GraphQLContext } from './context.js';
import { Upload } from './uploads.js';
import { objectIdOf, type ClassFields } from './where.js';

type Input = Record<string, any>;

const DELETE = { __op: 'Delete' };

/**
 * An `ACLInput` (`{users: [{userId, read, write}], roles: [{roleName, ...}], public: {read, write}}`)
 * as a Parse ACL; user ids may be global ids of `_User`.
 */
export function toParseAcl(input: Input): Record<string, { read: boolean; write: boolean }> {
  const acl: Record<string, { read: boolean; write: boolean }> = {};
  if (input.public) acl['*'] = { read: input.public.read, write: input.public.write };
  for (const user of input.users ?? []) acl[objectIdOf(user.userId, '_User')] = { read: user.read, write: user.write };
  for (const role of input.roles ?? []) acl[`role:${role.roleName}`] = { read: role.read, write: role.write };
  return acl;
}

/** Creates an object of `className` for a nested `createAndLink`/`createAndAdd`; answers its objectId. */
export type NestedCreate = (className: string, fields: Record<string, unknown>) => Promise<string>;

/**
 * A `Create<Class>FieldsInput` or `Update<Class>FieldsInput` value as the body of a data API write
 * (parse-server src/GraphQL/transformers/mutation.js): null deletes a field, a GeoPoint gets its
 * `__type`, a Polygon its coordinates, a File input its file (or the one its `upload` stores), a pointer input (`link` or
 * `createAndLink`) a pointer, a relation input (`add`, `remove`, `createAndAdd`) a Batch of
 * relation operations, an `ACLInput` an ACL. Nested creations run first, through `create`.
 * @throws GraphQLError 106 for a pointer input without exactly one of link and createAndLink, or a
 *   relation input with no operation; 130 for a File input without a file.
 */
export async function toParseFields(fields: Input, className: string, classes: ClassFields, create: NestedCreate): Promise<Record<string, unknown>> {
  const types = classes.get(className) ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (name === 'ACL') {
      out.ACL = value === null ? null : toParseAcl(value);
      continue;
    }
    out[name] = await fieldValue(name, value, types[name], classes, create);
  }
  return out;
}

async function fieldValue(name: string, value: any, type: FieldType | undefined, classes: ClassFields, create: NestedCreate): Promise<unknown> {
  if (type?.type === 'File') {
    if (value === null) return DELETE;
    if (value.upload instanceof Upload) return { __type: 'File', ...(await value.upload.store()) };
    const file = value.file;
    if (file && typeof file.name === 'string') return { __type: 'File', name: file.name, url: file.url };
    throw parseError(ParseCode.FILE_SAVE_ERROR, 'Invalid file upload.');
  }
  if (type?.type === 'Relation') return relationOps(name, value ?? {}, type.targetClass!, classes, create);
  if (value === null) return DELETE;
  switch (type?.type) {
    case 'GeoPoint':
      return { ...value, __type: 'GeoPoint' };
    case 'Polygon':
      return { __type: 'Polygon', coordinates: (value as Input[]).map((p) => [p.latitude, p.longitude]) };
    case 'Pointer': {
      const target = type.targetClass!;
      const given = Object.keys(value).filter((k) => value[k] !== undefined);
      if (given.length !== 1) throw parseError(ParseCode.INVALID_POINTER, `You need to provide link OR createLink on the pointer mutation of field ${name}`);
      if (value.createAndLink) {
        const objectId = await create(target, await toParseFields(value.createAndLink, target, classes, create));
        return { __type: 'Pointer', className: target, objectId };
      }
      // `link: null` links nothing, as Parse Server leaves it (the field is not written).
      return value.link ? { __type: 'Pointer', className: target, objectId: objectIdOf(value.link, target) } : undefined;
    }
    default:
      return value;
  }
}

async function relationOps(name: string, value: Input, target: string, classes: ClassFields, create: NestedCreate) {
  if (Object.keys(value).length === 0) throw parseError(ParseCode.INVALID_POINTER, `You need to provide at least one operation on the relation mutation of field ${name}`);
  const pointer = (id: string) => ({ __type: 'Pointer', className: target, objectId: objectIdOf(id, target) });
  const ops: Record<string, unknown>[] = [];
  const created: Record<string, unknown>[] = [];
  for (const fields of value.createAndAdd ?? []) created.push({ __type: 'Pointer', className: target, objectId: await create(target, await toParseFields(fields, target, classes, create)) });
  if (value.add || created.length) ops.push({ __op: 'AddRelation', objects: [...(value.add ?? []).map(pointer), ...created] });
  if (value.remove) ops.push({ __op: 'RemoveRelation', objects: value.remove.map(pointer) });
  return { __op: 'Batch', ops };
}

/** The nested-create function of a request: a plain create through the data API. */
export const nestedCreate = (ctx: GraphQLContext): NestedCreate => async (className, fields) =>
  (await ctx.call({ method: 'POST', path: `/classes/${encodeURIComponent(className)}`, body: fields })).objectId as string;
