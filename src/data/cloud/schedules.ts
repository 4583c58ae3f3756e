import { ParseCode, ParseError } from '../errors.js';
import { isPlainObject } from '../values.js';

/**
 * Job schedules: Parse's `_JobSchedule` objects, as Parse Dashboard
 * and Back4App write them, and when each is due. Fields:
 * - `jobName`: a job the app's cloud code defines; `description`; `params`: a JSON object as text;
 * - `startAfter`: ISO 8601, the first moment it may run (default: when it is saved);
 * - `repeatMinutes`: run every so many minutes (fractions allowed, at least one second);
 * - else `timeOfDay` (`HH:MM` or `HH:MM:SS`, UTC, `.000Z` allowed) with `daysOfWeek` (7 booleans from
 *   Sunday, or day numbers 0 to 6; default every day): run daily at that time;
 * - else: run once, at `startAfter`;
 * - `lastRun`: when it last started (milliseconds since 1970), kept by Backyard.
 */

export interface JobSchedule {
  objectId: string;
  jobName: string;
  params: string;
  startAfter: string;
  repeatMinutes?: number;
  timeOfDay?: string;
  daysOfWeek?: unknown[];
  lastRun?: number;
}

const DAY_MS = 86_400_000;
const invalid = (field: string, what: string) => new ParseError(ParseCode.VALIDATION_ERROR, `job_schedule.${field} ${what}`);
const TIME_OF_DAY = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?Z?$/;

/**
 * Checks a `job_schedule` of `POST /cloud_code/jobs` or `PUT /cloud_code/jobs/<id>` and gives the
 * fields to store (`startAfter` filled in as Parse Server does).
 * @param jobs the jobs the app's cloud code defines.
 * @param creating a new schedule needs a jobName.
 * @throws ParseError 142 naming the field and what it must be.
 */
export function readJobSchedule(value: unknown, jobs: readonly string[], creating: boolean): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ParseError(ParseCode.VALIDATION_ERROR, 'job_schedule must be an object such as {"jobName": "cleanup", "repeatMinutes": 60}');
  const out: Record<string, unknown> = {};
  const { jobName, description, params, startAfter, repeatMinutes, timeOfDay, daysOfWeek, ...rest } = value;
  const unknown = Object.keys(rest).filter((k) => k !== 'lastRun');
  if (unknown.length) throw invalid(unknown[0]!, 'is not a field of a job schedule (jobName, description, params, startAfter, repeatMinutes, timeOfDay, daysOfWeek)');
  if (jobName !== undefined || creating) {
    if (typeof jobName !== 'string' || jobName === '') throw invalid('jobName', 'is required: the name of a job your cloud code defines with Parse.Cloud.job');
    if (!jobs.includes(jobName)) throw invalid('jobName', `names no deployed job: "${jobName}" (the cloud code defines ${jobs.length ? jobs.map((j) => `"${j}"`).join(', ') : 'no jobs'})`);
    out.jobName = jobName;
  }
  if (description !== undefined) {
    if (typeof description !== 'string') throw invalid('description', 'must be text');
    out.description = description;
  }
  if (params !== undefined) {
    const parsed = typeof params === 'string' ? safeJson(params) : params;
    if (!isPlainObject(parsed)) throw invalid('params', 'must be a JSON object (or its text), such as {"days": 30}');
    out.params = JSON.stringify(parsed);
  } else if (creating) out.params = '{}';
  if (startAfter !== undefined || creating) {
    const at = startAfter === undefined ? new Date().toISOString() : startAfter;
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) throw invalid('startAfter', 'must be an ISO 8601 date, such as 2026-01-31T09:00:00.000Z');
    out.startAfter = new Date(Date.parse(at)).toISOString();
  }
  if (repeatMinutes !== undefined && repeatMinutes !== null) {
    if (typeof repeatMinutes !== 'number' || !Number.isFinite(repeatMinutes) || repeatMinutes < 1 / 60) throw invalid('repeatMinutes', 'must be a number of minutes of at least 1/60 (one second)');
    out.repeatMinutes = repeatMinutes;
  }
  if (timeOfDay !== undefined && timeOfDay !== null) {
    if (typeof timeOfDay !== 'string' || !TIME_OF_DAY.test(timeOfDay)) throw invalid('timeOfDay', 'must be a UTC time such as 09:30 or 09:30:00');
    out.timeOfDay = timeOfDay;
  }
  if (daysOfWeek !== undefined && daysOfWeek !== null) {
    if (!Array.isArray(daysOfWeek) || !(daysOfWeek.every((d) => typeof d === 'boolean') && daysOfWeek.length === 7) && !daysOfWeek.every((d) => Number.isInteger(d) && (d as number) >= 0 && (d as number) <= 6)) {
      throw invalid('daysOfWeek', 'must be 7 true/false values from Sunday, or day numbers 0 (Sunday) to 6');
    }
    out.daysOfWeek = daysOfWeek;
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The days of the week a daily schedule runs on (0 Sunday), from either form of `daysOfWeek`. */
function runDays(daysOfWeek: unknown[] | undefined): Set<number> {
  if (!daysOfWeek || daysOfWeek.length === 0) return new Set([0, 1, 2, 3, 4, 5, 6]);
  if (daysOfWeek.every((d) => typeof d === 'boolean')) return new Set(daysOfWeek.flatMap((on, day) => (on ? [day] : [])));
  return new Set(daysOfWeek as number[]);
}

/**
 * When a schedule is next due, in milliseconds since 1970, or undefined when it never runs again
 * (a one-off that ran, a daily schedule on no day). A repeating schedule that fell behind (the server
 * was down) is due at once, and once: its next run counts from when that one started.
 */
export function nextRun(schedule: JobSchedule): number | undefined {
  const start = Date.parse(schedule.startAfter);
  const last = schedule.lastRun;
  if (schedule.repeatMinutes) {
    const interval = schedule.repeatMinutes * 60_000;
    return last === undefined ? start : Math.max(start, last + interval);
  }
  if (schedule.timeOfDay) {
    const [, hh, mm, ss] = TIME_OF_DAY.exec(schedule.timeOfDay)!;
    const offset = (Number(hh) * 3600 + Number(mm) * 60 + Number(ss ?? 0)) * 1000;
    const days = runDays(schedule.daysOfWeek);
    if (days.size === 0) return undefined;
    const after = Math.max(start, last === undefined ? -Infinity : last + 1);
    for (let day = Math.floor(after / DAY_MS) * DAY_MS, i = 0; i < 8; i++, day += DAY_MS) {
      const at = day + offset;
      if (at >= after && days.has(new Date(day).getUTCDay())) return at;
    }
    return undefined;
  }
  return last === undefined ? start : undefined;
}

/** A stored `_JobSchedule` row's fields as a JobSchedule, or undefined when it cannot run (no job name or start). */
export function scheduleOf(objectId: string, data: Record<string, unknown>): JobSchedule | undefined {
  if (typeof data.jobName !== 'string' || typeof data.startAfter !== 'string' || Number.isNaN(Date.parse(data.startAfter))) return undefined;
  return {
    objectId,
    jobName: data.jobName,
    params: typeof data.params === 'string' ? data.params : '{}',
    startAfter: data.startAfter,
    repeatMinutes: typeof data.repeatMinutes === 'number' && data.repeatMinutes > 0 ? data.repeatMinutes : undefined,
    timeOfDay: typeof data.timeOfDay === 'string' && TIME_OF_DAY.test(data.timeOfDay) ? data.timeOfDay : undefined,
    daysOfWeek: Array.isArray(data.daysOfWeek) ? data.daysOfWeek : undefined,
    lastRun: typeof data.lastRun === 'number' ? data.lastRun : undefined,
  };
}
