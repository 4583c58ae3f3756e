import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../log.js';
import { ParseCode, ParseError } from '../errors.js';
import { RUN_LIMITS, type RunRecord } from './runs.js';
import { EMPTY_REGISTRY, type CloudRegistry } from './types.js';

/*
 * One cloud code worker process as the runtime (runtime.ts) sees it: its calls in flight with their
 * time limits, its log lines routed to run records, the ping that tells a free event loop from a held
 * one, its idle countdown, and the reason it stopped.
 */

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
  run: RunRecord;
}

/** A message from a worker. It runs the app's code: what reaches a run record is checked there. */
type WorkerMessage = {
  type: string;
  id?: number;
  result?: unknown;
  error?: { code: number; message: string };
  registry?: CloudRegistry;
  jobId?: string;
  omittedLines?: unknown;
} & Record<string, unknown>;

const tail = (text: string, max = 600) => (text.length > max ? `…${text.slice(-max)}` : text);

/** One worker process and the calls it is running. */
export class Worker {
  readonly ready: Promise<CloudRegistry>;
  /** What `ready` resolved to, once it has. */
  loaded: CloudRegistry | undefined;
  readonly pending = new Map<number, Pending>();
  /**
   * The records of recent calls by id, also after they answered: code may still log from a timer
   * a call started. Bounded: a record older than the history keeps is of no use.
   */
  private readonly runs = new Map<number, RunRecord>();
  private nextId = 1;
  private stderr = '';
  loadError: string | undefined;
  /** Takes no more calls: killed, or its process ended. */
  exited = false;
  /** Why Backyard stopped it, for the calls that were still running on it. */
  private stopReason: string | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly pongs = new Set<() => void>();

  constructor(
    readonly appId: string,
    private readonly child: ChildProcess,
    private readonly log: Logger,
    onJobMessage: (jobId: string, message: string) => void,
    private readonly onExit: (worker: Worker) => void,
    /** Milliseconds without a call after which the process is stopped (BACKYARD_CLOUD_IDLE_MS). */
    private readonly idleMs: number,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderr = tail(this.stderr + text, 4000);
      for (const line of text.split('\n').filter(Boolean)) log.info({ app: appId, cloud: line }, 'cloud code output');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) log.info({ app: appId, cloud: line }, 'cloud code output');
    });
    this.ready = new Promise<CloudRegistry>((resolve) => {
      child.on('message', (message: WorkerMessage) => {
        if (message.type === 'log' && typeof message.id === 'number') this.runs.get(message.id)?.line(message.level, message.message, message.time);
        else if (message.type === 'ready') resolve(message.registry ?? EMPTY_REGISTRY);
        else if (message.type === 'loadError') {
          this.loadError = String(message.message);
          resolve(EMPTY_REGISTRY);
        } else if (message.type === 'jobMessage') onJobMessage(String(message.jobId), String(message.message));
        else if (message.type === 'result' && message.id !== undefined) this.settle(message.id, message.error, message.result, message.omittedLines);
        else if (message.type === 'pong') for (const answered of this.pongs) answered();
      });
      child.once('exit', (code, signal) => {
        this.exited = true;
        resolve(EMPTY_REGISTRY);
        clearTimeout(this.idleTimer);
        const reason = this.stopReason ?? (signal === 'SIGKILL' ? 'was stopped' : `crashed (exit ${code ?? signal})`);
        this.loadError ??= `The cloud code worker ${reason}.${this.stderr ? ` Its last output: ${tail(this.stderr.trim(), 400)}` : ''}`;
        this.failAll(new ParseError(ParseCode.SCRIPT_FAILED, `The cloud code worker ${reason}; it is restarted for the next call.${this.stderr ? ` Its last output: ${tail(this.stderr.trim(), 400)}` : ''}`));
        onExit(this);
      });
    });
    void this.ready.then((registry) => {
      this.loaded = registry;
      this.idleAgain();
    });
  }

  /** Starts the idle countdown once no call is running. */
  private idleAgain(): void {
    clearTimeout(this.idleTimer);
    if (this.pending.size > 0 || this.exited) return;
    this.idleTimer = setTimeout(() => {
      if (this.pending.size > 0) return;
      this.log.debug({ app: this.appId, idleMs: this.idleMs }, 'cloud code worker idle: stopped');
      this.kill(`was stopped after ${this.idleMs} ms without calls`);
    }, this.idleMs).unref();
  }

  /**
   * Whether the process's event loop answers a ping within `ms` milliseconds: false while code runs
   * without yielding (a loop), so that new calls go elsewhere.
   */
  responsive(ms: number): Promise<boolean> {
    if (this.exited) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.pongs.delete(answered);
        resolve(value);
      };
      const answered = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.pongs.add(answered);
      this.child.send({ type: 'ping' });
    });
  }

  private settle(id: number, error: { code: number; message: string } | undefined, result: unknown, omittedLines: unknown): void {
    const call = this.pending.get(id);
    if (!call) return;
    this.pending.delete(id);
    clearTimeout(call.timer);
    this.idleAgain();
    call.run.omitted(omittedLines);
    if (error) {
      const failure = new ParseError(error.code || ParseCode.SCRIPT_FAILED, error.message);
      call.run.finish('failed', failure.message);
      call.reject(failure);
    } else {
      call.run.finish('succeeded');
      call.resolve(result);
    }
  }

  failAll(error: ParseError): void {
    for (const [id, call] of this.pending) {
      clearTimeout(call.timer);
      call.run.finish('failed', error.message);
      call.reject(error);
      this.pending.delete(id);
    }
  }

  /** Sends a call to the process; `run` records its lines and its end. */
  call(kind: string, name: string, request: Record<string, unknown>, timeoutMs: number, run: RunRecord): Promise<unknown> {
    if (this.exited) {
      const error = new ParseError(ParseCode.SCRIPT_FAILED, 'The cloud code worker is not running.');
      run.finish('failed', error.message);
      return Promise.reject(error);
    }
    const id = this.nextId++;
    this.runs.set(id, run);
    if (this.runs.size > RUN_LIMITS.runs + RUN_LIMITS.jobRuns) this.runs.delete(this.runs.keys().next().value!);
    clearTimeout(this.idleTimer);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.log.warn({ app: this.appId, kind, name, timeoutMs }, 'cloud code timed out; restarting its worker');
        this.pending.delete(id);
        const error = new ParseError(ParseCode.SCRIPT_FAILED, `Cloud ${kind} "${name}" ran longer than its limit of ${timeoutMs} ms and was stopped; its worker was restarted.`);
        run.finish('timed out', error.message);
        reject(error);
        this.kill(`was stopped because cloud ${kind} "${name}" ran longer than its limit of ${timeoutMs} ms`);
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, run });
      this.child.send({ id, kind, name, request });
    });
  }

  /**
   * Stops the process; from now on the worker takes no calls, and a new one is started for the next.
   * @param reason completes "The cloud code worker …" in the error of calls still running on it.
   */
  kill(reason?: string): void {
    this.stopReason ??= reason;
    clearTimeout(this.idleTimer);
    this.exited = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
