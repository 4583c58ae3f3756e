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
  private ino: number | undefined;
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
    await fs.promises.stat(this.walFile).then(
      (st) => {
        // SQLite may remove and recreate the WAL (last connection closing); sync the current file.
        if (this.fd === undefined || st.ino !== this.ino) {
          if (this.fd !== undefined) fs.closeSync(this.fd);
          this.fd = fs.openSync(this.walFile, 'r');
          this.ino = st.ino;
        }
      },
      () => undefined, // no WAL file: everything was checkpointed into the database, which SQLite synced
    );
    if (this.fd !== undefined) await new Promise<void>((resolve, reject) => fs.fdatasync(this.fd!, (e) => (e ? reject(e) : resolve())));
    this.synced = Math.max(this.synced, target);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
