import type Docker from 'dockerode';
import { eachEventLine } from './eventLines.js';
import type { Readable } from 'node:stream';
import type { Logger } from '../../log.js';
import { healthy, probeAt } from './health.js';
import { KIND_WEBAPP, LABEL_KIND, LABEL_TASK_DEPLOYMENT } from './labels.js';
import type { SwarmServices, TaskTarget } from './swarm.js';

/** How long a Web App's list of tasks is used before it is read from the engine again (in the background), in milliseconds. */
const REFRESH_MS = 1_000;
/** How long one health probe of a new task may take, in milliseconds. */
const PROBE_MS = 1_000;
/** Wait before following the engine's events again after the stream ended, in milliseconds. */
const RETRY_MS = 2_000;

/** What the proxy needs to know of a Web App that runs as a service. */
export interface ServiceRoute {
  /** The Web App's id. */
  id: string;
  /** The port its app listens on inside its containers. */
  port: number;
  /** The path of its health check (a task gets traffic once it answered there with 2xx or 3xx). */
  healthPath: string;
}

interface AppTargets {
  targets: TaskTarget[];
  at: number;
  next: number;
  refreshing: Promise<void> | undefined;
}

/** The key of a task's address, `ip:port`. */
export const targetKey = (target: Pick<TaskTarget, 'ip' | 'port'>) => `${target.ip}:${target.port}`;

/**
 * The proxy's view of the running tasks of Web Apps that run as swarm services (swarm.ts): round
 * robin over the tasks that answered Backyard's health check, skipping a task that failed a
 * request until a new probe passes.
 *
 * A task's list comes from the engine at most every second, in the background while the last list
 * serves requests; a task the engine newly lists is probed (GET the health check path) before it gets
 * traffic. The engine's container events are followed so that a task container being stopped or
 * killed leaves the list at once (`kill` comes before the container stops answering, also for the
 * SIGTERM of a rolling update), and the proxy's connections to it are closed (`onGone`).
 */
export class TaskTargets {
  private readonly apps = new Map<string, AppTargets>();
  /** Addresses (`targetKey`) that passed a probe, by the container they belong to. */
  private readonly passed = new Map<string, string>();
  /** Addresses that failed a request or a probe: no traffic until a probe passes. */
  private readonly failed = new Set<string>();
  /** Containers stopping or gone: their addresses never come back. */
  private readonly gone = new Set<string>();
  private stream: NodeJS.ReadableStream | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** True while the event stream is being opened. */
  private opening = false;
  private closed = false;

  constructor(
    private readonly docker: Docker,
    private readonly swarm: SwarmServices,
    private readonly log: Logger,
    /** Called with an address whose container stopped or failed, so the proxy drops its connections there. */
    private readonly onGone: (key: string) => void = () => undefined,
  ) {}

  /**
   * The next task of the Web App to send a request to, round robin over those that passed their
   * health check, leaving out the addresses in `exclude` (tried already for this request);
   * undefined when there is none.
   */
  async pick(route: ServiceRoute, exclude: ReadonlySet<string> = new Set()): Promise<TaskTarget | undefined> {
    this.follow();
    let entry = this.apps.get(route.id);
    if (!entry) {
      entry = { targets: [], at: 0, next: 0, refreshing: undefined };
      this.apps.set(route.id, entry);
    }
    if (Date.now() - entry.at > REFRESH_MS) {
      const refreshing = this.refresh(route, entry);
      // A first look (or a list with nothing usable) is waited for; a stale list serves meanwhile otherwise.
      if (this.usable(entry, exclude).length === 0) await refreshing;
    }
    const usable = this.usable(entry, exclude);
    if (usable.length === 0) return undefined;
    entry.next = (entry.next + 1) % usable.length;
    return usable[entry.next];
  }

  /** A request to `target` failed (refused, reset, unreachable): it gets no traffic until a probe passes again. */
  fail(webAppId: string, target: TaskTarget, error: unknown): void {
    const key = targetKey(target);
    this.failed.add(key);
    this.passed.delete(key);
    this.onGone(key);
    const entry = this.apps.get(webAppId);
    if (entry) entry.at = 0;
    this.log.warn({ webAppId, taskId: target.taskId, code: (error as { code?: string }).code }, 'web app task did not answer; skipped');
  }

  /** Forgets a Web App's tasks (stopped or deleted). */
  forget(webAppId: string): void {
    this.apps.delete(webAppId);
  }

  /** Stops following the engine. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.stream?.removeAllListeners();
    (this.stream as { destroy?: () => void } | undefined)?.destroy?.();
    this.stream = undefined;
    this.apps.clear();
  }

  private usable(entry: AppTargets, exclude: ReadonlySet<string>): TaskTarget[] {
    return entry.targets.filter((t) => !exclude.has(targetKey(t)) && !this.failed.has(targetKey(t)) && !this.gone.has(t.containerId));
  }

  /** Reads the app's running tasks from the engine and probes those not seen healthy yet; one read at a time per app. */
  private refresh(route: ServiceRoute, entry: AppTargets): Promise<void> {
    entry.refreshing ??= (async () => {
      try {
        const listed = (await this.swarm.targets(route.id, route.port)).filter((t) => !this.gone.has(t.containerId));
        const checked = await Promise.all(
          listed.map(async (t) => {
            const key = targetKey(t);
            if (this.passed.get(key) === t.containerId) return t;
            const ok = healthy(await probeAt(t.ip, t.port, route.healthPath, PROBE_MS));
            if (!ok) return undefined;
            this.passed.set(key, t.containerId);
            this.failed.delete(key);
            return t;
          }),
        );
        entry.targets = checked.filter((t): t is TaskTarget => t !== undefined);
        entry.at = Date.now();
      } catch (error) {
        this.log.debug({ webAppId: route.id, message: (error as Error).message }, 'could not list the tasks of a web app service');
        entry.at = Date.now();
      } finally {
        entry.refreshing = undefined;
      }
    })();
    return entry.refreshing;
  }

  /** Follows the engine's `kill`, `die` and `destroy` events of task containers (once; again after the stream ends). */
  private follow(): void {
    if (this.stream || this.retry || this.opening || this.closed) return;
    this.opening = true;
    void (async () => {
      try {
        const stream = await this.docker.getEvents({
          filters: { type: ['container'], event: ['kill', 'die', 'stop', 'destroy'], label: [`${LABEL_KIND}=${KIND_WEBAPP}`, LABEL_TASK_DEPLOYMENT] },
        });
        this.opening = false;
        if (this.closed) return (stream as { destroy?: () => void }).destroy?.();
        this.stream = stream;
        eachEventLine(stream as unknown as Readable, (line) => this.onEvent(line));
        const ended = () => {
          if (this.stream !== stream) return;
          this.stream = undefined;
          if (!this.closed) this.retry = setTimeout(() => (this.retry = undefined), RETRY_MS).unref();
        };
        stream.once('end', ended);
        stream.once('close', ended);
        stream.once('error', ended);
      } catch {
        this.opening = false;
        if (!this.closed) this.retry = setTimeout(() => (this.retry = undefined), RETRY_MS).unref();
      }
    })();
  }

  private onEvent(line: string): void {
    let event: { id?: string; Actor?: { ID?: string } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return;
    }
    const containerId = event.Actor?.ID ?? event.id;
    if (!containerId) return;
    if (this.gone.size > 10_000) this.gone.clear();
    this.gone.add(containerId);
    for (const [key, owner] of this.passed) {
      if (owner !== containerId) continue;
      this.passed.delete(key);
      this.onGone(key);
    }
  }
}
