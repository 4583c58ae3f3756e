import path from 'node:path';
import { homePaths } from '../config.js';
import type { AppKeys } from './appKeys.js';
import type { DataEngine } from './engine.js';
import { AppServices } from './appServices.js';
import { DataStore } from './store.js';
import { fileLocation } from './fileLocation.js';
import type { StorageProvider } from './storage/provider.js';
import type { FileStore } from './files.js';
import { DEFAULT_SETTINGS, type ServerSettings } from './settings.js';
import { Outbox, type MailRecord } from './mail/outbox.js';

export type { AppKeys } from './appKeys.js';

/** Where the data layer learns which apps exist, their keys and server options (the platform's Backend App records). */
export interface AppDirectory {
  keys(applicationId: string): Promise<AppKeys | undefined>;
  /** The server options in force for an app (settings.ts), or undefined for an unknown app. */
  settings(applicationId: string): Promise<ServerSettings | undefined>;
}

/**
 * How long an app's server options are answered from memory before they are read again. Changes made
 * in this process (the dashboard) reach the data API at once through `forgetSettings`; this bounds
 * how late it sees one written by another process (`backyard app config` next to a running server),
 * at one read per app per interval rather than one per request.
 */
export const SETTINGS_RECHECK_MS = 1000;

/**
 * The open data engines of all Backend Apps, opened on first use and kept open, each on the storage
 * of `storage`: a SQLite file (`apps/<appId>/data.db`) or a schema of the PostgreSQL database; with
 * the apps' keys, server options and folders. What else the data API reaches (cloud code, mail,
 * sign-in providers, the outbound client) is its `DataServices` (services.ts).
 */
export class DataApps {
  /** Each open app's master view and its services (whose `engine` is the app's checking face). */
  private readonly engines = new Map<string, { store: DataStore; services: AppServices }>();

  constructor(
    private readonly home: string,
    readonly directory: AppDirectory,
    /** The data API's public root, e.g. `http://localhost:4000/data`; read per call (known after listen). */
    private readonly dataApiUrl: () => string,
    private readonly storage: StorageProvider,
    /** Told of each app's store as it opens (LiveQuery follows its changes). */
    private readonly opened: (applicationId: string, store: DataStore) => void = () => undefined,
  ) {}

  /** An app's folder (`apps/<appId>`). */
  appFolder(applicationId: string): string {
    return homePaths(this.home).app(applicationId);
  }

  /** The folder of an app's outbox (mail/outbox.ts). */
  mailFolder(applicationId: string): string {
    return path.join(homePaths(this.home).app(applicationId), 'mail');
  }

  /** An app's newest mails first (sent, failed, or kept for want of an SMTP server), at most `limit`. */
  mails(applicationId: string, limit = 50): Promise<MailRecord[]> {
    return new Outbox(this.mailFolder(applicationId)).list(limit);
  }

  private readonly keyCache = new Map<string, AppKeys>();
  private closed = false;
  private readonly settingsCache = new Map<string, { settings: ServerSettings; readAt: number }>();

  /** An app's keys; keys never change once the app exists, so known apps are answered from memory. */
  async keys(applicationId: string): Promise<AppKeys | undefined> {
    let keys = this.keyCache.get(applicationId);
    if (!keys) {
      keys = await this.directory.keys(applicationId);
      if (keys) this.keyCache.set(applicationId, keys);
    }
    return keys;
  }

  /**
   * An app's server options in force, as last read (`engine` reads them when older than
   * SETTINGS_RECHECK_MS); the defaults for an app not read yet.
   */
  settings(applicationId: string): ServerSettings {
    return this.settingsCache.get(applicationId)?.settings ?? DEFAULT_SETTINGS;
  }

  /** Reads an app's server options again now (they were just written), so that the next request uses them. */
  async reloadSettings(applicationId: string): Promise<void> {
    const settings = (await this.directory.settings(applicationId)) ?? DEFAULT_SETTINGS;
    this.settingsCache.set(applicationId, { settings, readAt: Date.now() });
  }

  /** Reads an app's server options when those in memory are older than SETTINGS_RECHECK_MS. */
  private async freshSettings(applicationId: string): Promise<void> {
    const cached = this.settingsCache.get(applicationId);
    if (!cached || Date.now() - cached.readAt >= SETTINGS_RECHECK_MS) await this.reloadSettings(applicationId);
  }

  /**
   * The keys and engine of an app when everything a request needs is in memory (keys, an open
   * engine, server options read within SETTINGS_RECHECK_MS); undefined otherwise: then `engine`
   * reads what is missing. Lets a request on a warm app be answered without waiting.
   */
  ready(applicationId: string): { keys: AppKeys; services: AppServices } | undefined {
    const keys = this.keyCache.get(applicationId);
    const open = this.engines.get(applicationId);
    const cached = this.settingsCache.get(applicationId);
    if (!keys || !open || !cached || Date.now() - cached.readAt >= SETTINGS_RECHECK_MS) return undefined;
    return { keys, services: open.services };
  }

  /**
   * The engine of an app, with its server options read within SETTINGS_RECHECK_MS, or undefined
   * when no app has this application id (or every engine was closed: `closeAll`).
   */
  async engine(applicationId: string): Promise<DataEngine | undefined> {
    return (await this.open(applicationId))?.services.engine;
  }

  /** The services of an app (appServices.ts), as `engine` opens it; undefined for an unknown app. */
  async services(applicationId: string): Promise<AppServices | undefined> {
    return (await this.open(applicationId))?.services;
  }

  /**
   * The master view of an app (store.ts), as `engine` opens it; undefined for an unknown app. For
   * the data layer's own work (scheduled jobs, LiveQuery's sessions) and tests: routes are given
   * DataApps without it (rest/types.ts, RouteApps).
   */
  async store(applicationId: string): Promise<DataStore | undefined> {
    return (await this.open(applicationId))?.store;
  }

  private async open(applicationId: string): Promise<{ store: DataStore; services: AppServices } | undefined> {
    const existing = this.engines.get(applicationId);
    if (existing) {
      await this.freshSettings(applicationId);
      return existing;
    }
    if (this.closed || !(await this.keys(applicationId))) return undefined;
    await this.freshSettings(applicationId);
    if (this.engines.has(applicationId)) return this.engines.get(applicationId);
    // Closed meanwhile (the server stops): a late caller (a job's message) must not open the database again.
    if (this.closed) return undefined;
    const folder = homePaths(this.home).app(applicationId);
    const store = new DataStore(
      applicationId,
      this.storage.open(applicationId, folder),
      (name) => fileLocation(this.dataApiUrl(), applicationId, this.keyCache.get(applicationId)?.fileKey, name),
      () => this.settings(applicationId),
    );
    const open = { store, services: new AppServices(store) };
    this.engines.set(applicationId, open);
    this.opened(applicationId, store);
    return open;
  }

  /** The uploaded files of an app, where its storage keeps them (StorageProvider.files). */
  files(applicationId: string): FileStore {
    return this.storage.files(applicationId, homePaths(this.home).app(applicationId));
  }

  /** Closes one app's database and forgets its keys (an app being deleted); a later call finds it unknown. */
  close(applicationId: string): void {
    void this.engines.get(applicationId)?.store.close();
    this.engines.delete(applicationId);
    this.keyCache.delete(applicationId);
    this.settingsCache.delete(applicationId);
  }

  /** The application ids of the apps whose engines are open. */
  openApps(): string[] {
    return [...this.engines.keys()];
  }

  /** Closes one app's storage and removes its data (an app being deleted; its folder is the platform's). */
  async remove(applicationId: string): Promise<void> {
    const open = this.engines.get(applicationId);
    this.close(applicationId);
    await open?.store.close();
    await this.storage.drop(applicationId);
  }

  /** Closes every engine and what they share (PostgreSQL's pool). */
  async closeAll(): Promise<void> {
    this.closed = true;
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.all(engines.map((open) => open.store.close().catch(() => undefined)));
    await this.storage.close();
  }
}
