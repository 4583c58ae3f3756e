import fs from 'node:fs';
import { homePaths } from '../../config.js';
import { invalid, ManagementError, notFound } from '../../errors.js';
import type { Sql } from '../../shared/sql.js';
import { nowIso } from '../../shared/sqlite.js';
import { randomAlphanumeric, randomSecret } from '../../shared/ids.js';
import type { PublicUrls } from '../urls.js';
import type { AppKeys } from '../../data/apps.js';
import { changeSettings, resolveSettings, SettingsError, type ServerSettings, type SettingOverrides } from '../../data/settings.js';
import type { BackendAppOperations } from '../services.js';

/** Every key of a Backend App (spec, Interface B, "Authentication": the eight key kinds). */
export type BackendAppKeys = AppKeys;

/** The list form of a Backend App (spec, "BackendApp": only `appId` and `appName`). */
export interface BackendAppSummary {
  appId: string;
  appName: string;
}

/**
 * The full form of a Backend App as Interface A returns it. The master, webhook and file keys are
 * never part of it (docs/design.md, decision 7).
 */
export interface BackendApp extends BackendAppSummary {
  dashboardURL: string;
  apiURL: string;
  restKey: string;
  javascriptKey: string;
  clientKey: string;
  dotnetKey: string;
  /** Empty until web hosting is activated. */
  publicWebHostingURL: string;
}

/** Imported keys (an existing Parse app's): printable, no spaces, quotes or slashes (they travel in headers and paths). */
const KEY_PATTERN = /^[!#-&(-.0-~]{1,200}$/;

/** App names: 1 to 63 characters, unique per account. */
export const APP_NAME_MAX = 63;

interface AppRow {
  app_id: string;
  account_id: string;
  app_name: string;
  rest_key: string;
  javascript_key: string;
  client_key: string;
  dotnet_key: string;
  webhook_key: string;
  file_key: string;
  master_key: string;
  hosting_subdomain: string | null;
  /** The server options the owner set (data/settings.ts), JSON in Parse Server's nested shape. */
  server_settings: string;
  created_at: string;
}

/** An app's server options: those in force, and those its owner set (the rest are defaults). */
export interface AppServerSettings {
  settings: ServerSettings;
  overrides: SettingOverrides;
}

/** The options in force from a stored row; a row this build cannot read falls back to the defaults rather than failing every request. */
function storedSettings(json: string): AppServerSettings {
  try {
    const overrides = JSON.parse(json) as SettingOverrides;
    return { settings: resolveSettings(overrides), overrides };
  } catch {
    return { settings: resolveSettings({}), overrides: {} };
  }
}

/** A refused server option: ManagementError(invalid) that also names the option (`key`, dotted), so a form can mark its field. */
export class SettingRefused extends ManagementError {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super('invalid', message);
  }
}

/** Applies changes to the stored options. @throws SettingRefused naming the refused option. */
function changed(current: SettingOverrides, changes: Record<string, unknown>): AppServerSettings {
  try {
    return changeSettings(current, changes);
  } catch (error) {
    if (error instanceof SettingsError) throw new SettingRefused(error.key, `${error.message} Nothing was changed.`);
    throw error;
  }
}

/**
 * Backend App records: creation with fresh keys and a data folder, listing and lookup, always within
 * one account (another account's apps behave as unknown).
 */
export class BackendAppService implements BackendAppOperations {
  constructor(
    private readonly db: Sql,
    private readonly home: string,
    private readonly urls: PublicUrls,
    /** Fills a new app's folder (its starting cloud code tree); runs before the record commits. */
    private readonly initialiseFolder: (appId: string, folder: string) => Promise<void> = async () => undefined,
    /** Lets go of a deleted app: stops its cloud code workers and closes its open database. */
    private readonly release: (appId: string) => Promise<void> = async () => undefined,
    /** Tells this process's data API that an app's server options changed (other processes re-read them: data/apps.ts). */
    private readonly settingsChanged: (appId: string) => Promise<void> = async () => undefined,
  ) {}

  /**
   * Creates an app named `appName` for `accountId`: new application id and keys (192 random bits
   * each, base64url) unless `given` (`backyard app import`, docs/design.md, decision 7), and the folder
   * `apps/<appId>/`, with server options `settings` (`backyard app import`: dotted names or Parse's
   * nested shape, as `configure` takes them) and the defaults for the rest.
   * @throws ManagementError(invalid) when the name is empty, too long or already used by the account,
   *   a given key is malformed, a setting is unknown or invalid, or the application id is taken.
   */
  async create(accountId: string, appName: string, given: Partial<BackendAppKeys> = {}, settings: Record<string, unknown> = {}): Promise<BackendApp> {
    if (appName.trim() === '') throw invalid('appName must not be empty or blank.');
    if ([...appName].length > APP_NAME_MAX) {
      throw invalid(`appName must be at most ${APP_NAME_MAX} characters long; "${appName.slice(0, 20)}…" is ${[...appName].length}.`);
    }
    for (const [name, value] of Object.entries(given)) {
      if (value !== undefined && !KEY_PATTERN.test(value)) {
        throw invalid(`${name} must be 1 to 200 printable characters without spaces, quotes or slashes.`);
      }
    }
    const { overrides } = changed({}, settings);
    // Application ids are letters and digits only: one starting with - or _ reads as an option on a
    // command line (`backyard app keys -Ab3…`). Keys keep the base64url alphabet.
    const key = (k: keyof BackendAppKeys) => given[k] ?? (k === 'applicationId' ? randomAlphanumeric(32) : randomSecret(24));
    const row: AppRow = {
      app_id: key('applicationId'),
      account_id: accountId,
      app_name: appName,
      rest_key: key('restKey'),
      javascript_key: key('javascriptKey'),
      client_key: key('clientKey'),
      dotnet_key: key('dotnetKey'),
      webhook_key: key('webhookKey'),
      file_key: key('fileKey'),
      master_key: key('masterKey'),
      hosting_subdomain: null,
      server_settings: JSON.stringify(overrides),
      created_at: nowIso(),
    };
    const folder = homePaths(this.home).app(row.app_id);
    const existed = fs.existsSync(folder);
    try {
      await this.insertWithFolder(row, folder, accountId, appName);
    } catch (error) {
      // Nothing half-written: a folder this call made goes with the record that was rolled back.
      if (!existed) fs.rmSync(folder, { recursive: true, force: true });
      throw error;
    }
    return this.toFull(row);
  }

  private async insertWithFolder(row: AppRow, folder: string, accountId: string, appName: string): Promise<void> {
    await this.db.transaction(async () => {
        const taken = await this.db.get('SELECT 1 FROM backend_apps WHERE account_id = ? AND app_name = ?', accountId, appName);
        if (await this.row(row.app_id)) throw invalid(`A Backend App with the application id "${row.app_id}" already exists on this Backyard.`);
        if (taken) {
          throw invalid(`A Backend App named "${appName}" already exists in this account. Choose another appName, or use getBackendApps to find the existing one.`);
        }
        await this.db.run(`INSERT INTO backend_apps (app_id, account_id, app_name, rest_key, javascript_key, client_key, dotnet_key,
               webhook_key, file_key, master_key, hosting_subdomain, server_settings, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          row.app_id, row.account_id, row.app_name, row.rest_key, row.javascript_key, row.client_key, row.dotnet_key,
          row.webhook_key, row.file_key, row.master_key, row.hosting_subdomain, row.server_settings, row.created_at,
        );
        // Inside the transaction: if the folder cannot be made, no record is left behind.
        fs.mkdirSync(folder, { recursive: true });
        await this.initialiseFolder(row.app_id, folder);
    });
  }

  /** The account's apps in creation order, optionally only the one named exactly `appName`. */
  async list(accountId: string, appName?: string): Promise<BackendAppSummary[]> {
    const rows = (
      appName === undefined
        ? (await this.db.all('SELECT app_id, app_name FROM backend_apps WHERE account_id = ? ORDER BY created_at, app_id', accountId))
        : (await this.db.all('SELECT app_id, app_name FROM backend_apps WHERE account_id = ? AND app_name = ?', accountId, appName))
    ) as Pick<AppRow, 'app_id' | 'app_name'>[];
    return rows.map((r) => ({ appId: r.app_id, appName: r.app_name }));
  }

  /** The full form of one of the account's apps, or undefined when the account has no such app. */
  async get(accountId: string, appId: string): Promise<BackendApp | undefined> {
    const row = await this.row(appId);
    return row && row.account_id === accountId ? this.toFull(row) : undefined;
  }

  /**
   * Gives one of the account's apps a hosting subdomain (spec, rule for activateWebHosting), made
   * from its name (lowercase letters, digits and dashes, at most 40) with a number added when taken;
   * an app that has one keeps it.
   * @returns the app's `publicWebHostingURL`, or undefined when the account has no such app.
   */
  async activateHosting(accountId: string, appId: string): Promise<string | undefined> {
    return this.db.transaction(async () => {
        const row = await this.row(appId);
        if (!row || row.account_id !== accountId) return undefined;
        if (row.hosting_subdomain) return this.urls.hosting(row.hosting_subdomain);
        const base =
          row.app_name
            .normalize('NFKD')
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-+|-+$/g, '')
            .slice(0, 40)
            .replace(/-+$/, '') || 'app';
        // One subdomain namespace with Web Apps (migration 5 guards it too).
        const taken = (sub: string) => this.db.get('SELECT 1 FROM backend_apps WHERE hosting_subdomain = ? UNION ALL SELECT 1 FROM web_apps WHERE subdomain = ?', sub, sub);
        let sub = base;
        for (let n = 2; await taken(sub); n++) sub = `${base}-${n}`;
        await this.db.run('UPDATE backend_apps SET hosting_subdomain = ? WHERE app_id = ?', sub, appId);
        return this.urls.hosting(sub);
    });
  }

  /**
   * deleteBackendApp: removes one of the account's apps for good: its record, keys and hosting
   * subdomain (one transaction: from then on its keys and subdomain are unknown), then its cloud code
   * workers and open database (`release`), then its folder (data.db, files, cloud code tree).
   * @throws ManagementError(notFound) when the account has no such app (another account's included).
   */
  async delete(accountId: string, appId: string): Promise<void> {
    const deleted = await this.db.transaction(async () => {
      const row = await this.row(appId);
      if (!row || row.account_id !== accountId) return false;
      await this.db.run('DELETE FROM backend_apps WHERE app_id = ?', appId);
      return true;
    });
    if (!deleted) throw notFound(`This account has no Backend App with the id "${appId}". Find the ids with getBackendApps.`);
    await this.release(appId);
    fs.rmSync(homePaths(this.home).app(appId), { recursive: true, force: true, maxRetries: 3 });
  }

  /** The account that owns an app, whoever asks: for the machine's owner (CLI). */
  async owner(appId: string): Promise<string | undefined> {
    return (await this.row(appId))?.account_id;
  }

  /** The application id of the app hosted at `subdomain`, if any. */
  async hostedApp(subdomain: string): Promise<string | undefined> {
    const row = (await this.db.get('SELECT app_id FROM backend_apps WHERE hosting_subdomain = ?', subdomain)) as { app_id: string } | undefined;
    return row?.app_id;
  }

  /** Every key of an app, master key included, whoever owns it: for the machine's owner (CLI). */
  async keys(appId: string): Promise<(BackendAppKeys & { appName: string }) | undefined> {
    const row = await this.row(appId);
    if (!row) return undefined;
    return {
      appName: row.app_name,
      applicationId: row.app_id,
      restKey: row.rest_key,
      javascriptKey: row.javascript_key,
      clientKey: row.client_key,
      dotnetKey: row.dotnet_key,
      webhookKey: row.webhook_key,
      fileKey: row.file_key,
      masterKey: row.master_key,
    };
  }

  /**
   * An app's server options (data/settings.ts), whoever owns it: for the data API (AppDirectory,
   * cached there), the machine's owner (CLI) and the dashboard (which checks ownership first).
   * @returns undefined when no app has this id.
   */
  async serverSettings(appId: string): Promise<AppServerSettings | undefined> {
    const row = await this.row(appId);
    return row ? storedSettings(row.server_settings) : undefined;
  }

  /** The server options in force for an app (AppDirectory), or undefined when no app has this id. */
  async settings(appId: string): Promise<ServerSettings | undefined> {
    return (await this.serverSettings(appId))?.settings;
  }

  /**
   * Changes an app's server options: `changes` maps dotted names (`maxLimit`,
   * `fileUpload.enableForPublic`) to values, null putting one back to its default. All or nothing;
   * this process's data API sees the change at once, another process's within a second.
   * @returns the options now in force and those set.
   * @throws ManagementError(notFound) for an unknown app; SettingRefused (invalid) naming an unknown
   *   option or a bad value, with nothing changed.
   */
  async configure(appId: string, changes: Record<string, unknown>): Promise<AppServerSettings> {
    const result = await this.db.transaction(async () => {
      const row = await this.row(appId);
      if (!row) throw notFound(`No Backend App has the application id "${appId}".`);
      const next = changed(storedSettings(row.server_settings).overrides, changes);
      await this.db.run('UPDATE backend_apps SET server_settings = ? WHERE app_id = ?', JSON.stringify(next.overrides), appId);
      return next;
    });
    await this.settingsChanged(appId);
    return result;
  }

  private row(appId: string): Promise<AppRow | undefined> {
    return this.db.get<AppRow>('SELECT * FROM backend_apps WHERE app_id = ?', appId);
  }

  private toFull(row: AppRow): BackendApp {
    return {
      appId: row.app_id,
      appName: row.app_name,
      dashboardURL: this.urls.backendAppDashboard(row.app_id),
      apiURL: this.urls.dataApi,
      restKey: row.rest_key,
      javascriptKey: row.javascript_key,
      clientKey: row.client_key,
      dotnetKey: row.dotnet_key,
      publicWebHostingURL: row.hosting_subdomain ? this.urls.hosting(row.hosting_subdomain) : '',
    };
  }
}
