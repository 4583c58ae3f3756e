import type { Command } from 'commander';
import type { BackendApiCall } from './data/service.js';
import type { Platform } from './platform/platform.js';
import { findRunningServer } from './server/http.js';

/** What the schedule commands need of the command line (cli.ts). */
export interface CliHelpers {
  /** Wraps an action: its failure is one line on stderr and exit code 1. */
  run: <A extends unknown[]>(body: (...args: A) => Promise<void> | void) => (...args: A) => Promise<void>;
  /** Opens the home's platform for one command and closes it after. */
  withPlatform: (body: (platform: Platform) => Promise<void> | void) => Promise<void>;
  /** The home folder the command works on. */
  home: () => string;
}

/**
 * Calls an app's data API with its master key: through the running server when there is one (it
 * holds the app's database), else in this process.
 * @throws Error naming the app when it does not exist, or the data API's refusal (its Parse error).
 */
async function masterCall(helpers: CliHelpers, appId: string, method: BackendApiCall['method'], url: string, body: Record<string, unknown> = {}): Promise<unknown> {
  const running = await findRunningServer(helpers.home());
  let answer: { code: number; body: unknown } | undefined;
  await helpers.withPlatform(async (platform) => {
    const keys = await platform.services.backendApps.keys(appId);
    if (!keys) throw new Error(`No Backend App has the application id "${appId}".`);
    if (running) {
      const response = await fetch(`${running.url}/data${url}`, {
        method,
        headers: { 'x-parse-application-id': appId, 'x-parse-master-key': keys.masterKey, 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : JSON.stringify(body),
      });
      answer = { code: response.status, body: await response.json() };
    } else {
      [answer] = await platform.services.dataApi.call(appId, [{ method, url, body }]);
    }
  });
  const { code, body: result } = answer!;
  if (code >= 400) throw new Error((result as { error?: string }).error ?? `the data API answered ${code}`);
  return result;
}

/**
 * `backyard app schedule`, `app schedules` and `app unschedule`: a
 * Backend App's `_JobSchedule` objects through its data API (`/cloud_code/jobs`).
 */
export function scheduleCommands(app: Command, helpers: CliHelpers): void {
  app
    .command('schedule <appId> <jobName>')
    .description("schedule a cloud job (Parse's _JobSchedule): every N minutes, or daily at a UTC time; once at --start without either. Prints the schedule's objectId")
    .option('--every <minutes>', 'repeat every so many minutes (fractions allowed, at least 1/60)')
    .option('--at <HH:MM>', 'run daily at this UTC time')
    .option('--days <days>', 'with --at: the days of the week, numbers 0 (Sunday) to 6, comma-separated')
    .option('--start <date>', 'ISO 8601 date before which it does not run (default: now)')
    .option('--params <json>', 'the job\'s parameters, a JSON object')
    .option('--description <text>')
    .action(
      helpers.run(async (appId: string, jobName: string, opts: Record<string, string | undefined>) => {
        const schedule: Record<string, unknown> = { jobName };
        if (opts.every !== undefined) schedule.repeatMinutes = Number(opts.every);
        if (opts.at !== undefined) schedule.timeOfDay = opts.at;
        if (opts.days !== undefined) schedule.daysOfWeek = opts.days.split(',').map(Number);
        if (opts.start !== undefined) schedule.startAfter = opts.start;
        if (opts.params !== undefined) schedule.params = opts.params;
        if (opts.description !== undefined) schedule.description = opts.description;
        const created = (await masterCall(helpers, appId, 'POST', '/cloud_code/jobs', { job_schedule: schedule })) as { objectId: string };
        process.stdout.write(`${created.objectId}\n`);
      }),
    );

  app
    .command('schedules <appId>')
    .description("list a Backend App's job schedules: objectId, job, when, last run")
    .action(
      helpers.run(async (appId: string) => {
        const schedules = (await masterCall(helpers, appId, 'GET', '/cloud_code/jobs')) as Array<Record<string, unknown>>;
        for (const s of schedules) {
          const when = s.repeatMinutes ? `every ${s.repeatMinutes} min` : s.timeOfDay ? `daily at ${s.timeOfDay}${Array.isArray(s.daysOfWeek) ? ` on ${s.daysOfWeek.join(',')}` : ''}` : `once at ${s.startAfter}`;
          const last = typeof s.lastRun === 'number' ? new Date(s.lastRun).toISOString() : 'never';
          process.stdout.write(`${s.objectId}\t${s.jobName}\t${when}\t${last}\n`);
        }
      }),
    );

  app
    .command('unschedule <appId> <scheduleId>')
    .description('remove a job schedule; the job runs no more on it')
    .action(
      helpers.run(async (appId: string, scheduleId: string) => {
        await masterCall(helpers, appId, 'DELETE', `/cloud_code/jobs/${encodeURIComponent(scheduleId)}`);
        process.stdout.write(`unscheduled\t${scheduleId}\n`);
      }),
    );
}
