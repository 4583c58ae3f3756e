import path from 'node:path';
import { homePaths } from '../config.js';
import { DataEngine } from './engine.js';
import type { CloudRuntime } from './cloud/types.js';
import { SqliteAdapter } from './storage/sqlite/adapter.js';

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

/** Where the data layer learns which apps exist and their keys (the platform's Backend App records). */
export interface AppDirectory {
  keys(applicationId: string): AppKeys | undefined;
}

/**
 * The open data engines of all Backend Apps, one SQLite file each (`apps/<appId>/data.db`), opened on
 * first use and kept open.
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
  ) {}

  private readonly keyCache = new Map<string, AppKeys>();

  /** An app's keys; keys never change once the app exists, so known apps are answered from memory. */
  keys(applicationId: string): AppKeys | undefined {
    let keys = this.keyCache.get(applicationId);
    if (!keys) {
      keys = this.directory.keys(applicationId);
      if (keys) this.keyCache.set(applicationId, keys);
    }
    return keys;
  }

  /** The engine of an app, or undefined when no app has this application id. */
  engine(applicationId: string): DataEngine | undefined {
    const existing = this.engines.get(applicationId);
    if (existing) return existing;
    if (!this.keys(applicationId)) return undefined;
    const folder = homePaths(this.home).app(applicationId);
    const engine = new DataEngine(
      applicationId,
      new SqliteAdapter(path.join(folder, 'data.db')),
      (name) => `${this.dataApiUrl()}/files/${encodeURIComponent(applicationId)}/${encodeURIComponent(name)}`,
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
    this.engines.get(applicationId)?.storage.close();
    this.engines.delete(applicationId);
    this.keyCache.delete(applicationId);
  }

  closeAll(): void {
    for (const engine of this.engines.values()) engine.storage.close();
    this.engines.clear();
  }
}
