import { afterFind, afterTrigger, beforeFind, beforeSave, guardTrigger, hasTrigger, type TriggerContext } from '../../cloud/hooks.js';
import type { TriggerName } from '../../cloud/types.js';
import type { WriteResult } from '../../engine.js';
import { ParseCode, ParseError } from '../../errors.js';
import { checkGetParams } from '../../objects/findParams.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok, type DataRequest } from '../types.js';

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
  router.on('POST', '/classes/:className', (req, { className }) => {
    // Parse answers what the server filled in too: operation results and schema default values.
    const answer = ({ row, computed }: WriteResult) => ok({ objectId: row.objectId, createdAt: row.createdAt, ...computed }, 201, { location: location(req, className!, row.objectId) });
    if (!hasAnyTrigger(req, className!, ['beforeSave', 'afterSave'])) return req.engine.create(className!, req.body, req.auth).then(answer);
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const result = await req.engine.create(className!, await beforeSave(ctx, className!, req.body), req.auth);
      await afterTrigger(ctx, 'afterSave', className!, req.engine.toJson(className!, result.row));
      return answer(result);
    })();
  });
  router.on('GET', '/classes/:className', (req, { className }) => {
    if (!hasAnyTrigger(req, className!, ['beforeFind', 'afterFind'])) return req.engine.find(className!, req.query, req.auth).then((answer) => ok(answer));
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const answer = await req.engine.find(className!, await beforeFind(ctx, className!, req.query), req.auth);
      return ok({ ...answer, results: await afterFind(ctx, className!, answer.results) });
    })();
  });
  router.on('GET', '/classes/:className/:objectId', (req, { className, objectId }) => {
    checkGetParams(req.query);
    if (!hasAnyTrigger(req, className!, ['beforeFind', 'afterFind'])) return req.engine.get(className!, objectId!, req.auth, req.query).then((object) => ok(object));
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
  router.on('PUT', '/classes/:className/:objectId', (req, { className, objectId }) => {
    const answer = ({ row, computed }: WriteResult) => ok({ updatedAt: row.updatedAt, ...computed });
    if (!hasAnyTrigger(req, className!, ['beforeSave', 'afterSave'])) return req.engine.update(className!, objectId!, req.body, req.auth).then(answer);
    refuseInTransaction(req);
    return (async () => {
      const ctx = triggerContext(req);
      const before = await req.engine.getRow(className!, objectId!, req.auth);
      const result = await req.engine.update(className!, objectId!, await beforeSave(ctx, className!, req.body, objectId), req.auth);
      await afterTrigger(ctx, 'afterSave', className!, req.engine.toJson(className!, result.row), before && req.engine.toJson(className!, before));
      return answer(result);
    })();
  });
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

export const triggerContext = (req: DataRequest): TriggerContext => ({ cloud: req.apps.cloud, registry: req.registry, engine: req.engine, auth: req.auth });

/** @throws ParseError 119 (with status 403) unless the request carries the master key. */
export function requireMaster(req: DataRequest): void {
  if (!req.auth.master) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, 'unauthorized: master key is required', 403);
}
