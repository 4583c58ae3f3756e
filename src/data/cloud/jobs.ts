import type { Logger } from '../../log.js';
import { MASTER } from '../auth/context.js';
import type { DataEngine } from '../engine.js';
import { ParseError } from '../errors.js';
import type { CloudRuntime } from './types.js';

/**
 * Starts a cloud job in the background (Parse's `POST /jobs/<name>`, or a schedule: `source`): a `_JobStatus` object records
 * it as `running`, then `succeeded` or `failed` with the error's message, and `finishedAt`.
 * @returns the `_JobStatus` objectId, which Parse answers in the `X-Parse-Job-Status-Id` header.
 */
export async function startJob(engine: DataEngine, cloud: CloudRuntime, name: string, params: Record<string, unknown>, log: Logger, source: 'api' | 'schedule' = 'api'): Promise<string> {
  const { row } = await engine.create('_JobStatus', { jobName: name, source, status: 'running', params }, MASTER);
  const jobId = row.objectId;
  // The job's last `request.message` is written before its end, which may replace the message.
  const finish = (status: 'succeeded' | 'failed', message: string | undefined) =>
    after(jobId, () => engine.update('_JobStatus', jobId, { status, finishedAt: { __type: 'Date', iso: new Date().toISOString() }, ...(message === undefined ? {} : { message }) }, MASTER)).catch(
      (error: unknown) => log.error({ err: error, app: engine.appId, job: name }, 'could not record the end of a job'),
    );
  cloud.run(engine.appId, 'job', name, { params, jobId }).then(
    (result) => finish('succeeded', result === null || result === undefined ? undefined : typeof result === 'string' ? result : JSON.stringify(result)),
    (error: unknown) => finish('failed', error instanceof ParseError || error instanceof Error ? error.message : String(error)),
  );
  return jobId;
}

/** Each running job's `_JobStatus` writes, one after another, so that none overtakes the one before. */
const writes = new Map<string, Promise<unknown>>();

function after<T>(jobId: string, write: () => Promise<T>): Promise<T> {
  const next = (writes.get(jobId) ?? Promise.resolve()).catch(() => undefined).then(write);
  writes.set(jobId, next);
  // The last write of a job forgets it (a message after its end included).
  const forget = () => {
    if (writes.get(jobId) === next) writes.delete(jobId);
  };
  next.then(forget, forget);
  return next;
}

/** Records a running job's `request.message(...)` in its `_JobStatus`, after its earlier messages. */
export function jobMessage(apps: { engine(appId: string): Promise<DataEngine | undefined> }, appId: string, jobId: string, message: string, log: Logger): void {
  after(jobId, () => apps.engine(appId).then((engine) => engine?.update('_JobStatus', jobId, { message }, MASTER))).catch((error: unknown) =>
    log.warn({ err: error, app: appId, jobId }, 'could not record a job message'),
  );
}
