import { securityReport } from '../../securityCheck.js';
import type { DataRouter } from '../router.js';
import { ok } from '../types.js';
import { requireMaster } from './classes.js';

/**
 * `GET /security` (master key; Parse Server's SecurityRouter): the app's security check report,
 * `{report: {version, state, groups: [{name, state, checks: [{title, state, warning?, solution?}]}]}}`
 * (securityCheck.ts). Parse Server answers it only with its `security.enableCheck` option (409
 * otherwise); a Backend App always does (docs/parse-differences.md).
 */
export function securityRoutes(router: DataRouter): void {
  router.on('GET', '/security', (req) => {
    requireMaster(req);
    return ok(securityReport({ settings: req.engine.settings(), classes: req.engine.schema.all(), confinement: req.context.cloud.confinement() }));
  });
}
