import { EventEmitter } from 'node:events';
import { PassThrough, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { ENGINE_TIMEOUTS, engineCall, type DockerClient } from './engine.js';
import { TailBuffer } from './output.js';
import type { CommandExecution } from './store.js';

/**
 * One command running in a development environment container through the Engine API's exec:
 * `sh -c <command>` with stdin attached, stdout and stderr demultiplexed into tails of 1 MiB, the exit
 * code read from `exec.inspect()` once the output has ended (style.md, example 12, after
 * testcontainers-node's exec handling).
 *
 * The command runs under a small wrapper shell: the exec's process is a session and process group
 * leader (runc starts it with setsid), so its pid is the group id of everything the command starts;
 * the wrapper writes it to `PID_DIR/<id>.pid` so that `groupScript` can signal the whole group from a
 * second exec, without relying on the engine sharing Backyard's host.
 */

/** Where the wrapper records each execution's process group id, inside the container. */
export const PID_DIR = '/tmp/.backyard-exec';

/** The environment variable that carries the execution id into the command. */
export const EXECUTION_ENV = 'BACKYARD_EXECUTION_ID';

/**
 * The argv of the exec: records the shell's pid (= its process group id) in `PID_DIR`, removing the
 * files of executions whose process is gone, then replaces itself with `sh -c <command>`, so the exit
 * status and signals are the command's own. Only shell builtins run before the command in the usual case.
 */
export const wrappedCommand = (command: string): string[] => [
  'sh',
  '-c',
  [
    `d=${PID_DIR}`,
    '{ [ -d $d ] || mkdir -p $d',
    'for f in $d/*.pid; do [ -f "$f" ] || continue; read p < "$f"; kill -0 "$p" || rm -f "$f"; done',
    `echo $$ > $d/$${EXECUTION_ENV}.pid; } 2>/dev/null`,
    'exec sh -c "$1"',
  ].join('; '),
  'sh',
  command,
];

/**
 * A shell script for a second exec that acts on an execution's process group: sends it SIGTERM or
 * SIGKILL, or (`alive`) only tests whether any process of it is left. Exits 0 when the group exists
 * (and was signalled), 1 when it is gone. Shell builtins only, no fork: it still runs when a fork bomb
 * or a runaway command holds every process slot of the container (an exec joins the container's
 * cgroup without forking inside it, so the pids limit does not stop it).
 */
export const groupScript = (executionId: string, action: 'TERM' | 'KILL' | 'alive'): string =>
  [
    `read p < ${PID_DIR}/${executionId}.pid 2>/dev/null || exit 1`,
    '[ -n "$p" ] || exit 1',
    `kill -${action === 'alive' ? '0' : action} -"$p" 2>/dev/null || exit 1`,
    'exit 0',
  ].join('\n');

/**
 * A shell script for a second exec that tells whether an execution waits for input: exits 0 when a
 * process holding the execution's own standard input (the exec's stdin pipe, found through the
 * process group leader's fd 0) sleeps in a pipe read or in poll/select (`/proc/<pid>/wchan`); 1
 * otherwise. A heuristic: a program that polls other descriptors while holding stdin reads as waiting
 * too, and then only makes executeCommand answer `running` early. A process reading another pipe (the
 * right side of `a | b`) holds another pipe on fd 0, so a pipeline that computes is not taken as waiting.
 */
export const inputScript = (executionId: string): string =>
  [
    `read p < ${PID_DIR}/${executionId}.pid 2>/dev/null || exit 1`,
    's=$(readlink /proc/$p/fd/0 2>/dev/null)',
    'case "$s" in pipe:*) ;; *) exit 1 ;; esac',
    'for d in /proc/[0-9]*; do',
    '  [ "$(readlink $d/fd/0 2>/dev/null)" = "$s" ] || continue',
    // wchan has no newline: read fails at its end but still sets w.
    '  w=; read w < $d/wchan 2>/dev/null; [ -n "$w" ] || continue',
    // read(2) on the pipe, or poll/select as BusyBox's `read` does; not epoll (servers, npm's I/O).
    '  case "$w" in *pipe_read*|*pipe_wait*|poll_schedule_timeout*|do_select*|core_sys_select*) exit 0 ;; esac',
    'done',
    'exit 1',
  ].join('\n');

/** How long the exit code may take to show in `exec.inspect()` after the output ended. */
const EXIT_CODE_TIMEOUT_MS = 10_000;

export interface LiveExecutionEvents {
  output: [];
  exited: [];
}

/**
 * Turns the container runtime's message for an exec it could not start into the text an assistant
 * reads (why, and how to make room); called once, before the execution reads as exited.
 */
export type StartFailureExplainer = (runtimeMessage: string) => Promise<string>;

/**
 * How the exec ended, read from `exec.inspect()`: its exit code (-1 when it cannot be had), and
 * whether its process ever ran. The engine reports a process that the runtime could not start
 * (`OCI runtime exec failed …`) with exit code 126 and pid 0; a process that ran keeps its pid.
 */
interface ExecOutcome {
  exitCode: number;
  started: boolean;
}

/**
 * A running exec and what it has written so far. Emits `output` on every chunk and `exited` once,
 * when the exit code is known.
 */
export class LiveExecution extends EventEmitter<LiveExecutionEvents> {
  readonly stdout = new TailBuffer();
  readonly stderr = new TailBuffer();
  status: 'running' | 'exited' = 'running';
  exitCode: number | undefined;
  /**
   * Set when the runtime could not start the command at all (then `exitCode` stays undefined): the
   * runtime's message and what to do, from the `StartFailureExplainer`.
   */
  startError: string | undefined;
  /** `Date.now()` of the last output chunk, or of the start. */
  lastOutputAt = Date.now();
  /** Output chunks received so far, on both streams. */
  chunks = 0;
  /** Resolves once `status` is `exited`. */
  readonly finished: Promise<void>;
  private markFinished!: () => void;

  private constructor(
    readonly id: string,
    private readonly exec: Docker.Exec,
    private readonly stream: Duplex,
    private readonly explainStartFailure: StartFailureExplainer,
  ) {
    super();
    this.finished = new Promise((resolve) => (this.markFinished = resolve));
  }

  /**
   * Starts `sh -c <command>` in `container` as execution `id`, in `/workspace`. When the engine
   * accepts the exec but the runtime cannot start its process (every process slot taken, say), the
   * execution still starts here and then ends with `startError` from `explainStartFailure`.
   * @throws ManagementError(unavailable) when the engine is unreachable or refuses (e.g. the container
   *   is not running: `engineStatus` 409, or gone: 404; the caller may restart it and try again).
   */
  static async start(
    docker: DockerClient,
    dockerHost: string | undefined,
    container: Docker.Container,
    id: string,
    command: string,
    explainStartFailure: StartFailureExplainer,
  ): Promise<LiveExecution> {
    const exec = await engineCall(dockerHost, 'start the command', ENGINE_TIMEOUTS.request, (abortSignal) =>
      container.exec({
        Cmd: wrappedCommand(command),
        Env: [`${EXECUTION_ENV}=${id}`],
        WorkingDir: '/workspace',
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        abortSignal,
      }),
    );
    const stream = (await engineCall(dockerHost, 'start the command', ENGINE_TIMEOUTS.request, () =>
      exec.start({ hijack: true, stdin: true }),
    )) as Duplex;
    const live = new LiveExecution(id, exec, stream, explainStartFailure);
    live.follow(docker, dockerHost);
    return live;
  }

  private follow(docker: DockerClient, dockerHost: string | undefined): void {
    const sink = (tail: TailBuffer) => {
      const s = new PassThrough();
      s.on('data', (chunk: Buffer) => {
        tail.append(chunk);
        this.lastOutputAt = Date.now();
        this.chunks++;
        this.emit('output');
      });
      return s;
    };
    docker.modem.demuxStream(this.stream, sink(this.stdout), sink(this.stderr));
    // A write after the command closed its stdin fails with EPIPE; that is not an error of the execution.
    this.stream.on('error', () => undefined);
    let ended = false;
    const onEnd = () => {
      if (ended) return;
      ended = true;
      void this.readOutcome(dockerHost).then(async ({ exitCode, started }) => {
        if (started) {
          this.exitCode = exitCode;
        } else {
          // What the stream carried is the runtime's complaint, not the command's output.
          const runtimeMessage = `${this.stdout.render(true)}${this.stderr.render(true)}`.trim();
          this.stdout.clear();
          this.stderr.clear();
          this.startError = await this.explainStartFailure(runtimeMessage || `the runtime exited with code ${exitCode} and gave no reason`);
        }
        this.status = 'exited';
        this.stream.destroy();
        this.markFinished();
        this.emit('exited');
      });
    };
    this.stream.once('end', onEnd);
    this.stream.once('close', onEnd);
  }

  /** Polls `exec.inspect()` until the engine reports the exit code; -1 (and started) when it cannot be had. */
  private async readOutcome(dockerHost: string | undefined): Promise<ExecOutcome> {
    const deadline = Date.now() + EXIT_CODE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      try {
        const info = await engineCall(dockerHost, 'read the exit code', ENGINE_TIMEOUTS.request, (abortSignal) => this.exec.inspect({ abortSignal }));
        if (!info.Running && info.ExitCode !== null) return outcomeOf(info);
      } catch {
        // The container is gone or the engine stopped: the code is lost.
        return { exitCode: -1, started: true };
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    return { exitCode: -1, started: true };
  }

  /** Writes `text` to the command's standard input (ignored once the command has exited). */
  writeStdin(text: string): void {
    if (this.status === 'running' && this.stream.writable) this.stream.write(text);
  }

  /** Adds Backyard's own `text` to the command's stderr (a line saying what Backyard did to it). */
  note(text: string): void {
    if (this.status === 'running') this.stderr.append(Buffer.from(text));
  }

  /** Stops following the exec (Backyard is closing); the command itself is not touched. */
  detach(): void {
    this.removeAllListeners();
    this.stream.destroy();
  }

  /**
   * Resolves true once exited, or false after `ms` milliseconds or when `signal` aborts.
   */
  async waitForExit(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.status === 'exited') return true;
    return new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.finished.then(() => done(true));
    });
  }

  /**
   * The wait after writing to stdin: resolves once the command has answered and then been quiet for
   * `timing.quietMs`, or has exited, or `signal` aborts. A command that writes nothing within
   * `timing.firstOutputMs` of `since` is taken as silent; and `timing.capMs` after `since` ends the wait
   * for a command that keeps writing. All in milliseconds.
   */
  async waitForSettle(timing: { quietMs: number; firstOutputMs: number; capMs: number }, since = Date.now(), signal?: AbortSignal): Promise<void> {
    const deadline = since + timing.capMs;
    const chunksBefore = this.chunks;
    while (this.status === 'running' && !signal?.aborted) {
      const now = Date.now();
      if (now >= deadline) return;
      const answered = this.chunks > chunksBefore;
      const until = answered ? this.lastOutputAt + timing.quietMs : since + timing.firstOutputMs;
      if (now >= until) return;
      await this.waitForChange(Math.min(until, deadline) - now, signal);
    }
  }

  /** Resolves on the next output chunk or exit, or after `ms`, or when `signal` aborts. */
  private waitForChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('output', done);
        this.off('exited', done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.once('output', done);
      this.once('exited', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** The Interface A view of this execution right now. */
  snapshot(): CommandExecution {
    const final = this.status === 'exited';
    return {
      id: this.id,
      stdout: this.stdout.render(final),
      stderr: this.stderr.render(final),
      status: this.status,
      ...(final && this.exitCode !== undefined ? { exitCode: this.exitCode } : {}),
      ...(final && this.startError !== undefined ? { startError: this.startError } : {}),
    };
  }
}

/** Exit code 126 with no pid: the engine's mark of an exec whose process the runtime never started. */
const outcomeOf = (info: { ExitCode: number | null; Pid?: number }): ExecOutcome => ({
  exitCode: info.ExitCode ?? -1,
  started: !(info.ExitCode === 126 && !info.Pid),
});

/**
 * The outcome of `runScript`: the script's exit code, or `notStarted` with the runtime's message when
 * the runtime could not start it.
 */
export type ScriptOutcome = { exitCode: number } | { notStarted: string };

/**
 * Runs `script` with `sh -c` in `container` and waits for it (at most `timeoutMs`), without stdin:
 * the second exec that signals a command's process group.
 * @returns its exit code (-1 when the engine never reported one), or `notStarted` with the runtime's
 *   message when the runtime could not start it (for example when the container's process slots are
 *   all taken: the runtime's own init needs several).
 * @throws ManagementError(unavailable) when the engine is unreachable or refuses the exec.
 */
export async function runScript(
  docker: DockerClient,
  dockerHost: string | undefined,
  container: Docker.Container,
  script: string,
  timeoutMs: number,
): Promise<ScriptOutcome> {
  return engineCall(dockerHost, 'signal the command', timeoutMs, async (abortSignal) => {
    const exec = await container.exec({ Cmd: ['sh', '-c', script], AttachStdout: true, AttachStderr: true, abortSignal });
    const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
    const output = new TailBuffer(4096);
    const drain = new PassThrough();
    drain.on('data', (chunk: Buffer) => output.append(chunk));
    docker.modem.demuxStream(stream, drain, drain);
    await new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    for (let i = 0; i < 100; i++) {
      const info = await exec.inspect({ abortSignal });
      if (!info.Running && info.ExitCode !== null) {
        const { exitCode, started } = outcomeOf(info);
        return started ? { exitCode } : { notStarted: output.render(true).trim() };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return { exitCode: -1 };
  });
}
