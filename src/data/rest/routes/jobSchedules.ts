import { MASTER } from '../../auth/context.js';
import { readJobSchedule } from '../../cloud/schedules.js';
import { ParseCode, ParseError } from '../../errors.js';
import { isPlainObject } from '../../values.js';
import { refuseInTransaction, type DataRouter } from '../router.js';
import { ok, type DataRequest } from '../types.js';
import { requireMaster } from './classes.js';

const scheduleOf = (req: DataRequest) => (isPlainObject(req.body) ? req.body.job_schedule : undefined);
const location = (req: DataRequest, objectId: string) => `${req.mountUrl}/classes/_JobSchedule/${encodeURIComponent(objectId)}`;

/**
 * Job schedules (Parse Server's CloudCodeRouter, which Parse Dashboard and Back4App use), master key
 * only: `GET /cloud_code/jobs` (the `_JobSchedule` objects), `GET /cloud_code/jobs/data` (`{jobs,
 * in_use}`), `POST /cloud_code/jobs` `{job_schedule}`, `PUT /cloud_code/jobs/<objectId>`
 * `{job_schedule}`, `DELETE /cloud_code/jobs/<objectId>`. Unlike Parse Server, Backyard runs them
 * (cloud/scheduler.ts), and a schedule is checked field by field (142 naming the field).
 */
export function jobScheduleRoutes(router: DataRouter): void {
  const list = async (req: DataRequest) => (await req.engine.find('_JobSchedule', { order: 'createdAt', limit: 10_000 }, MASTER)).results;
  router.on('GET', '/cloud_code/jobs', async (req) => {
    requireMaster(req);
    return ok(await list(req));
  });
  router.on('GET', '/cloud_code/jobs/data', async (req) => {
    requireMaster(req);
    const schedules = await list(req);
    return ok({ jobs: req.registry.jobs, in_use: schedules.map((s) => s.jobName) });
  });
  router.on('POST', '/cloud_code/jobs', async (req) => {
    requireMaster(req);
    refuseInTransaction(req);
    const fields = readJobSchedule(scheduleOf(req), req.registry.jobs, true);
    const { row } = await req.engine.create('_JobSchedule', fields, MASTER);
    await req.context.scheduler.changed(req.engine.appId);
    return ok({ objectId: row.objectId, createdAt: row.createdAt }, 201, { location: location(req, row.objectId) });
  });
  router.on('PUT', '/cloud_code/jobs/:objectId', async (req, { objectId }) => {
    requireMaster(req);
    refuseInTransaction(req);
    const fields = readJobSchedule(scheduleOf(req), req.registry.jobs, false);
    // A changed schedule starts afresh: its next run counts from its new fields, not from the last run.
    const result = await req.engine.update('_JobSchedule', objectId!, { ...fields, lastRun: { __op: 'Delete' } }, MASTER);
    await req.context.scheduler.changed(req.engine.appId);
    return ok({ updatedAt: result.row.updatedAt });
  });
  router.on('DELETE', '/cloud_code/jobs/:objectId', async (req, { objectId }) => {
    requireMaster(req);
    refuseInTransaction(req);
    if (!(await req.services.jobs.scheduleExists(objectId!))) throw new ParseError(ParseCode.OBJECT_NOT_FOUND, 'Object not found.');
    await req.engine.delete('_JobSchedule', objectId!, MASTER);
    await req.context.scheduler.changed(req.engine.appId);
    return ok({});
  });
}
