import { isDeepStrictEqual } from 'node:util';
import { afterFind, afterTrigger, beforeFind, beforeSave, guardTrigger, hasTrigger, type SaveTriggerContext } from '../../cloud/hooks.js';
import type { TriggerName } from '../../cloud/types.js';
import type { WriteResult } from '../../engine.js';
import { ParseCode, ParseError } from '../../errors.js';
import { checkGetParams } from '../../objects/findParams.js';
import { isPlainObject } from '../../values.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { jsonText, ok, type DataRequest, type DataResponse } from '../types.js';

/** Class names of the special endpoints (Parse REST guide): `/users` is `_User`, and so on. */
export const CLASS_ALIASES: Record<string, string> = {
  users: '_User',
  roles: '_Role',
  sessions: '_Session',
  installations: '_Installation',
};

const location = (req: DataRequest, className: string, objectId: string) =>
  `${req.mountUrl}/classes/${encodeURIComponent(className)}/${encodeURIComponent(objectId)}`;

/**
 * `/classes/<ClassName>[/<objectId>]` (Parse REST guide, "Objects" and "Queries"): create with
 * `Location`, query, get, update answering `updatedAt` and computed values, delete answering `{}`.
 */
export function classRoutes(router: DataRouter): void {
  router.on('POST', '/classes/:className', (req, { className }) => createObject(req, className!));
  router.on('GET', '/classes/:className', (req, { className }) => {
    // Without triggers the answer's rows are sent as the database gave their JSON (engine.ts findText).
    if (!hasAnyTrigger(req, className!, ['beforeFind', 'afterFind'])) {
      return req.readsObjects ? req.engine.find(className!, req.query, req.auth).then((answer) => ok(answer)) : req.engine.findText(className!, req.query, req.auth).then(jsonText);
    }
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const answer = await req.engine.find(className!, await beforeFind(ctx, className!, req.query), req.auth);
      return ok({ ...answer, results: await afterFind(ctx, className!, answer.results) });
    })();
  });
  router.on('GET', '/classes/:className/:objectId', (req, { className, objectId }) => {
    checkGetParams(req.query);
    if (!hasAnyTrigger(req, className!, ['beforeFind', 'afterFind'])) {
      const stored = req.stored && req.stored.className === className ? req.stored.row : undefined;
      // As a find's: the object is sent as the database gave its JSON where nothing changes it (engine.ts getText).
      if (!req.readsObjects) return req.engine.getText(className!, objectId!, req.auth, req.query, stored).then(jsonText);
      return req.engine.get(className!, objectId!, req.auth, req.query, stored).then((object) => ok(object));
    }
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const params = await beforeFind(ctx, className!, { ...req.query, where: { objectId } }, true);
      const { where: _ignored, ...rest } = params;
      const [object] = await afterFind(ctx, className!, [await req.engine.get(className!, objectId!, req.auth, rest)]);
      if (!object) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');
      return ok(object);
    })();
  });
  router.on('PUT', '/classes/:className/:objectId', (req, { className, objectId }) => updateObject(req, className!, objectId!));
  router.on('DELETE', '/classes/:className/:objectId', (req, { className, objectId }) => {
    if (!hasAnyTrigger(req, className!, ['beforeDelete', 'afterDelete'])) {
      return req.engine.delete(className!, objectId!, req.auth).then(() => ok({}));
    }
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const current = await req.engine.getRow(className!, objectId!, req.auth);
      if (!current) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');
      await guardTrigger(ctx, 'beforeDelete', className!, req.engine.toJson(className!, current));
      const deleted = await req.engine.delete(className!, objectId!, req.auth);
      await afterTrigger(ctx, 'afterDelete', className!, req.engine.toJson(className!, deleted));
      return ok({});
    })();
  });
}

/** Whether the app's cloud code registered one of `triggers` for the class. */
export const hasAnyTrigger = (req: DataRequest, className: string, triggers: TriggerName[]): boolean =>
  triggers.some((t) => hasTrigger(req.registry, className, t));

/**
 * Creates an object of `className` from `body` (the request's, or one a route prepared, such as an
 * installation's): 201 with `objectId`, `createdAt`, what the server filled in and what a beforeSave
 * trigger changed, and `Location`; beforeSave and afterSave run when registered.
 */
export function createObject(req: DataRequest, className: string, body: unknown = req.body): DataResponse | Promise<DataResponse> {
  // Parse answers what the server filled in too: operation results and schema default values.
  const answer = ({ row, computed }: WriteResult) => ok({ objectId: row.objectId, createdAt: row.createdAt, ...computed }, 201, { location: location(req, className, row.objectId) });
  if (!hasAnyTrigger(req, className, ['beforeSave', 'afterSave'])) return req.engine.create(className, body, req.auth).then((result) => withStored(answer(result), className, result));
  refuseInTransaction(req);
  return (async () => {
    const ctx = triggerContext(req);
    const changed = await beforeSave(ctx, className, body);
    const result = await req.engine.create(className, changed, req.auth);
    const saved = req.engine.toJson(className, result.row);
    await afterTrigger(ctx, 'afterSave', className, saved);
    return answer({ ...result, computed: { ...result.computed, ...changedByTrigger(body, changed, saved) } });
  })();
}

/** Updates an object as `createObject` creates one: 200 with `updatedAt` and what the server and a beforeSave trigger changed. */
export function updateObject(req: DataRequest, className: string, objectId: string, body: unknown = req.body, extra: Record<string, unknown> = {}): DataResponse | Promise<DataResponse> {
  const answer = ({ row, computed }: WriteResult) => ok({ ...extra, updatedAt: row.updatedAt, ...computed });
  if (!hasAnyTrigger(req, className, ['beforeSave', 'afterSave'])) return req.engine.update(className, objectId, body, req.auth).then((result) => withStored(answer(result), className, result));
  refuseInTransaction(req);
  return (async () => {
    const ctx = triggerContext(req);
    const before = await req.engine.getRow(className, objectId, req.auth);
    const changed = await beforeSave(ctx, className, body, objectId);
    const result = await req.engine.update(className, objectId, changed, req.auth);
    const saved = req.engine.toJson(className, result.row);
    await afterTrigger(ctx, 'afterSave', className, saved, before && req.engine.toJson(className, before));
    return answer({ ...result, computed: { ...result.computed, ...changedByTrigger(body, changed, saved) } });
  })();
}

/** A write's answer with the object it stored (DataResponse.stored): no afterSave trigger changes it after. */
const withStored = (response: DataResponse, className: string, { row }: WriteResult): DataResponse => ({ ...response, stored: { className, row } });

/**
 * The fields a beforeSave trigger set or changed, as saved: Parse Server answers them with the
 * write (`fieldsChangedByTrigger`), so that the client's object holds what was stored.
 */
export function changedByTrigger(sent: unknown, body: unknown, saved: Record<string, unknown>): Record<string, unknown> {
  if (!isPlainObject(body) || body === sent) return {};
  const before = isPlainObject(sent) ? sent : {};
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (key === 'ACL' || isDeepStrictEqual(before[key], body[key])) continue;
    if (key in saved) changed[key] = saved[key];
  }
  return changed;
}

export const triggerContext = (req: DataRequest): SaveTriggerContext => ({ cloud: req.context.cloud, registry: req.registry, engine: req.engine, auth: req.auth, original: req.services.triggers.original });

/** @throws ParseError 119 (with status 403) unless the request carries the master key. */
export function requireMaster(req: DataRequest): void {
  if (!req.auth.master) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, 'unauthorized: master key is required', 403);
}
