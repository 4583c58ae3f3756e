import type { Logger } from '../../log.js';
import { nowIso } from '../../shared/sqlite.js';
import type { EnvironmentContainers } from './containers.js';
import type { LiveExecution } from './executions.js';
import { HEARTBEAT_MS, newOwner, ownerGone } from './owners.js';
import type { ProcessGroups } from './processGroups.js';
import type { DevEnvStore, ExecutionRow } from './store.js';

/** How often running executions' output is written to platform.db while they run, in milliseconds. */
const FLUSH_MS = 250;

/** exitCode of an execution whose real exit code was lost to a restart of Backyard. */
export const UNKNOWN_EXIT_CODE = -1;

/** Appended to the stderr of an execution whose Backyard stopped or died while it ran. */
const INTERRUPTED_NOTE =
  '[backyard: Backyard stopped or restarted while this command was running, so the command was ended; its later output and its exit code are unknown (-1). Run it again if it is still needed.]\n';

/** An execution this process follows: the exec, where it runs, and its recording (resolved once its end is written). */
export interface FollowedExecution {
  execution: LiveExecution;
  environmentId: string;
  accountId: string;
  recorded: Promise<void>;
}

/**
 * The command executions this Backyard process runs, and their rows in platform.db: output written
 * while they run (every FLUSH_MS), their end recorded, a heartbeat under this process's owner id
 * while any runs (owners.ts), and rows of executions whose owner is gone (this process's earlier
 * self, a process that died) marked exited with a note, with what is left of them ended. Split from
 * DevEnvService (service.ts), which starts the executions and answers the operations.
 */
export class FollowedExecutions {
  /** Identifies this process as the owner of the executions it runs: `<host>/<pid>/<random>`. */
  readonly owner = newOwner();
  private readonly live = new Map<string, FollowedExecution>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: DevEnvStore,
    private readonly containers: EnvironmentContainers,
    private readonly groups: ProcessGroups,
    private readonly log: Logger,
  ) {}

  /** Follows a started execution (its row already inserted): its output and end go to its row. @returns its recording. */
  follow(execution: LiveExecution, environmentId: string, accountId: string): FollowedExecution {
    const entry = { execution, environmentId, accountId, recorded: this.track(execution) };
    this.live.set(execution.id, entry);
    return entry;
  }

  /** The execution, when this process runs it. */
  get(executionId: string): FollowedExecution | undefined {
    return this.live.get(executionId);
  }

  /** The executions this process runs in an environment. */
  in(environmentId: string): FollowedExecution[] {
    return [...this.live.values()].filter((e) => e.environmentId === environmentId);
  }

  /** Waits (a bounded time, `afterKillMs`) until executions whose container went away have ended and are recorded. */
  async settle(entries: ReadonlyArray<FollowedExecution>, afterKillMs: number): Promise<void> {
    await Promise.all(
      entries.map(async ({ execution, recorded }) => {
        if (await execution.waitForExit(afterKillMs)) await recorded;
      }),
    );
  }

  /**
   * A row marked running whose owner is gone (this process's earlier self, a process that died, or one
   * silent for too long) is marked exited with a note; the current row is returned.
   */
  async reconcile(row: ExecutionRow): Promise<ExecutionRow> {
    if (row.status !== 'running' || this.live.has(row.id) || !ownerGone(row.owner, row.heartbeat_at, this.owner)) return row;
    if (await this.store.writeInterrupted(row.id, UNKNOWN_EXIT_CODE, INTERRUPTED_NOTE, nowIso())) {
      this.log.info({ executionId: row.id, owner: row.owner }, 'command execution interrupted by a restart marked exited');
      void this.reapOrphan(row).catch((error: unknown) => this.log.debug({ err: error, executionId: row.id }, 'could not end an orphaned command'));
    }
    return (await this.store.execution(row.environment_id, row.id)) ?? row;
  }

  /**
   * Stops following executions. Each one still running keeps its output so far and is ended inside the
   * container (SIGTERM, then SIGKILL) without waiting; its row stays `running` until the next reader or
   * the next Backyard on this home sees that its owner is gone (`reconcile`). Call once, before the
   * database closes.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeatTimer);
    for (const [id, { execution, environmentId, accountId }] of this.live) {
      execution.detach();
      const s = execution.snapshot();
      if (execution.status === 'running') {
        await this.store.writeOutput(id, s.stdout, s.stderr, nowIso());
        void this.containers
          .running(accountId, environmentId)
          .then((container) => this.groups.terminate(container, id))
          .catch(() => undefined);
      } else {
        await this.store.writeExited(id, outcomeOf(execution), s.stdout, s.stderr, nowIso());
      }
    }
    this.live.clear();
  }

  /** Streams the execution's output into platform.db while it runs; resolves once its final state is written. */
  private track(execution: LiveExecution): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      if (this.closed || execution.status !== 'running') return;
      this.store
        .writeOutput(execution.id, execution.stdout.render(), execution.stderr.render(), nowIso())
        .catch((error: unknown) => this.log.error({ err: error, executionId: execution.id }, 'could not store the output of a command execution'));
    };
    execution.on('output', () => {
      timer ??= setTimeout(flush, FLUSH_MS);
    });
    this.heartbeatTimer ??= setInterval(() => void this.heartbeat().catch((error: unknown) => this.log.warn({ err: error }, 'command execution heartbeat failed')), HEARTBEAT_MS).unref();
    return execution.finished
      .then(async () => {
        clearTimeout(timer);
        if (this.closed) return;
        const s = execution.snapshot();
        await this.store.writeExited(execution.id, outcomeOf(execution), s.stdout, s.stderr, nowIso());
      })
      .catch((error: unknown) => this.log.error({ err: error, executionId: execution.id }, 'could not record the end of a command execution'))
      .finally(() => this.live.delete(execution.id));
  }

  private async heartbeat(): Promise<void> {
    if (this.closed) return;
    if (this.live.size === 0) {
      clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
      return;
    }
    await this.store.heartbeat(this.owner, nowIso());
  }

  /**
   * Ends what is left of a command whose Backyard died while it ran, unless its container started
   * since (then its processes are gone already, and its recorded process group id may have been reused).
   */
  private async reapOrphan(row: ExecutionRow): Promise<void> {
    const env = await this.store.environmentById(row.environment_id);
    if (!env) return;
    const running = await this.containers.ifRunning(env.account_id, env.id);
    if (!running || running.startedAt >= Date.parse(row.created_at)) return;
    await this.groups.terminate(running.container, row.id);
  }
}

/** What `writeExited` records of a finished execution. */
const outcomeOf = (execution: LiveExecution) =>
  execution.startError !== undefined
    ? { exitCode: null, startError: execution.startError }
    : { exitCode: execution.exitCode ?? UNKNOWN_EXIT_CODE };
