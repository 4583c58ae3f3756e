import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { homePaths } from '../../../config.js';
import type { CloudTrees } from '../../../data/cloud/runtime.js';
import type { Logger } from '../../../log.js';
import { unpackTree } from './archive.js';
import { dependencyManifest } from './dependencies.js';
import { installedHash, prepareDependencies, type InstallLimits } from './installDependencies.js';
import { npmRegistry } from './npm.js';
import { DEPENDENCIES_FOLDER, onDisk, treeFolder } from './paths.js';
import { textOf } from './read.js';
import type { CloudCodeVersions } from './versions.js';

/** The file beside an app's tree that names the version the tree on disk is: `apps/<appId>/cloud-version`. */
export const versionMarker = (appFolder: string): string => path.join(appFolder, 'cloud-version');

/** Writes the marker of the version now on disk (after a deploy put its files in place, or a sync). */
export function markVersion(appFolder: string, version: number): void {
  fs.mkdirSync(appFolder, { recursive: true });
  fs.writeFileSync(versionMarker(appFolder), `${version}\n`);
}

const markedVersion = (appFolder: string): number | undefined => {
  try {
    return Number(fs.readFileSync(versionMarker(appFolder), 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
};

/** How long an app's tree is taken as current without asking the store again (a missed announcement costs at most this). */
const RECHECK_MS = 10_000;
/** How long after a failed sync the tree on disk is used as it is before trying again. */
const RETRY_MS = 10_000;

/**
 * Puts each app's active cloud code version (versions.ts, in the platform store) on this home's disk
 * before its cloud code runs or its site is served, for nodes that share a PostgreSQL database but
 * not a home (BACKYARD_ROLE): the archive is unpacked into a staging folder beside the tree, the
 * dependencies `cloud/package.json` names are installed there (or the installed folder kept when its
 * manifest is the same), and the staging folder then replaces the tree. A marker file
 * (`cloud-version`) names the version on disk, so a node whose home the deploy itself wrote (one
 * home shared by several processes) unpacks nothing.
 *
 * `ready` is answered from memory: true for RECHECK_MS after the version on disk was found to be
 * the active one, false after `stale` (another process announced a deploy: `cloud_deployed`).
 */
export class CloudTreeSync implements CloudTrees {
  private readonly checked = new Map<string, number>();
  private readonly pending = new Map<string, Promise<void>>();
  private registry: Promise<string> | undefined;

  constructor(
    private readonly versions: Pick<CloudCodeVersions, 'active' | 'archive'>,
    private readonly home: string,
    private readonly log: Logger,
    private readonly npm?: InstallLimits,
  ) {}

  ready(appId: string): boolean {
    const at = this.checked.get(appId);
    if (at === undefined) return false;
    // Past the recheck, the tree on disk serves while the store is asked again in the background.
    if (Date.now() - at > RECHECK_MS && !this.pending.has(appId)) void this.prepare(appId).catch(() => undefined);
    return true;
  }

  /** Forgets that the app's tree is current: the next call waits for `prepare` (a deploy was announced). */
  stale(appId: string | undefined): void {
    if (appId === undefined) this.checked.clear();
    else this.checked.delete(appId);
  }

  prepare(appId: string): Promise<void> {
    let pending = this.pending.get(appId);
    if (!pending) {
      pending = this.sync(appId).finally(() => this.pending.delete(appId));
      this.pending.set(appId, pending);
    }
    return pending;
  }

  private async sync(appId: string): Promise<void> {
    const appFolder = homePaths(this.home).app(appId);
    try {
      const active = await this.versions.active(appId);
      // No version kept (an app made before versions were, not deployed since): the tree on disk is all there is.
      if (active !== undefined && markedVersion(appFolder) !== active) await this.unpack(appId, appFolder, active);
      this.checked.set(appId, Date.now());
    } catch (error) {
      this.log.error({ err: error, app: appId }, 'the active cloud code version could not be put in place: the tree on disk keeps serving');
      this.checked.set(appId, Date.now() - RECHECK_MS + RETRY_MS);
    }
  }

  private async unpack(appId: string, appFolder: string, version: number): Promise<void> {
    const archive = await this.versions.archive(appId, version);
    if (!archive) return; // pruned meanwhile: a newer one is active, found at the next check
    const files = await unpackTree(archive);
    const tree = treeFolder(appFolder);
    const staging = path.join(appFolder, `.cloud-sync-${randomBytes(6).toString('hex')}`);
    try {
      for (const [treePath, content] of files) {
        const file = onDisk(staging, treePath);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, content);
      }
      for (const root of ['cloud', 'public']) fs.mkdirSync(path.join(staging, root), { recursive: true });
      const manifest = await dependencyManifest((p) => {
        const content = files.get(p);
        return content === undefined ? undefined : (textOf(content) ?? '');
      }, () => (this.registry ??= npmRegistry(appFolder, this.npm?.env)));
      const live = onDisk(tree, DEPENDENCIES_FOLDER);
      if (manifest && fs.existsSync(live) && installedHash(tree) === manifest.hash) {
        // The same dependencies as the tree on disk: its installed folder moves along, npm does not run.
        fs.renameSync(live, onDisk(staging, DEPENDENCIES_FOLDER));
      } else if (manifest) {
        const change = await prepareDependencies(appFolder, staging, manifest, false, this.npm);
        try {
          change.commit();
        } finally {
          change.finish();
        }
      }
      const aside = `${staging}-old`;
      if (fs.existsSync(tree)) fs.renameSync(tree, aside);
      fs.renameSync(staging, tree);
      fs.rmSync(aside, { recursive: true, force: true });
      markVersion(appFolder, version);
      this.log.info({ app: appId, version }, 'cloud code version put in place from the platform store');
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  }
}
