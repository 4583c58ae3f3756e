import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log.js';
import { checkingFace } from '../engine.js';
import type { DataStore } from '../store.js';
import { startJob } from './jobs.js';
import type { CloudRuntime } from './types.js';
import { nextRun, scheduleOf, type JobSchedule } from './schedules.js';

/** What the scheduler needs of the apps (DataApps has it): their master views. */
export interface ScheduledApps {
  store(appId: string): Promise<DataStore | undefined>;
}

/**
 * Which apps have job schedules, so that a starting server (or another node) knows which apps to
 * read without opening every app's database: marker files in the apps' folders on SQLite homes, the
 * platform store on PostgreSQL, which every node reads.
 */
export interface ScheduleMarks {
  /** The apps marked as having schedules. */
  list(): Promise<string[]>;
  /** Marks or unmarks an app. Never throws: a failed mark is found again at the app's next reload. */
  set(appId: string, has: boolean): Promise<void>;
}

/** Marks as files: `apps/<appId>/job-schedules` (homes on SQLite). */
export function scheduleMarkFiles(appsFolder: string): ScheduleMarks {
  const marker = (appId: string) => path.join(appsFolder, appId, MARKER);
  return {
    async list() {
      let names: string[] = [];
      try {
        names = await fs.readdir(appsFolder);
      } catch {
        // no apps yet
      }
      const marked = await Promise.all(names.map((n) => fs.access(marker(n)).then(() => n, () => undefined)));
      return marked.filter((n): n is string => n !== undefined);
    },
    async set(appId, has) {
      if (has) await fs.writeFile(marker(appId), '').catch(() => undefined);
      else await fs.rm(marker(appId), { force: true }).catch(() => undefined);
    },
  };
}

/** How often due schedules are looked for (the finest interval a schedule can have is a second). */
const TICK_MS = 1000;
/** How long an app's schedules are taken from memory before they are read again (another process may have changed them). */
const RELOAD_MS = 30_000;
/** The file in an app's folder that says it has schedules, so that a starting server knows which apps to read. */
const MARKER = 'job-schedules';

/**
 * Runs the apps' scheduled jobs (schedules.ts says when each is due).
 * A run is claimed before it starts: in one transaction of the app's database, the schedule is read
 * again and, if still due, its `lastRun` is set to now. So a restart never runs a schedule twice for
 * the same slot (a slot missed while the server was down runs once, at start), and of several
 * processes serving one PostgreSQL database only the one whose claim commits first runs it. Each
 * run is recorded in `_JobStatus` with `source: "schedule"`.
 */
export class JobScheduler {
  private readonly schedules = new Map<string, { list: JobSchedule[]; readAt: number }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly apps: ScheduledApps,
    /** Runs the jobs (with the apps' webhooks in front: `DataServices.cloud`). */
    private readonly cloud: CloudRuntime,
    private readonly marks: ScheduleMarks,
    private readonly log: Logger,
  ) {}

  /** Starts looking for due schedules: the apps whose folder says they have some, and any changed later. */
  async start(): Promise<void> {
    if (this.timer) return;
    await this.scan();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  private scannedAt = 0;

  /** Adds the apps whose folder says they have schedules (another process, the command line, may have added one). */
  private async scan(): Promise<void> {
    this.scannedAt = Date.now();
    for (const appId of await this.marks.list()) if (!this.schedules.has(appId)) this.schedules.set(appId, { list: [], readAt: 0 });
  }

  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  /** Stops looking for due schedules; resolves once a check under way is over (so nothing opens an app's database after). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running.catch(() => undefined);
  }

  /**
   * An app's schedules changed (created, edited, removed through this process): read them again now.
   * Never rejects: the change is committed, and a failed read is tried again at the next reload.
   */
  async changed(appId: string): Promise<void> {
    await this.reload(appId).catch((error: unknown) => {
      this.schedules.set(appId, { list: this.schedules.get(appId)?.list ?? [], readAt: 0 });
      this.log.warn({ err: error, app: appId }, 'job schedules could not be read again');
    });
  }

  private async reload(appId: string): Promise<JobSchedule[]> {
    const store = await this.apps.store(appId);
    const rows = store ? await store.rows('_JobSchedule', { where: {}, limit: 10_000 }) : [];
    const list = rows.map((r) => scheduleOf(r.objectId, r.data)).filter((s): s is JobSchedule => s !== undefined);
    if (list.length) this.schedules.set(appId, { list, readAt: Date.now() });
    else this.schedules.delete(appId);
    await this.marks.set(appId, list.length > 0);
    return list;
  }

  /** Starts every due schedule once; a tick still running when the next comes is not overlapped. */
  private tick(): Promise<void> {
    if (this.ticking || this.stopped) return this.running;
    this.ticking = true;
    this.running = this.check().finally(() => {
      this.ticking = false;
    });
    return this.running;
  }

  private async check(): Promise<void> {
    const now = Date.now();
    if (now - this.scannedAt > RELOAD_MS) await this.scan();
    for (const [appId, known] of [...this.schedules]) {
      if (this.stopped) return;
      try {
        const list = now - known.readAt > RELOAD_MS ? await this.reload(appId) : known.list;
        for (const schedule of list) {
          const due = nextRun(schedule);
          if (due !== undefined && due <= now && !this.stopped) await this.claimAndRun(appId, schedule.objectId);
        }
      } catch (error) {
        this.log.warn({ err: error, app: appId }, 'scheduled jobs could not be checked');
      }
    }
  }

  /** Claims a due schedule (its lastRun, in one transaction) and starts its job; nothing when another claim came first. */
  private async claimAndRun(appId: string, objectId: string): Promise<void> {
    const store = await this.apps.store(appId);
    if (!store) return;
    const claimed = await store.atomically(async (store) => {
      const row = await store.row('_JobSchedule', objectId);
      const schedule = row && scheduleOf(row.objectId, row.data);
      const now = Date.now();
      const due = schedule && nextRun(schedule);
      if (!row || !schedule || due === undefined || due > now) return undefined;
      await store.replaceRow('_JobSchedule', { ...row, updatedAt: new Date(now).toISOString(), data: { ...row.data, lastRun: now } });
      return { ...schedule, lastRun: now };
    });
    const known = this.schedules.get(appId);
    if (known) known.list = known.list.map((s) => (s.objectId === objectId && claimed ? claimed : s));
    if (!claimed) {
      await this.reload(appId);
      return;
    }
    let params: Record<string, unknown> = {};
    try {
      params = JSON.parse(claimed.params) as Record<string, unknown>;
    } catch {
      // checked when saved; an imported schedule with bad params runs with none
    }
    await startJob(checkingFace(store), this.cloud, claimed.jobName, params, this.log, 'schedule');
  }
}
