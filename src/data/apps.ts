import path from 'node:path';
import { homePaths } from '../config.js';
import { DataEngine } from './engine.js';
import type { CloudRuntime } from './cloud/types.js';
import type { StorageProvider } from './storage/provider.js';
import { DEFAULT_SETTINGS, type ServerSettings } from './settings.js';

/** The keys of a Backend App, as the platform keeps them (spec, Interface B, "Authentication"). */
export interface AppKeys {
  applicationId: string;
  restKey: string;
  javascriptKey: string;
  clientKey: string;
  dotnetKey: string;
  webhookKey: string;
  fileKey: string;
  masterKey: string;
}

/** Where the data layer learns which apps exist, their keys and server options (the platform's Backend App records). */
export interface AppDirectory {
  keys(applicationId: string): AppKeys | undefined;
  /** The server options in force for an app (settings.ts), or undefined for an unknown app. */
  settings(applicationId: string): ServerSettings | undefined;
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
 * of `storage`: a SQLite file (`apps/<appId>/data.db`) or a schema of the PostgreSQL database.
 */
export class DataApps {
  private readonly engines = new Map<string, DataEngine>();

  constructor(
    private readonly home: string,
    readonly directory: AppDirectory,
    /** The data API's public root, e.g. `http://localhost:4000/data`; read per call (known after listen). */
    private readonly dataApiUrl: () => string,
    /** The apps' cloud code, which the data API calls for functions, jobs and triggers. */
    readonly cloud: CloudRuntime,
    private readonly storage: StorageProvider,
  ) {}

  private readonly keyCache = new Map<string, AppKeys>();
  private readonly settingsCache = new Map<string, { settings: ServerSettings; readAt: number }>();

  /** An app's keys; keys never change once the app exists, so known apps are answered from memory. */
  keys(applicationId: string): AppKeys | undefined {
    let keys = this.keyCache.get(applicationId);
    if (!keys) {
      keys = this.directory.keys(applicationId);
      if (keys) this.keyCache.set(applicationId, keys);
    }
    return keys;
  }

  /** An app's server options in force (the defaults for an unknown app), from memory for up to SETTINGS_RECHECK_MS. */
  settings(applicationId: string): ServerSettings {
    const now = Date.now();
    const cached = this.settingsCache.get(applicationId);
    if (cached && now - cached.readAt < SETTINGS_RECHECK_MS) return cached.settings;
    const settings = this.directory.settings(applicationId) ?? DEFAULT_SETTINGS;
    this.settingsCache.set(applicationId, { settings, readAt: now });
    return settings;
  }

  /** Drops an app's cached server options, so that the next request reads the ones just written. */
  forgetSettings(applicationId: string): void {
    this.settingsCache.delete(applicationId);
  }

  /** The engine of an app, or undefined when no app has this application id. */
  engine(applicationId: string): DataEngine | undefined {
    const existing = this.engines.get(applicationId);
    if (existing) return existing;
    if (!this.keys(applicationId)) return undefined;
    const folder = homePaths(this.home).app(applicationId);
    const engine = new DataEngine(
      applicationId,
      this.storage.open(applicationId, folder),
      (name) => `${this.dataApiUrl()}/files/${encodeURIComponent(applicationId)}/${encodeURIComponent(name)}`,
      () => this.settings(applicationId),
    );
    this.engines.set(applicationId, engine);
    return engine;
  }

  /** The folder where an app's uploaded files live. */
  filesFolder(applicationId: string): string {
    return path.join(homePaths(this.home).app(applicationId), 'files');
  }

  /** Closes one app's database and forgets its keys (an app being deleted); a later call finds it unknown. */
  close(applicationId: string): void {
    void this.engines.get(applicationId)?.close();
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
    const engine = this.engines.get(applicationId);
    this.close(applicationId);
    await engine?.close();
    await this.storage.drop(applicationId);
  }

  /** Closes every engine and what they share (PostgreSQL's pool). */
  async closeAll(): Promise<void> {
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.all(engines.map((engine) => engine.close().catch(() => undefined)));
    await this.storage.close();
  }
}
