import type { Logger } from '../../../log.js';
import { callerOf } from '../../cloud/hooks.js';
import { startJob } from '../../cloud/jobs.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok, type DataRequest, type DataResponse } from '../types.js';
import { requireMaster } from './classes.js';

/**
 * Cloud functions and jobs (Parse REST guide, "Cloud Code"): `POST /functions/<name>` answers
 * `{result}` (141 with the thrown message on failure); `POST /jobs/<name>` (master key) starts the
 * job in the background and answers `{}` with its `_JobStatus` id in `X-Parse-Job-Status-Id`;
 * `POST /jobs` with `{jobName, ...}` does the same for the job the body names (141 without one).
 */
export function functionRoutes(router: DataRouter, log: Logger): void {
  router.on(['POST', 'GET'], '/functions/:name', async (req, { name }) => {
    refuseInTransaction(req);
    // Unknown names are answered by the worker too, so that a load error shows instead of "Invalid function".
    const params = req.method === 'GET' ? req.query : isPlainObject(req.body) ? req.body : {};
    const result = await req.context.cloud.run(req.engine.appId, 'function', name!, { params, ...callerOf(req.engine, req.auth) });
    return ok({ result });
  });
  const runJob = async (req: DataRequest, name: string): Promise<DataResponse> => {
    requireMaster(req);
    if (!req.registry.jobs.includes(name)) throw new ParseError(ParseCode.SCRIPT_FAILED, `Invalid job: "${name}"`);
    refuseInTransaction(req);
    const jobId = await startJob(req.engine, req.context.cloud, name, isPlainObject(req.body) ? req.body : {}, log);
    return ok({}, 200, { 'x-parse-job-status-id': jobId, 'x-backend-job-status-id': jobId });
  };
  router.on('POST', '/jobs/:name', (req, { name }) => runJob(req, name!));
  // Parse Dashboard's "Run now" names the job in the body: `{jobName, ...params}`; the whole body is
  // the job's `request.params`, as Parse Server's FunctionsRouter.handleCloudJob passes it.
  router.on('POST', '/jobs', (req) => {
    requireMaster(req);
    const jobName = isPlainObject(req.body) ? req.body.jobName : undefined;
    if (typeof jobName !== 'string' || jobName === '') {
      throw new ParseError(ParseCode.SCRIPT_FAILED, 'Invalid job: POST /jobs needs "jobName", the name of a job the app\'s cloud code defines.');
    }
    return runJob(req, jobName);
  });
}
