import type { Logger } from '../../../log.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

/**
 * `POST /push` (Parse REST guide, "Sending Pushes"), master key only: answers `{"result": true}`
 * with the `_PushStatus` objectId in `X-Parse-Push-Status-Id` at once; delivery goes on in the
 * background (push/service.ts) and the status tells how it went.
 */
export function pushRoutes(router: DataRouter, log: Logger): void {
  router.on('POST', '/push', async (req) => {
    requireMaster(req);
    refuseInTransaction(req);
    const statusId = await req.services.push.send({ outbound: req.context.outbound }, req.body, log);
    return ok({ result: true }, 200, { 'x-parse-push-status-id': statusId });
  });
}
