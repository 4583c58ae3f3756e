import { readScriptLogQuery, scriptLog } from '../../cloud/scriptLog.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

/**
 * `GET /scriptlog` (master key; Parse Server's LogsRouter): the app's cloud code log as an array of
 * `{level, message, timestamp, functionName?, ...}`, newest first unless `order=asc`. Parameters:
 * `level`, `n`/`size`, `order`, `from`, `until` (cloud/scriptLog.ts). The log is what the app's
 * recent runs wrote, kept in memory (cloud/runs.ts): a restart of Backyard empties it.
 */
export function scriptLogRoutes(router: DataRouter): void {
  router.on('GET', '/scriptlog', (req) => {
    requireMaster(req);
    return ok(scriptLog(req.context.cloud.recentRuns(req.engine.appId), readScriptLogQuery(req.query)));
  });
}
