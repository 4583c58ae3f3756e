import fs from 'node:fs';

/**
 * Group commit for a SQLite database in WAL mode with `synchronous=NORMAL`: commits append to the
 * WAL without syncing, and `durable()` resolves once an `fdatasync` of the WAL that started after
 * the caller's commits has finished. Committed WAL frames on stable storage survive a power loss
 * (SQLite recovers them at the next open), so an answer sent after `durable()` reports a change
 * that is on disk (design.md, "State"), while concurrent writers share one sync and the event loop
 * keeps running during it (libuv's thread pool does the sync).
 */
export class WalSync {
  private fd: number | undefined;
  /** Incremented by every commit that wrote. */
  private written = 0;
  /** The highest `written` value known to be on disk. */
  private synced = 0;
  private running: Promise<void> | undefined;

  constructor(private readonly walFile: string) {}

  /** Records that a commit wrote something. Call after each write transaction. */
  wrote(): void {
    this.written++;
  }

  /** Resolves when every commit recorded before this call is on stable storage. */
  async durable(): Promise<void> {
    const target = this.written;
    while (this.synced < target) {
      if (!this.running) this.running = this.syncOnce().finally(() => (this.running = undefined));
      await this.running;
    }
  }

  private async syncOnce(): Promise<void> {
    const target = this.written;
    // The adapter keeps its connection open, and SQLite removes the WAL only when the last
    // connection closes, so one descriptor serves for the adapter's life.
    if (this.fd === undefined) {
      try {
        this.fd = fs.openSync(this.walFile, 'r');
      } catch {
        // No WAL file: nothing was written through WAL, so nothing waits on a sync.
        this.synced = Math.max(this.synced, target);
        return;
      }
    }
    await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd!, (e) => (e ? reject(e) : resolve())));
    this.synced = Math.max(this.synced, target);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
