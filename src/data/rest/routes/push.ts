import type { Logger } from '../../../log.js';
import { MASTER } from '../../auth/context.js';
import { isPlainObject } from '../../values.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

/**
 * `POST /push` (Parse REST guide, "Sending Pushes"), master key only: answers `{"result": true}`
 * with the `_PushStatus` objectId in `X-Parse-Push-Status-Id` at once; delivery goes on in the
 * background (push/service.ts) and the status tells how it went. With `audience_id`, the
 * `_Audience` it names gets `lastUsed` now and one more `timesUsed`.
 */
export function pushRoutes(router: DataRouter, log: Logger): void {
  router.on('POST', '/push', async (req) => {
    requireMaster(req);
    refuseInTransaction(req);
    const statusId = await req.services.push.send({ outbound: req.context.outbound }, req.body, log);
    // A push sent to a saved audience counts as a use of it (Parse Server's PushController), without holding the answer.
    const audienceId = isPlainObject(req.body) ? req.body.audience_id : undefined;
    if (typeof audienceId === 'string') {
      const use = { lastUsed: { __type: 'Date', iso: new Date().toISOString() }, timesUsed: { __op: 'Increment', amount: 1 } };
      req.engine.update('_Audience', audienceId, use, MASTER).catch((error: unknown) => log.warn({ err: error, app: req.engine.appId, audienceId }, 'could not record the use of a push audience'));
    }
    return ok({ result: true }, 200, { 'x-parse-push-status-id': statusId });
  });
}
