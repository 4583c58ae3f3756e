import { isDeepStrictEqual } from 'node:util';
import type { StoredRow } from '../storage/adapter.js';
import type { Auth } from '../auth/context.js';
import type { DataEngine } from '../engine.js';
import { applyChanges } from '../objects/operations.js';
import { isPlainObject } from '../values.js';
import { LIVE_QUERY_CLASS, type CloudCaller, type CloudRegistry, type CloudRuntime, type TriggerName } from './types.js';

/** The caller as cloud code sees it: master flag, the user (with its session token), installation. */
export function callerOf(engine: DataEngine, auth: Auth): CloudCaller {
  const user = auth.user ? { ...engine.toJson('_User', auth.user), sessionToken: auth.sessionToken } : undefined;
  return { master: auth.master, user, installationId: auth.installationId };
}

/**
 * Whether the app's cloud code registered `trigger` for `className`. The registry's own keys only: a
 * class may be named like a property every object has (`constructor`, `valueOf`).
 */
export const hasTrigger = (registry: CloudRegistry, className: string, trigger: TriggerName): boolean =>
  Object.hasOwn(registry.triggers, className) && registry.triggers[className]!.includes(trigger);

/** Everything a trigger call needs. */
export interface TriggerContext {
  cloud: CloudRuntime;
  registry: CloudRegistry;
  engine: DataEngine;
  auth: Auth;
}

/** What `beforeSave` needs besides: the object as stored before the write (AppServices.triggers.original). */
export interface SaveTriggerContext extends TriggerContext {
  original(className: string, objectId: string): Promise<StoredRow | undefined>;
}

const run = (ctx: TriggerContext, trigger: TriggerName, className: string, request: Record<string, unknown>) =>
  ctx.cloud.run(ctx.engine.appId, 'trigger', trigger, { className, ...callerOf(ctx.engine, ctx.auth), ...request });

/**
 * Runs `beforeSave` (Parse semantics): the trigger sees the object as it would be saved and may
 * change it or throw to refuse the save (ParseError 141, or the code it threw, e.g. 142).
 * Cloud code answers `{changes}` (what its trigger set), merged into the request's body; a webhook
 * answers `{object}`, the whole object to save (webhooks.ts), read by `bodyFromObject`.
 * @returns the body to save.
 */
export async function beforeSave(ctx: SaveTriggerContext, className: string, body: unknown, objectId?: string): Promise<unknown> {
  if (!hasTrigger(ctx.registry, className, 'beforeSave') || !isPlainObject(body)) return body;
  const original = objectId ? await ctx.original(className, objectId) : undefined;
  const originalJson = original ? ctx.engine.toJson(className, original) : undefined;
  const { ACL, ...fields } = body;
  const merged = applyChanges(original?.data ?? {}, Object.fromEntries(Object.entries(fields).filter(([k]) => !['objectId', 'createdAt', 'updatedAt'].includes(k))));
  const object = { ...(originalJson ?? {}), ...merged.data, ...(ACL !== undefined ? { ACL } : {}), ...(objectId ? { objectId } : {}) };
  const result = (await run(ctx, 'beforeSave', className, { object, original: originalJson })) as { changes?: Record<string, unknown>; object?: Record<string, unknown> };
  if (result?.object) return bodyFromObject(body, JSON.parse(JSON.stringify(object)) as Record<string, unknown>, result.object);
  return { ...body, ...(result?.changes ?? {}) };
}

/**
 * The body that saves what a beforeSave webhook answered, as Parse Server saves it (its
 * RestWrite.runBeforeSaveTrigger: `this.data = response.object`): a field the answer leaves out is
 * not written (a client's field is dropped; a stored one keeps its value), and a field it changed
 * is written as answered. A field it gives back as it was sent keeps the client's own value or
 * operation, and a stored field given back unchanged is not written again, so that the write is
 * checked as the client's was (an echoed `emailVerified` or `authData` is no client's change).
 * @param sent the object the webhook was sent (as JSON); `answer` its answer, without dates and className.
 */
function bodyFromObject(body: Record<string, unknown>, sent: Record<string, unknown>, answer: Record<string, unknown>): Record<string, unknown> {
  const saved: Record<string, unknown> = {};
  // The object's id is the request's: a create's custom objectId, or none.
  if ('objectId' in body) saved.objectId = body.objectId;
  for (const [key, value] of Object.entries(answer)) {
    if (key === 'objectId') continue;
    const unchanged = key in sent && isDeepStrictEqual(value, sent[key]);
    if (!unchanged) saved[key] = value;
    else if (key in body) saved[key] = body[key];
  }
  return saved;
}

/** Runs an after-trigger (afterSave, afterDelete, afterLogin) and ignores its failure, as Parse does. */
export async function afterTrigger(ctx: TriggerContext, trigger: 'afterSave' | 'afterDelete' | 'afterLogin', className: string, object: Record<string, unknown>, original?: Record<string, unknown>): Promise<void> {
  if (!hasTrigger(ctx.registry, className, trigger)) return;
  await run(ctx, trigger, className, { object, original }).catch(() => undefined);
}

/** Runs a before-trigger that may only refuse (beforeDelete, beforeLogin). @throws what the trigger threw. */
export async function guardTrigger(ctx: TriggerContext, trigger: 'beforeDelete' | 'beforeLogin', className: string, object: Record<string, unknown>): Promise<void> {
  if (!hasTrigger(ctx.registry, className, trigger)) return;
  await run(ctx, trigger, className, { object });
}

/** Runs `beforeFind`: the trigger may change the query. @returns the query parameters to run. */
export async function beforeFind(ctx: TriggerContext, className: string, params: Record<string, unknown>, isGet = false): Promise<Record<string, unknown>> {
  if (!hasTrigger(ctx.registry, className, 'beforeFind')) return params;
  const where = typeof params.where === 'string' ? JSON.parse(params.where) : params.where;
  const query = { ...params, where: where ?? {} };
  const result = (await run(ctx, 'beforeFind', className, { query, isGet, count: params.count === 1 || params.count === '1' || params.count === true })) as { query?: Record<string, unknown> };
  const next = { ...params, ...(result?.query ?? {}) };
  delete next.className;
  return next;
}

/**
 * Runs LiveQuery's `beforeSubscribe` (Parse Server's): the trigger may refuse the subscription
 * (ParseError 141, or the code it threw) or change its query.
 * @returns the `where` and `keys` to subscribe with.
 */
export async function beforeSubscribe(ctx: TriggerContext, className: string, query: { where: Record<string, unknown>; keys?: string[] }): Promise<{ where: Record<string, unknown>; keys?: string[] }> {
  if (!hasTrigger(ctx.registry, className, 'beforeSubscribe')) return query;
  const sent = { where: query.where, ...(query.keys ? { keys: query.keys.join(',') } : {}) };
  const result = (await run(ctx, 'beforeSubscribe', className, { query: sent })) as { query?: { where?: Record<string, unknown>; keys?: string } };
  const where = result?.query?.where ?? query.where;
  const keys = typeof result?.query?.keys === 'string' ? result.query.keys.split(',') : query.keys;
  return { where, ...(keys ? { keys } : {}) };
}

/** Runs `afterFind`: the trigger may change or replace the results. */
export async function afterFind(ctx: TriggerContext, className: string, objects: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  if (!hasTrigger(ctx.registry, className, 'afterFind')) return objects;
  const result = (await run(ctx, 'afterFind', className, { objects })) as { objects?: Record<string, unknown>[] };
  const out = (result?.objects ?? objects).map((o) => {
    const { __type: _t, className: _c, ...rest } = o;
    return rest;
  });
  // What the trigger returns is answered as objects of the class, so their protected fields stay hidden.
  return out.map((o) => ctx.engine.protect(className, o, ctx.auth));
}

/**
 * Runs LiveQuery's `afterLiveQueryEvent` for one event to one subscriber (Parse Server's
 * `_onAfterSave`): the trigger sees the whole object and the subscriber as `request.user`, and may
 * change the object or set `request.sendEvent = false`. A trigger that throws drops the event, as
 * Parse Server does.
 * @returns whether to send the event, and the object to send (protected fields are hidden after).
 */
export async function afterLiveQueryEvent(
  ctx: TriggerContext,
  className: string,
  event: { event: string; object: Record<string, unknown>; original?: Record<string, unknown>; clients: number; subscriptions: number },
): Promise<{ send: boolean; object: Record<string, unknown> }> {
  if (!hasTrigger(ctx.registry, className, 'afterLiveQueryEvent')) return { send: true, object: event.object };
  try {
    const result = (await run(ctx, 'afterLiveQueryEvent', className, event)) as { sendEvent?: boolean; object?: Record<string, unknown> };
    const { __type: _t, ...object } = isPlainObject(result?.object) ? result.object : event.object;
    return { send: result?.sendEvent !== false, object: { ...object, className } };
  } catch {
    return { send: false, object: event.object };
  }
}

/**
 * Tells cloud code's `Parse.Cloud.onLiveQueryEvent` of a LiveQuery connection event (`connect`,
 * `subscribe`, `unsubscribe`, `ws_disconnect`), with the server's numbers of clients and
 * subscriptions. Its result and failures are ignored; nobody waits for it.
 */
export function onLiveQueryEvent(cloud: CloudRuntime, registry: CloudRegistry | undefined, appId: string, event: Record<string, unknown>): void {
  if (!registry || !hasTrigger(registry, LIVE_QUERY_CLASS, 'onLiveQueryEvent')) return;
  cloud.run(appId, 'trigger', 'onLiveQueryEvent', { ...event, className: LIVE_QUERY_CLASS }).catch(() => undefined);
}
