import fs from 'node:fs';

/**
 * Group commit for a SQLite database in WAL mode with `synchronous=NORMAL`: commits append to the
 * WAL without syncing, and `durable()` resolves once an `fdatasync` of the WAL that started after
 * the caller's commits has finished. Committed WAL frames on stable storage survive a power loss
 * (SQLite recovers them at the next open), so an answer sent after `durable()` reports a change
 * that is on disk (docs/design.md, "State"), while concurrent writers share one sync and the event loop
 * keeps running during it (libuv's thread pool does the sync).
 */
/** Syncs slower than this (milliseconds) are never run on the event loop. */
export const INLINE_SYNC_MAX_MS = 2;

export class WalSync {
  private fd: number | undefined;
  /** How long the last sync took, in milliseconds (a sync in the thread pool counts its wait). */
  private lastSyncMs = 0;
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

  /**
   * Resolves when every commit recorded before this call is on stable storage.
   * @param alone no other request is in flight (the caller knows; this class does not): with no
   *   sync running either, the sync runs here, on the event loop. A lone writer then skips two
   *   hand-offs between threads (to the thread pool and back), each a wake-up that costs more than
   *   the wait it saves (bench/data-api, sequential creates); concurrent writers keep sharing syncs.
   *   Not when the last sync took longer than INLINE_SYNC_MAX_MS.
   */
  async durable(alone = false): Promise<void> {
    const target = this.written;
    // Only where syncs are quick: on a slow disk the event loop would stand still for each one, and
    // the requests of the other interfaces (MCP, the dashboard) with it.
    if (alone && this.lastSyncMs <= INLINE_SYNC_MAX_MS && !this.running && this.synced < target && this.open()) {
      const start = performance.now();
      fs.fdatasyncSync(this.fd!);
      this.lastSyncMs = performance.now() - start;
      this.synced = Math.max(this.synced, target);
      return;
    }
    while (this.synced < target) {
      if (!this.running) this.running = this.syncOnce().finally(() => (this.running = undefined));
      await this.running;
    }
  }

  /** The sync running in the thread pool, if any: a commit made before it ends waits for the next one anyway. */
  inFlight(): Promise<void> | undefined {
    return this.running;
  }

  /**
   * Opens the WAL once: the adapter keeps its connection open, and SQLite removes the WAL only when
   * the last connection closes, so one descriptor serves for the adapter's life.
   * @returns false when there is no WAL file (nothing was written through it).
   */
  private open(): boolean {
    if (this.fd !== undefined) return true;
    try {
      this.fd = fs.openSync(this.walFile, 'r');
      return true;
    } catch {
      return false;
    }
  }

  private async syncOnce(): Promise<void> {
    const target = this.written;
    if (!this.open()) {
      // No WAL file: nothing was written through WAL, so nothing waits on a sync.
      this.synced = Math.max(this.synced, target);
      return;
    }
    const start = performance.now();
    await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd!, (e) => (e ? reject(e) : resolve())));
    this.lastSyncMs = performance.now() - start;
    this.synced = Math.max(this.synced, target);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
