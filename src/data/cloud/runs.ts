/**
 * The recent runs of each app's cloud code, with the console output each run produced:
 * what the dashboard shows under "Functions and jobs". Kept in memory only, so a restart of
 * Backyard forgets them; `_JobStatus` remains the durable record of jobs.
 */

/** How much is kept. Small enough that an app logging in a loop cannot hold much memory. */
export const RUN_LIMITS = {
  /** Function and trigger runs kept per app (the oldest is dropped first). */
  runs: 100,
  /** Job runs kept per app, apart from the others so that busy functions do not push them out. */
  jobRuns: 20,
  /** Log lines kept per run: the first ones; later ones are only counted. */
  linesPerRun: 100,
  /** Characters kept per log line; a longer line is cut and ends with `…`. */
  charsPerLine: 1000,
  /** Characters kept of a failed run's error text. */
  errorChars: 2000,
} as const;

/** The console methods whose output is attributed to a run, plus `request.log`'s levels. */
export const LOG_LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;
export type CloudLogLevel = (typeof LOG_LEVELS)[number];

/** One line a run wrote with `console.*` or `request.log.*`. */
export interface CloudRunLine {
  level: CloudLogLevel;
  /** As `console.log` would print it (util.format), at most `RUN_LIMITS.charsPerLine` characters. */
  message: string;
  /** When it was written: ISO 8601, UTC, milliseconds. */
  time: string;
}

/** What ran: a cloud function, a trigger (with its class) or a job (with its `_JobStatus` id). */
export type CloudRunKind = 'function' | 'trigger' | 'job';

/** `running` until the call answers; `timed out` when it outran its limit and its worker was stopped. */
export type CloudRunStatus = 'running' | 'succeeded' | 'failed' | 'timed out';

/** One call into an app's cloud code, as the dashboard shows it. */
export interface CloudRun {
  kind: CloudRunKind;
  /** The function's or job's name, or the trigger's (`beforeSave`, ...). */
  name: string;
  /** For a trigger: the class it ran for (`_User` for login triggers). */
  className?: string;
  /** For a job: the objectId of its `_JobStatus` object. */
  jobId?: string;
  /** When the call was sent to the worker: ISO 8601, UTC. */
  startedAt: string;
  /** Milliseconds from start to answer; null while running. */
  durationMs: number | null;
  status: CloudRunStatus;
  /** Why it failed or timed out (the message the caller got); absent otherwise. */
  error?: string;
  /** Its output, oldest first, at most `RUN_LIMITS.linesPerRun` lines. */
  lines: CloudRunLine[];
  /** How many more lines it wrote than were kept. */
  omittedLines: number;
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A run being recorded: the worker side adds its lines and its end. */
export class RunRecord {
  private readonly started = Date.now();
  /** For the duration: a monotonic clock, which no change of the system's time moves. */
  private readonly startedMonotonic = performance.now();
  readonly run: CloudRun;

  /** @param seq orders runs that started in the same millisecond. */
  constructor(readonly seq: number, kind: CloudRunKind, name: string, request: Record<string, unknown>) {
    this.run = { kind, name, startedAt: new Date(this.started).toISOString(), durationMs: null, status: 'running', lines: [], omittedLines: 0 };
    if (kind === 'trigger' && typeof request.className === 'string') this.run.className = request.className;
    if (kind === 'job' && typeof request.jobId === 'string') this.run.jobId = request.jobId;
  }

  /**
   * Adds a line the run wrote. The worker runs the app's code, so nothing it sends is trusted: the
   * level falls back to `log`, the text is cut, a malformed time is replaced by now.
   */
  line(level: unknown, message: unknown, time: unknown): void {
    if (this.run.lines.length >= RUN_LIMITS.linesPerRun) {
      this.run.omittedLines++;
      return;
    }
    this.run.lines.push({
      level: LOG_LEVELS.includes(level as CloudLogLevel) ? (level as CloudLogLevel) : 'log',
      message: cut(String(message), RUN_LIMITS.charsPerLine),
      time: typeof time === 'string' && ISO.test(time) ? time : new Date().toISOString(),
    });
  }

  /** Adds lines the worker counted but did not send (it stops sending at the same limit). */
  omitted(count: unknown): void {
    if (typeof count === 'number' && Number.isSafeInteger(count) && count > 0) this.run.omittedLines += count;
  }

  /** Records the answer; a second call (e.g. a crash after a time-out) changes nothing. */
  finish(status: Exclude<CloudRunStatus, 'running'>, error?: string): void {
    if (this.run.status !== 'running') return;
    this.run.status = status;
    this.run.durationMs = Math.round(performance.now() - this.startedMonotonic);
    if (error !== undefined) this.run.error = cut(error, RUN_LIMITS.errorChars);
  }
}

/** Each app's recent runs: two bounded lists (jobs, everything else), oldest dropped first. */
export class RunHistory {
  private readonly apps = new Map<string, { runs: RunRecord[]; jobs: RunRecord[] }>();
  private seq = 0;

  /** Starts recording a call; the record is kept until newer runs push it out. */
  begin(appId: string, kind: CloudRunKind, name: string, request: Record<string, unknown>): RunRecord {
    let lists = this.apps.get(appId);
    if (!lists) this.apps.set(appId, (lists = { runs: [], jobs: [] }));
    const record = new RunRecord(++this.seq, kind, name, request);
    const list = kind === 'job' ? lists.jobs : lists.runs;
    list.push(record);
    const limit = kind === 'job' ? RUN_LIMITS.jobRuns : RUN_LIMITS.runs;
    if (list.length > limit) list.splice(0, list.length - limit);
    return record;
  }

  /** The app's kept runs of every kind, newest first, as copies. */
  recent(appId: string): CloudRun[] {
    const lists = this.apps.get(appId);
    if (!lists) return [];
    return [...lists.runs, ...lists.jobs].sort((a, b) => b.seq - a.seq).map((r) => structuredClone(r.run));
  }
}
