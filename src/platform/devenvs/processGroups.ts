import type Docker from 'dockerode';
import { unavailable } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { EnvironmentContainers } from './containers.js';
import { ENGINE_TIMEOUTS, type DockerClient } from './engine.js';
import { groupScript, runScript, type LiveExecution } from './executions.js';

/** Ending a command: SIGTERM, then SIGKILL after `graceMs`; then up to `afterKillMs` for it to be reported exited (milliseconds). */
export const SIGNAL_TIMING = {
  graceMs: 5_000,
  afterKillMs: 10_000,
} as const;

/** Appended to the stderr of an execution ended by restarting its environment. */
const RESTARTED_NOTE =
  '[backyard: no signal could reach this command (no process could be started in the environment to send it), so the environment was restarted to end it: every process in it ended, /workspace was kept.]\n';

/** A command execution this process follows, with where it runs. */
export interface FollowedExecution {
  execution: LiveExecution;
  environmentId: string;
  accountId: string;
}

/**
 * Signals to a command execution's process group inside its development environment (each command
 * runs as a group of its own, executions.ts's `groupScript`): how `interactWithCommandExecution`'s
 * exit, a stopping Backyard and an orphan's reaping end a command.
 */
export class ProcessGroups {
  constructor(
    private readonly docker: DockerClient,
    private readonly dockerHost: string | undefined,
    private readonly containers: EnvironmentContainers,
    private readonly log: Logger,
  ) {}

  /**
   * Ends a running execution that this process follows: SIGTERM to its process group, SIGKILL after
   * the grace period; when no signal can be delivered or the command outlives SIGKILL, the container
   * is restarted as a last resort (the volume and the environment stay).
   * @throws ManagementError(unavailable) when even that does not end it.
   */
  async end({ execution, environmentId, accountId }: FollowedExecution): Promise<void> {
    try {
      const container = await this.containers.running(accountId, environmentId);
      if (await this.group(container, execution.id, 'TERM')) {
        if (await execution.waitForExit(SIGNAL_TIMING.graceMs)) return;
        await this.group(container, execution.id, 'KILL');
        if (await execution.waitForExit(SIGNAL_TIMING.afterKillMs)) return;
      } else if (await execution.waitForExit(2_000)) {
        return; // it had just exited
      }
      this.log.warn({ executionId: execution.id }, 'a command could not be ended by signals; restarting its environment');
    } catch (error) {
      this.log.warn({ err: error, executionId: execution.id }, 'could not signal a command; restarting its environment');
    }
    execution.note(RESTARTED_NOTE);
    await this.containers.restart(accountId, environmentId);
    if (!(await execution.waitForExit(SIGNAL_TIMING.afterKillMs))) {
      throw unavailable(`The command execution "${execution.id}" could not be ended. Check the Docker engine (docker info) and try again.`);
    }
  }

  /**
   * Ends an execution's process group that no exec stream is followed for (Backyard stopping, or an
   * orphan of a Backyard that died): SIGTERM, then SIGKILL if any of it is left after the grace period.
   */
  async terminate(container: Docker.Container, executionId: string): Promise<void> {
    if (!(await this.group(container, executionId, 'TERM'))) return;
    const deadline = Date.now() + SIGNAL_TIMING.graceMs;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250).unref());
      if (!(await this.group(container, executionId, 'alive'))) return;
    }
    await this.group(container, executionId, 'KILL');
  }

  /**
   * Runs `groupScript` in the container: true when the execution's process group exists.
   * @throws Error when the runtime could not start the script (no process slot for it), so that the
   *   caller falls back to a restart; ManagementError(unavailable) when the engine fails.
   */
  private async group(container: Docker.Container, executionId: string, action: 'TERM' | 'KILL' | 'alive'): Promise<boolean> {
    const outcome = await runScript(this.docker, this.dockerHost, container, groupScript(executionId, action), ENGINE_TIMEOUTS.request);
    if ('notStarted' in outcome) throw new Error(`the runtime could not start the signal: ${outcome.notStarted}`);
    return outcome.exitCode === 0;
  }
}
