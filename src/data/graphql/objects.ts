import { cursorToOffset } from 'graphql-relay';
import type { StoredObject } from '../engine.js';
import { ParseCode } from '../errors.js';
import { parseError, type GraphQLContext } from './context.js';
import { includesFor } from './selection.js';
import { toParseWhere, type ClassFields } from './where.js';

/** The app's classes as the schema was built from them, for the transforms the resolvers make. */
export interface SchemaClasses {
  fields: ClassFields;
}

const classPath = (className: string, objectId?: string) =>
  `/classes/${encodeURIComponent(className)}${objectId === undefined ? '' : `/${encodeURIComponent(objectId)}`}`;

/** Selected paths as Parse names them: `id` is `objectId`. */
const keysOf = (paths: string[]) => paths.map((p) => (p === 'id' ? 'objectId' : p.endsWith('.id') ? `${p.slice(0, -3)}.objectId` : p));

/**
 * One object by objectId, with the selected pointers included (a `<class>(id)` query, `node`, the
 * object a mutation answers). `_User` objects lose `sessionToken`, as Parse Server's do.
 * @throws GraphQLError 101 when it does not exist or the caller may not see it; the data API's other errors.
 */
export async function getObject(ctx: GraphQLContext, classes: SchemaClasses, className: string, objectId: string, paths: string[], stored?: StoredObject): Promise<Record<string, unknown>> {
  const include = includesFor(keysOf(paths), className, classes.fields);
  const object = await ctx.call({ method: 'GET', path: classPath(className, objectId), query: include.length ? { include: include.join(',') } : {}, stored });
  if (className === '_User') delete object.sessionToken;
  return object;
}

/** The find arguments of a connection (`where`, `order`, `skip` and Relay's `first`/`after`/`last`/`before`). */
export interface FindArgs {
  where?: Record<string, unknown> | null;
  order?: string[] | null;
  skip?: number | null;
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A cursor as the offset it stands for; NaN for a text that is no cursor. */
const offsetOf = (cursor: string) => cursorToOffset(cursor);

/**
 * The skip and limit a connection's arguments ask for, by Parse Server's rules
 * (parse-server src/GraphQL/helpers/objectsQueries.js, `calculateSkipAndLimit`): `after` skips
 * past its cursor, `first` limits, `before` cuts the page at its cursor, `last` keeps the end of
 * the page, and `last` alone needs the count first (`preCount`).
 * @throws GraphQLError 102 for a negative skip, first or last, or a cursor that is no cursor.
 */
export function pageWindow(args: FindArgs, maxLimit: number | null): { skip?: number; limit?: number; preCount: boolean } {
  let skip: number | undefined;
  let limit: number | undefined;
  let preCount = false;
  if (args.skip !== undefined && args.skip !== null) {
    if (args.skip < 0) throw parseError(ParseCode.INVALID_QUERY, 'Skip should be a positive number');
    skip = args.skip;
  }
  if (args.after) {
    const after = offsetOf(args.after);
    if (!Number.isFinite(after) || after < 0) throw parseError(ParseCode.INVALID_QUERY, 'After is not a valid cursor');
    skip = (skip ?? 0) + after + 1;
  }
  if (args.first !== undefined && args.first !== null) {
    if (args.first < 0) throw parseError(ParseCode.INVALID_QUERY, 'First should be a positive number');
    limit = args.first;
  }
  if (args.before) {
    const before = offsetOf(args.before);
    if (!Number.isFinite(before) || before < 0) throw parseError(ParseCode.INVALID_QUERY, 'Before is not a valid cursor');
    if ((skip ?? 0) >= before) limit = 0;
    else if (limit === undefined || (skip ?? 0) + limit > before) limit = before - (skip ?? 0);
  }
  if (args.last !== undefined && args.last !== null) {
    let last = args.last;
    if (last < 0) throw parseError(ParseCode.INVALID_QUERY, 'Last should be a positive number');
    if (maxLimit !== null && last > maxLimit) last = maxLimit;
    if (limit !== undefined) {
      if (last < limit) {
        skip = (skip ?? 0) + limit - last;
        limit = last;
      }
    } else if (last === 0) limit = 0;
    else {
      limit = last;
      preCount = true;
    }
  }
  return { skip, limit, preCount };
}

/**
 * The Relay cursor of the object at `offset` in a connection, as graphql-relay's `offsetToCursor`
 * writes it (base64 of `arrayconnection:<offset>`), with Node's native base64: graphql-relay's own
 * encoder, run for every edge, was a tenth of a GraphQL find's allocations.
 */
export const cursorOf = (offset: number): string => Buffer.from(`arrayconnection:${offset}`).toString('base64');

/** An edge whose cursor is written only when the selection asks for it. */
class Edge {
  constructor(
    private readonly offset: number,
    readonly node: Record<string, unknown>,
  ) {}

  get cursor(): string {
    return cursorOf(this.offset);
  }
}

/** A connection: `edges {cursor node}`, `pageInfo`, `count`. */
export interface Connection {
  edges: { cursor: string; node: Record<string, unknown> }[];
  pageInfo: { hasPreviousPage: boolean; hasNextPage: boolean; startCursor: string; endCursor: string };
  count?: number;
}

/**
 * Objects of a class as a Relay connection (the `<classes>` query, a relation field): one data API
 * find, preceded by a count when only `last` is given; the count is asked for only when `count` or
 * `pageInfo`'s has-page flags are selected, and objects only when `edges` or `pageInfo` are.
 * `paths` are the selected paths below the connection. `extra` is ANDed into the where (`$relatedTo`).
 */
export async function findObjects(
  ctx: GraphQLContext,
  classes: SchemaClasses,
  className: string,
  args: FindArgs,
  paths: string[],
  extra: Record<string, unknown> = {},
): Promise<Connection> {
  const where = { ...extra, ...toParseWhere(args.where ?? {}, className, classes.fields) };
  const window = pageWindow(args, ctx.maxLimit);
  let skip = window.skip;
  let preCount: number | undefined;
  const path = classPath(className);
  if (window.preCount) {
    preCount = (await ctx.call({ method: 'GET', path, query: { where, limit: 0, count: 1 } })).count as number;
    if ((skip ?? 0) + window.limit! < preCount) skip = preCount - window.limit!;
  }
  const query: Record<string, unknown> = { where };
  if (paths.some((p) => p.startsWith('edges.') || p.startsWith('pageInfo.'))) {
    query.limit = window.limit ?? 100;
    if (query.limit !== 0) {
      if (args.order?.length) query.order = args.order.join(',');
      if (skip) query.skip = skip;
      const include = includesFor(keysOf(paths.filter((p) => p.startsWith('edges.node.')).map((p) => p.slice('edges.node.'.length))), className, classes.fields);
      if (include.length) query.include = include.join(',');
    }
  } else query.limit = 0;
  const wantsCount = paths.includes('count') || paths.includes('pageInfo.hasPreviousPage') || paths.includes('pageInfo.hasNextPage');
  if (wantsCount && !window.preCount) query.count = 1;
  const answer = await ctx.call({ method: 'GET', path, query });
  const results = answer.results as Record<string, unknown>[];
  const count = (preCount ?? answer.count) as number | undefined;
  const offset = skip ?? 0;
  return {
    edges: results.map((node, i) => new Edge(offset + i, node)),
    pageInfo: {
      hasPreviousPage: Boolean(count) && offset > 0,
      startCursor: cursorOf(offset),
      endCursor: cursorOf(offset + (results.length || 1) - 1),
      hasNextPage: (count ?? 0) > offset + results.length,
    },
    count,
  };
}

/**
 * Creates an object from Parse-form fields and answers it as the mutation shows it: what the data API
 * answered, the fields as sent (`null` for deleted ones), and the object as read back whenever the
 * selection names any field (as Parse Server does: a caller who may not read the object gets 101).
 */
export async function createObject(ctx: GraphQLContext, classes: SchemaClasses, className: string, fields: Record<string, unknown>, paths: string[]) {
  const { body: created, stored } = await ctx.write({ method: 'POST', path: classPath(className), body: fields });
  const read = paths.length ? await getObject(ctx, classes, className, created.objectId, paths, stored) : {};
  return { ...created, updatedAt: created.createdAt, ...shownFields(fields), ...read };
}

/** Updates an object as `createObject` creates one. */
export async function updateObject(ctx: GraphQLContext, classes: SchemaClasses, className: string, objectId: string, fields: Record<string, unknown>, paths: string[]) {
  const { body: updated, stored } = await ctx.write({ method: 'PUT', path: classPath(className, objectId), body: fields });
  const read = paths.length ? await getObject(ctx, classes, className, objectId, paths, stored) : {};
  return { objectId, ...updated, ...shownFields(fields), ...read };
}

/** Deletes an object, reading it first when the selection asks for more than its id. */
export async function deleteObject(ctx: GraphQLContext, classes: SchemaClasses, className: string, objectId: string, paths: string[]) {
  const read = paths.some((p) => p !== 'id' && p !== 'objectId') ? await getObject(ctx, classes, className, objectId, paths) : {};
  await ctx.call({ method: 'DELETE', path: classPath(className, objectId) });
  return { objectId, ...read };
}

/** Sent fields as the answer shows them before a read: a `Delete` operation is null. */
function shownFields(fields: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) shown[k] = v && typeof v === 'object' && (v as { __op?: unknown }).__op === 'Delete' ? null : v;
  return shown;
}
