import type { DataRouter } from '../router.js';
import type { DataRequest, DataResponse, RouteHandler } from '../types.js';
import { createObject, updateObject } from './classes.js';

/**
 * Installations (Parse REST guide, "Installations"): `/installations` and `/classes/_Installation`.
 * A save goes through Parse's installation rules (push/installations.ts): a POST that names an
 * existing installation (its installationId, or a device token saved alone) updates it and answers
 * 200 with its `objectId` and `updatedAt`. Reads and deletes are the class's (clients may only get
 * an installation by objectId; finding and deleting need the master key).
 */
export function installationRoutes(router: DataRouter): void {
  /** The write's answer, after the installations that lost its device token are deleted (only once it succeeded). */
  const thenRemove = async (req: DataRequest, remove: readonly string[], written: DataResponse | Promise<DataResponse>) => {
    const answer = await written;
    if (answer.status < 300 && remove.length) await req.services.push.deleteInstallations(remove);
    return answer;
  };
  const create: RouteHandler = async (req) => {
    const prepared = await req.services.push.prepareInstallationWrite(req.body, req.auth);
    if (prepared.objectId) return thenRemove(req, prepared.remove, updateObject(req, '_Installation', prepared.objectId, prepared.body, { objectId: prepared.objectId }));
    return thenRemove(req, prepared.remove, createObject(req, '_Installation', prepared.body));
  };
  const update: RouteHandler = async (req, { objectId }) => {
    const prepared = await req.services.push.prepareInstallationWrite(req.body, req.auth, objectId);
    return thenRemove(req, prepared.remove, updateObject(req, '_Installation', prepared.objectId ?? objectId!, prepared.body));
  };
  for (const base of ['/installations', '/classes/_Installation']) {
    router.on('POST', base, create);
    router.on('PUT', `${base}/:objectId`, update);
  }
  router.on('GET', '/installations', (req) => router.dispatch({ ...req, path: '/classes/_Installation' }));
  router.on(['GET', 'DELETE'], '/installations/:objectId', (req, { objectId }) => router.dispatch({ ...req, path: `/classes/_Installation/${encodeURIComponent(objectId!)}` }));
}
