import type { Sql } from '../../../shared/sql.js';
import { nowIso } from '../../../shared/sqlite.js';

/** Most versions kept per app; older ones are deleted when a new one is recorded (never the active one). */
export const MAX_VERSIONS = 50;

/** Longest `changes` summary kept, in characters; longer ones name the first changes and how many more. */
const MAX_SUMMARY_CHARS = 500;

/** One kept version of an app's cloud code tree, as getCloudCodeVersions answers it. */
export interface CloudCodeVersion {
  /** 1, 2, 3… per app, in the order they were made. */
  version: number;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** What made it: a deploy's changes (`wrote cloud/main.js (…); deleted public/x.html (…)`) or `rollback to version N`. */
  changes: string;
  /** Whether this version's files are the ones in place (the newest version). */
  active: boolean;
}

interface VersionRow {
  version: number;
  created_at: string;
  changes: string;
  active: number;
}

/**
 * A deploy's change lines as one short summary: joined with `; `, and past 500 characters cut
 * after the last line that fits, with how many more there were.
 */
export function summarise(lines: readonly string[]): string {
  const all = lines.join('; ');
  if (all.length <= MAX_SUMMARY_CHARS) return all;
  let kept = 0;
  let length = 0;
  while (kept < lines.length && length + lines[kept]!.length + 2 <= MAX_SUMMARY_CHARS - 20) length += lines[kept++]!.length + 2;
  return `${lines.slice(0, kept).join('; ')}; … and ${lines.length - kept} more`;
}

/**
 * The kept versions of every app's cloud code tree, in the platform store (table
 * `cloud_code_versions`, migration 12 on SQLite and PostgreSQL): each a gzipped tar of the tree
 * (archive.ts), numbered per app, one of them active. A row goes with its app (ON DELETE CASCADE).
 */
export class CloudCodeVersions {
  constructor(private readonly db: Sql) {}

  /** Whether any version of the app is kept. */
  async any(appId: string): Promise<boolean> {
    return (await this.db.get('SELECT 1 AS one FROM cloud_code_versions WHERE app_id = ? LIMIT 1', appId)) !== undefined;
  }

  /**
   * Records `archive` as the app's next version and makes it the active one; then deletes the
   * oldest beyond `MAX_VERSIONS`. `during` runs inside the same transaction, after the row is
   * written: when it throws, nothing is recorded (a deploy puts its files in place there, so that a
   * version exists exactly when its files were put in place).
   * @param onlyFirst record only when the app has no version yet (the tree of an app made before
   *   versions were kept); answers the existing newest version otherwise.
   * @returns the version's number.
   * @throws the store's error (ManagementError(unavailable) when PostgreSQL cannot be reached), or
   *   what `during` throws.
   */
  async record(appId: string, archive: Buffer, changes: string, options: { onlyFirst?: boolean; during?: () => void } = {}): Promise<number> {
    return this.db.transaction(async () => {
      const newest = (await this.db.get<{ v: number | null }>('SELECT MAX(version) AS v FROM cloud_code_versions WHERE app_id = ?', appId))?.v ?? 0;
      if (options.onlyFirst && newest > 0) return newest;
      const version = newest + 1;
      await this.db.run('UPDATE cloud_code_versions SET active = 0 WHERE app_id = ? AND active = 1', appId);
      await this.db.run(
        'INSERT INTO cloud_code_versions (app_id, version, created_at, changes, archive, active) VALUES (?, ?, ?, ?, ?, 1)',
        appId,
        version,
        nowIso(),
        changes,
        archive,
      );
      await this.db.run(
        `DELETE FROM cloud_code_versions WHERE app_id = ? AND active = 0
           AND version NOT IN (SELECT version FROM cloud_code_versions WHERE app_id = ? ORDER BY version DESC LIMIT ?)`,
        appId,
        appId,
        MAX_VERSIONS,
      );
      options.during?.();
      return version;
    });
  }

  /** The app's kept versions, newest first. */
  async list(appId: string): Promise<CloudCodeVersion[]> {
    const rows = await this.db.all<VersionRow>(
      'SELECT version, created_at, changes, active FROM cloud_code_versions WHERE app_id = ? ORDER BY version DESC',
      appId,
    );
    return rows.map((r) => ({ version: Number(r.version), createdAt: r.created_at, changes: r.changes, active: Number(r.active) === 1 }));
  }

  /** The number of the app's active version, or undefined when none is kept. */
  async active(appId: string): Promise<number | undefined> {
    const row = await this.db.get<{ version: number }>('SELECT version FROM cloud_code_versions WHERE app_id = ? AND active = 1', appId);
    return row ? Number(row.version) : undefined;
  }

  /** The archive of one version, or undefined when the app has no such version (never made, or pruned). */
  async archive(appId: string, version: number): Promise<Buffer | undefined> {
    const row = await this.db.get<{ archive: Buffer }>('SELECT archive FROM cloud_code_versions WHERE app_id = ? AND version = ?', appId, version);
    return row ? Buffer.from(row.archive) : undefined;
  }
}
