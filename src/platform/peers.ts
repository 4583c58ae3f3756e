import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { EVERYTHING, type Broadcast } from '../data/storage/provider.js';

/**
 * What this process tells the other Backyard processes serving the same apps (issue 16, "several
 * processes, one truth"), and hears from them: changes made outside the shared database, such as a
 * cloud code deploy or an app's deletion. Without a broadcast (SQLite: one process per home) both do
 * nothing.
 */
export class Peers {
  /** Tells this process's own announcements apart from the others'. */
  private readonly processId = randomUUID();

  constructor(
    private readonly broadcast: Broadcast | undefined,
    private readonly log: Logger,
  ) {}

  /** Announces that `appId` changed on `topic`; a failure is logged, not thrown (the change itself is done). */
  async announce(topic: string, appId: string): Promise<void> {
    await this.broadcast?.publish(topic, `${this.processId} ${appId}`).catch((err: unknown) => this.log.warn({ err, topic, app: appId }, 'could not tell the other processes'));
  }

  /**
   * Calls `fn` with the appId of each announcement another process makes on `topic`, or with
   * EVERYTHING when some may have been missed (the listening connection was lost). A failure of
   * `fn` is logged.
   */
  hear(topic: string, fn: (appId: string) => Promise<void>): void {
    this.broadcast
      ?.subscribe(topic, (payload) => {
        const [from, appId] = payload === EVERYTHING ? [undefined, EVERYTHING] : payload.split(' ');
        if (from !== this.processId && appId) fn(appId).catch((err: unknown) => this.log.warn({ err, topic, app: appId }, 'could not follow another process'));
      })
      .catch((err: unknown) => this.log.error({ err, topic }, 'could not listen to the other processes'));
  }
}
