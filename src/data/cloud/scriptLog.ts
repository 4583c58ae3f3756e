import { ParseCode, ParseError } from '../errors.js';
import type { CloudRun, CloudRunLine } from './runs.js';

/**
 * Parse Server's cloud code log (`GET /scriptlog`, what Parse Dashboard's Logs page shows), read
 * from the runs Backyard keeps in memory (runs.ts): each line a run wrote with `console.*` or
 * `request.log.*`, and one error line per run that failed or timed out. The entry shape and the
 * query parameters are Parse Server's (src/Routers/LogsRouter.js, src/Controllers/LoggerController.js
 * and src/Adapters/Logger/WinstonLoggerAdapter.js).
 */

/** Winston's levels, which Parse Server's logger writes and `level` may name. */
const WINSTON_LEVELS = ['error', 'warn', 'info', 'verbose', 'debug', 'silly'] as const;

/** One log entry as Parse Server answers it. */
export interface ScriptLogEntry {
  /** Winston's level: `console.log` and `console.info` are `info`. */
  level: 'error' | 'warn' | 'info' | 'debug';
  message: string;
  /** ISO 8601, UTC, milliseconds. */
  timestamp: string;
  /** The cloud function that wrote it (as Parse Server's function logs carry it). */
  functionName?: string;
  /** For a trigger: which one (`beforeSave`, ...) and its class. */
  triggerType?: string;
  className?: string;
  /** For a job. */
  jobName?: string;
}

/** What `GET /scriptlog` asks for, checked. */
export interface ScriptLogQuery {
  /** `error`: only errors (Parse's error log file); `info`: every entry at info or above. */
  level: 'info' | 'error';
  /** Most entries answered. */
  size: number;
  order: 'asc' | 'desc';
  /** Bounds on the entries' timestamps, both included. */
  from: Date;
  until: Date;
}

const DAY_MS = 24 * 3600 * 1000;

function dateParam(name: string, value: unknown, fallback: Date): Date {
  if (value === undefined || value === '') return fallback;
  const date = typeof value === 'string' || typeof value === 'number' ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new ParseError(ParseCode.INVALID_QUERY, `${name} must be a date such as 2024-05-01T12:00:00Z, got ${JSON.stringify(value)}.`);
  return date;
}

/**
 * Reads `GET /scriptlog`'s parameters as Parse Server's LoggerController does: `level` (`error`, or
 * any other Winston level for everything at info and above; default `info`), `n` or `size` (`n`
 * wins; default 10), `order` (`asc` or `desc`, default `desc`: newest first), `from` (default a week
 * before `now`) and `until` (default `now`). Parse Server falls back to the default for a value it
 * cannot read; Backyard says which parameter was wrong (docs/parse-differences.md).
 * @throws ParseError 102 naming the parameter and what was wrong.
 */
export function readScriptLogQuery(query: Record<string, unknown>, now = new Date()): ScriptLogQuery {
  const level = query.level ?? 'info';
  if (!(WINSTON_LEVELS as readonly unknown[]).includes(level)) throw new ParseError(ParseCode.INVALID_QUERY, `level must be one of ${WINSTON_LEVELS.join(', ')}; got ${JSON.stringify(level)}.`);
  const sizeName = query.n !== undefined && query.n !== '' ? 'n' : 'size';
  const rawSize = query[sizeName];
  let size = 10;
  if (rawSize !== undefined && rawSize !== '') {
    size = Number(rawSize);
    if (!Number.isSafeInteger(size) || size < 1) throw new ParseError(ParseCode.INVALID_QUERY, `${sizeName} must be a whole number of entries, at least 1; got ${JSON.stringify(rawSize)}.`);
  }
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new ParseError(ParseCode.INVALID_QUERY, `order must be "asc" (oldest first) or "desc" (newest first); got ${JSON.stringify(order)}.`);
  return {
    level: level === 'error' ? 'error' : 'info',
    size,
    order,
    from: dateParam('from', query.from, new Date(now.getTime() - 7 * DAY_MS)),
    until: dateParam('until', query.until, now),
  };
}

const LEVEL_OF: Record<CloudRunLine['level'], ScriptLogEntry['level']> = { log: 'info', info: 'info', warn: 'warn', error: 'error', debug: 'debug' };

/** Who wrote an entry, in the keys Parse Server's cloud code log entries carry. */
function origin(run: CloudRun): Pick<ScriptLogEntry, 'functionName' | 'triggerType' | 'className' | 'jobName'> {
  if (run.kind === 'function') return { functionName: run.name };
  if (run.kind === 'job') return { jobName: run.name };
  return { triggerType: run.name, ...(run.className === undefined ? {} : { className: run.className }) };
}

/** The error entry of a run that failed or timed out, stamped when it ended. */
function failureEntry(run: CloudRun): ScriptLogEntry | undefined {
  if (run.status !== 'failed' && run.status !== 'timed out') return undefined;
  const what = run.kind === 'function' ? `cloud function ${run.name}` : run.kind === 'job' ? `job ${run.name}` : `${run.name} trigger for ${run.className ?? 'a class'}`;
  const ended = new Date(Date.parse(run.startedAt) + (run.durationMs ?? 0)).toISOString();
  const why = run.status === 'timed out' ? 'it ran out of time' : 'it threw';
  return { level: 'error', message: `Failed running ${what} (${why}): ${run.error ?? ''}`, timestamp: ended, ...origin(run) };
}

/**
 * The entries of `runs` (newest run first, as `CloudRuntime.recentRuns` gives them) that `query`
 * asks for: at `level` (debug lines are never in the info log, as Parse Server's info log file holds
 * info and above), within `from`..`until`, sorted by time in `order`, at most `size`.
 */
export function scriptLog(runs: readonly CloudRun[], query: ScriptLogQuery): ScriptLogEntry[] {
  const from = query.from.getTime();
  const until = query.until.getTime();
  const keyed: Array<{ entry: ScriptLogEntry; time: number; seq: number }> = [];
  let seq = 0;
  // Oldest run first, so that `seq` orders entries of the same millisecond as they were written.
  for (const run of [...runs].reverse()) {
    const entries: ScriptLogEntry[] = run.lines.map((line) => ({ level: LEVEL_OF[line.level], message: line.message, timestamp: line.time, ...origin(run) }));
    const failure = failureEntry(run);
    if (failure) entries.push(failure);
    for (const entry of entries) {
      const time = Date.parse(entry.timestamp);
      const wanted = query.level === 'error' ? entry.level === 'error' : entry.level !== 'debug';
      if (wanted && time >= from && time <= until) keyed.push({ entry, time, seq: seq++ });
    }
  }
  keyed.sort((a, b) => a.time - b.time || a.seq - b.seq);
  if (query.order === 'desc') keyed.reverse();
  return keyed.slice(0, query.size).map((k) => k.entry);
}
