import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { EVERYTHING, type Broadcast } from './storage/provider.js';

/**
 * What happens to an app outside its database that every part holding it open must follow: its
 * deletion (workers stop, its engine closes, its data goes) and a deploy of its cloud code (a live
 * worker loads the new code).
 */
export type AppEventTopic = 'app_deleted' | 'cloud_deployed';

/** The topics, as the other processes hear them (a NOTIFY channel each: storage/provider.ts `Broadcast`). */
const TOPICS: readonly AppEventTopic[] = ['app_deleted', 'cloud_deployed'];

/** One announcement, as a listener gets it. */
export interface AppEvent {
  /**
   * The app; undefined when announcements of other processes may have been missed (their listening
   * connection was lost and made again): then every app the listener holds must be checked.
   */
  appId: string | undefined;
  /**
   * True when this process made the change (its listeners do the work the change needs, such as
   * dropping the app's data); false when another process sharing the database made it and did that
   * work already (only what this process holds in memory must follow).
   */
  here: boolean;
}

/** A listener of one topic; awaited (an announcement made here waits for its listeners). */
export type AppEventListener = (event: AppEvent) => Promise<void> | void;

/**
 * The one source of app events of a process: announcements made here and, on PostgreSQL, those of
 * the other Backyard processes serving the same apps, heard through LISTEN/NOTIFY (`Broadcast`)
 * once `start` is called. Without a broadcast (SQLite: one process per home) only this process's
 * announcements are heard.
 */
export class AppEvents {
  /** Tells this process's own announcements apart from the others' (NOTIFY reaches the sender too). */
  private readonly processId = randomUUID();
  private readonly listeners = new Map<AppEventTopic, AppEventListener[]>();
  private started = false;
  private closed = false;

  constructor(
    private readonly broadcast: Broadcast | undefined,
    private readonly log: Logger,
  ) {}

  /** Calls `fn` for every announcement on `topic`, after the listeners added before it. @returns what removes it. */
  on(topic: AppEventTopic, fn: AppEventListener): () => void {
    const list = this.listeners.get(topic) ?? [];
    this.listeners.set(topic, [...list, fn]);
    return () => this.listeners.set(topic, (this.listeners.get(topic) ?? []).filter((f) => f !== fn));
  }

  /**
   * Announces a change this process made to `appId`: runs this process's listeners one after the
   * other, then tells the other processes, even when a listener failed (the change itself is done,
   * and they hold their own copies of the app).
   * @throws what the first failing listener threw.
   */
  async announce(topic: AppEventTopic, appId: string): Promise<void> {
    try {
      await this.emit(topic, { appId, here: true });
    } finally {
      await this.broadcast?.publish(topic, `${this.processId} ${appId}`).catch((err: unknown) => this.log.warn({ err, topic, app: appId }, 'could not tell the other processes'));
    }
  }

  /**
   * Starts hearing the other processes' announcements (PostgreSQL's LISTEN); a listener's failure
   * on one of them is logged. Resolves once listening; a failure to listen is logged, not thrown
   * (this process still serves its own announcements).
   */
  async start(): Promise<void> {
    if (this.started || !this.broadcast) return;
    this.started = true;
    await Promise.all(
      TOPICS.map((topic) =>
        this.broadcast!.subscribe(topic, (payload) => this.heard(topic, payload)).catch((err: unknown) => this.log.error({ err, topic }, 'could not listen to the other processes')),
      ),
    );
  }

  /** Stops passing on what other processes announce (the listening connection closes with the storage). */
  close(): void {
    this.closed = true;
  }

  private heard(topic: AppEventTopic, payload: string): void {
    if (this.closed) return;
    const [from, appId] = payload === EVERYTHING ? [undefined, undefined] : payload.split(' ');
    if (from === this.processId || (payload !== EVERYTHING && !appId)) return;
    this.emit(topic, { appId, here: false }).catch((err: unknown) => this.log.warn({ err, topic, app: appId ?? EVERYTHING }, 'could not follow another process'));
  }

  private async emit(topic: AppEventTopic, event: AppEvent): Promise<void> {
    for (const fn of this.listeners.get(topic) ?? []) await fn(event);
  }
}
