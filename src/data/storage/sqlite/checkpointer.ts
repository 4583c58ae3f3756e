import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../../packageRoot.js';

/**
 * The compiled thread script: beside this module in `dist/`, or in `dist/` when this module runs
 * from its TypeScript source (tests), which `npm test` builds first.
 */
const WORKER_SCRIPT = [
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'checkpointWorker.cjs'),
  path.join(packageRoot(), 'dist', 'src', 'data', 'storage', 'sqlite', 'checkpointWorker.cjs'),
].find((f) => fs.existsSync(f));

interface Done {
  type: 'done';
  file: string;
  request: 'checkpoint' | 'release';
  error?: string;
}

/**
 * WAL checkpoints of every app database on one worker thread (checkpointWorker.cts). A checkpoint
 * copies committed pages from the WAL into `data.db` and syncs it; done by SQLite's automatic
 * checkpoint, it ran inside a commit on the event loop and held every request behind that sync
 * (about 17 µs per insert on this disk, amortized: bench/data-api). Requests for one file are
 * coalesced while one runs. The thread does not keep the process alive.
 * Without a compiled worker (or if the thread fails) `available` is false and the caller keeps
 * SQLite's automatic checkpoints.
 */
export class Checkpointer {
  private worker: Worker | undefined;
  private failed = !WORKER_SCRIPT;
  /** Files with a checkpoint running, and whether another was asked for meanwhile. */
  private readonly running = new Map<string, boolean>();
  private readonly releases = new Map<string, Array<() => void>>();

  /** Whether checkpoints can be taken off the event loop. */
  get available(): boolean {
    return !this.failed;
  }

  /** Asks for a PASSIVE checkpoint of `file` (an app's `data.db`); returns at once. */
  request(file: string): void {
    const worker = this.thread();
    if (!worker) return;
    if (this.running.has(file)) {
      this.running.set(file, true);
      return;
    }
    this.running.set(file, false);
    worker.postMessage({ type: 'checkpoint', file });
  }

  /** Closes the thread's connection to `file`; resolves once it is closed (before the file may go). */
  release(file: string): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.releases.get(file) ?? [];
      waiting.push(resolve);
      this.releases.set(file, waiting);
      worker.postMessage({ type: 'release', file });
    });
  }

  private thread(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    const worker = new Worker(WORKER_SCRIPT!);
    worker.unref();
    worker.on('message', (done: Done) => this.onDone(done));
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    this.worker = worker;
    return worker;
  }

  private onDone(done: Done): void {
    if (done.request === 'release') {
      for (const resolve of this.releases.get(done.file) ?? []) resolve();
      this.releases.delete(done.file);
      return;
    }
    const again = this.running.get(done.file);
    this.running.delete(done.file);
    if (again) this.request(done.file);
  }

  private fail(): void {
    this.failed = true;
    this.worker = undefined;
    this.running.clear();
    for (const waiting of this.releases.values()) for (const resolve of waiting) resolve();
    this.releases.clear();
  }
}

/** The one checkpoint thread of this process. */
export const checkpointer = new Checkpointer();
