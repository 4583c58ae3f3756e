import { ParseCode, ParseError } from '../../errors.js';
import type { DataRouter } from '../router.js';
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
    const { row } = req.engine.create(className!, req.body, req.auth);
    return ok({ objectId: row.objectId, createdAt: row.createdAt }, 201, { location: location(req, className!, row.objectId) });
  });
  router.on('GET', '/classes/:className', (req, { className }) => ok(req.engine.find(className!, req.query, req.auth)));
  router.on('GET', '/classes/:className/:objectId', (req, { className, objectId }) => ok(req.engine.get(className!, objectId!, req.auth, req.query)));
  router.on('PUT', '/classes/:className/:objectId', (req, { className, objectId }) => {
    const { row, computed } = req.engine.update(className!, objectId!, req.body, req.auth);
    return ok({ updatedAt: row.updatedAt, ...computed });
  });
  router.on('DELETE', '/classes/:className/:objectId', (req, { className, objectId }) => {
    req.engine.delete(className!, objectId!, req.auth);
    return ok({});
  });
}

/** @throws ParseError 119 (with status 403) unless the request carries the master key. */
export function requireMaster(req: DataRequest): void {
  if (!req.auth.master) throw new ParseError(ParseCode.OPERATION_FORBIDDEN, 'unauthorized: master key is required', 403);
}
