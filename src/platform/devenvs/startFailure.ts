/**
 * The text an assistant reads when the container runtime could not start a command: a
 * `docker exec` whose process never ran is not a command that exited 126.
 */

/**
 * How many free task slots starting a command needs, at most. The runtime's own init (a Go program)
 * joins the container's pids cgroup with several threads before the command's shell exists, and the
 * pids limit counts threads: with runc 1.1 an exec failed with 5 free slots and started with 6.
 */
export const START_HEADROOM_TASKS = 8;

export interface StartFailure {
  /** What the runtime said, e.g. `OCI runtime exec failed: … read init-p: connection reset by peer: unknown`. */
  runtimeMessage: string;
  /** Tasks (processes and threads) in the container's pids cgroup now; undefined when it could not be read. */
  tasks: number | undefined;
  /** The environment's process limit (BACKYARD_DEVENV_PIDS). */
  limit: number;
  /** Ids of the environment's other executions still running. */
  running: readonly string[];
}

/**
 * One paragraph: that the command did not start, why (the process slots when the table is full,
 * else the runtime's words) and how to make room.
 */
export function startFailureText({ runtimeMessage, tasks, limit, running }: StartFailure): string {
  const said = `The container runtime said: ${runtimeMessage}`;
  if (tasks === undefined || tasks + START_HEADROOM_TASKS <= limit) {
    return `The command could not start, so it never ran. ${said}. Run it again; if it keeps failing, check the Docker engine (docker info).`;
  }
  const free =
    running.length > 0
      ? `End one of the commands still running in it with interactWithCommandExecution and exit: true (running now: ${running.join(', ')}); ` +
        'when no signal can reach a command, Backyard restarts the environment to end it, which ends every process in it and keeps /workspace. ' +
        'Or call restartDevelopmentEnvironment to end every process in it at once (/workspace stays).'
      : 'No command Backyard follows is running there: processes that earlier commands left in the background hold the slots. ' +
        'Call restartDevelopmentEnvironment to free them: it ends every process in the environment and keeps /workspace.';
  return (
    `The command could not start, so it never ran: the development environment has no process slots left ` +
    `(${tasks} of ${limit} in use; threads count, and starting a command needs about ${START_HEADROOM_TASKS} free). ${free} ` +
    `Then run the command again, and avoid leaving many processes in the background. ${said}.`
  );
}
