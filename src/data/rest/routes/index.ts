import type { Logger } from '../../../log.js';
import { DataRouter } from '../router.js';
import { audienceRoutes } from './audiences.js';
import { batchRoutes } from './batch.js';
import { classRoutes } from './classes.js';
import { extraRoutes } from './misc.js';
import { functionRoutes } from './functions.js';
import { graphQLRoutes } from './graphql.js';
import { hookRoutes } from './hooks.js';
import { jobScheduleRoutes } from './jobSchedules.js';
import { installationRoutes } from './installations.js';
import { pushRoutes } from './push.js';
import { scriptLogRoutes } from './scriptlog.js';
import { securityRoutes } from './security.js';
import { schemaRoutes } from './schemas.js';
import { userRoutes } from './users.js';

/**
 * Every route of the data API (Interface B), relative to its mount. `mountPath` is the mount's
 * path (`/data`), which batch sub-requests may carry in front of theirs.
 */
export function createDataRouter(log: Logger, mountPath: () => string): DataRouter {
  const router = new DataRouter(log);
  classRoutes(router);
  batchRoutes(router, mountPath);
  schemaRoutes(router);
  userRoutes(router);
  extraRoutes(router);
  functionRoutes(router, log);
  hookRoutes(router);
  jobScheduleRoutes(router);
  installationRoutes(router);
  pushRoutes(router, log);
  audienceRoutes(router);
  scriptLogRoutes(router);
  securityRoutes(router);
  graphQLRoutes(router, log);
  return router;
}
