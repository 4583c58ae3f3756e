import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { invalid, unavailable } from '../../../errors.js';
import type { DependencyManifest } from './dependencies.js';
import { NpmFailure, runNpm } from './npm.js';
import { DEPENDENCIES_FOLDER, onDisk } from './paths.js';

/**
 * Installs a deploy's npm dependencies (dependencies.ts) into `cloud/node_modules`, beside
 * `cloud/package.json`, where the worker's `require` finds them and the sandbox's read-only bind of
 * the tree covers them. npm runs in a staging folder of the app's folder, so a failed install
 * leaves the running code and its packages as they were; the new folder is renamed into place only
 * when the deploy commits. A marker in the folder keeps the manifest's hash: a deploy whose
 * manifest hashes the same reuses the folder without running npm.
 */

/** Prefix of the staging folders of installs, in the app's folder (not the deploy's `.cloud-deploy-`). */
export const DEPENDENCY_STAGING_PREFIX = '.cloud-deps-';
/** The marker file in `cloud/node_modules`: `{ hash, installedAt, command }`. */
export const INSTALL_MARKER = '.backyard-dependencies.json';

/** Limits of one npm run (see `runNpm`). */
export interface InstallLimits {
  /** Default 300 s. */
  timeoutMs?: number;
  /** Default 64 KiB. */
  maxOutputBytes?: number;
  /** The environment npm's is made from (default `process.env`; see `npmEnvironment`). */
  env?: NodeJS.ProcessEnv;
}

/** A change of `cloud/node_modules` prepared for a deploy: nothing is touched until `commit`. */
export interface DependencyChange {
  /** A line for the deploy's message, if the deploy has something to say about its dependencies. */
  line: string | undefined;
  /** Puts the new folder in place (the old one is kept aside); synchronous, renames only. */
  commit(): void;
  /** Undoes `commit` (the deploy's files could not be written). */
  undo(): void;
  /** Deletes the staging folder and with it the old packages. */
  finish(): void;
}

/** The hash of the manifest the installed folder was made from, undefined when Backyard did not make it. */
export function installedHash(tree: string): string | undefined {
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(onDisk(tree, DEPENDENCIES_FOLDER), INSTALL_MARKER), 'utf8')) as { hash?: unknown };
    return typeof marker.hash === 'string' ? marker.hash : undefined;
  } catch {
    return undefined;
  }
}

const nothing: DependencyChange = { line: undefined, commit: () => undefined, undo: () => undefined, finish: () => undefined };

/** npm codes that say the manifest or the lock file is wrong, not the server or its network. */
const CALLER_CODES = new Set(['E404', 'ETARGET', 'ERESOLVE', 'EUSAGE', 'EJSONPARSE', 'EINVALIDPACKAGENAME', 'EINVALIDTAGNAME', 'EINTEGRITY', 'EBADPLATFORM', 'EBADENGINE', 'E403', 'E401', 'ELOCKVERIFY']);

/**
 * Prepares `cloud/node_modules` for the tree a deploy leaves: runs npm in a staging folder when
 * `manifest`'s hash differs from the installed one, plans the removal of a folder Backyard installed
 * when the tree no longer names dependencies, and otherwise changes nothing.
 *
 * @param appFolder `apps/<appId>/`, where the staging folder is made (same file system as the tree).
 * @param mentioned whether the deploy wrote or deleted `cloud/package.json` or a lock file: then the
 *   answer says what became of the dependencies even when nothing changed.
 * @param progress told when npm starts (an install takes seconds to minutes).
 * @throws ManagementError(invalid) (400) with npm's reason when npm refuses the manifest (a package
 *   or version that does not exist, a lock file out of step with package.json, ...);
 *   ManagementError(unavailable) (500) when npm cannot run, reach its registry or finish in time.
 */
export async function prepareDependencies(
  appFolder: string,
  tree: string,
  manifest: DependencyManifest | undefined,
  mentioned: boolean,
  limits: InstallLimits = {},
  progress?: (message: string) => void,
): Promise<DependencyChange> {
  const target = onDisk(tree, DEPENDENCIES_FOLDER);
  const installed = installedHash(tree);
  removeStaleInstalls(appFolder);
  if (!manifest) {
    // A folder Backyard did not install (uploaded before deploys refused it) is the app's own: left alone.
    if (installed === undefined) return nothing;
    const staging = makeStaging(appFolder);
    const aside = path.join(staging, 'old');
    return {
      line: `removed ${DEPENDENCIES_FOLDER}/: cloud/package.json names no dependencies any more`,
      commit: () => fs.renameSync(target, aside),
      undo: () => fs.renameSync(aside, target),
      finish: () => fs.rmSync(staging, { recursive: true, force: true }),
    };
  }
  const source = manifest.lock ? manifest.lock.treePath : 'cloud/package.json';
  if (manifest.hash === installed) {
    return { ...nothing, line: mentioned ? `dependencies unchanged (same ${source}): kept ${DEPENDENCIES_FOLDER}/ without running npm` : undefined };
  }

  const staging = makeStaging(appFolder);
  const fail = (error: unknown): never => {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!(error instanceof NpmFailure)) throw error;
    const what = `npm could not install the dependencies of ${source}`;
    const after = 'Nothing was changed: the previous cloud code and its packages keep running.';
    if (error.code && CALLER_CODES.has(error.code)) {
      throw invalid(`${what}: ${error.message}\n${after} Fix the package names and versions in cloud/package.json${manifest.lock ? ` (and deploy a matching ${manifest.lock.treePath}, or delete it)` : ''} and deploy again.`);
    }
    throw unavailable(`${what}: ${error.message}\n${after} Try the deploy again; if it keeps failing, the server's npm or its registry is not working.`);
  };
  const fresh = path.join(staging, 'install');
  const command = manifest.lock ? 'ci' : 'install';
  const counted = `${manifest.count} ${manifest.count === 1 ? 'dependency' : 'dependencies'}`;
  progress?.(`Installing ${counted} of cloud/package.json (npm ${command}).`);
  try {
    fs.mkdirSync(fresh);
    fs.writeFileSync(path.join(fresh, 'package.json'), manifest.packageJson);
    if (manifest.lock) fs.writeFileSync(path.join(fresh, path.posix.basename(manifest.lock.treePath)), manifest.lock.text);
    // Scripts off: npm runs on the server, outside the sandbox, and no package's code may run there.
    await runNpm([command, '--ignore-scripts', '--omit=dev', '--no-audit', '--no-fund', '--no-progress', '--prefix', fresh], {
      folder: fresh,
      timeoutMs: limits.timeoutMs ?? 300_000,
      maxOutputBytes: limits.maxOutputBytes ?? 64 * 1024,
      env: limits.env,
    });
    const modules = path.join(fresh, 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    fs.writeFileSync(path.join(modules, INSTALL_MARKER), `${JSON.stringify({ hash: manifest.hash, installedAt: new Date().toISOString(), command: `npm ${command}` })}\n`);
  } catch (error) {
    return fail(error);
  }
  const modules = path.join(fresh, 'node_modules');
  const aside = path.join(staging, 'old');
  let hadOld = false;
  return {
    line: `installed ${counted} of cloud/package.json into ${DEPENDENCIES_FOLDER}/ (npm ${command}${manifest.lock ? ` with ${manifest.lock.treePath}` : ''})`,
    commit: () => {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      hadOld = fs.existsSync(target);
      if (hadOld) fs.renameSync(target, aside);
      try {
        fs.renameSync(modules, target);
      } catch (error) {
        if (hadOld) fs.renameSync(aside, target);
        throw error;
      }
    },
    undo: () => {
      fs.renameSync(target, modules);
      if (hadOld) fs.renameSync(aside, target);
    },
    finish: () => fs.rmSync(staging, { recursive: true, force: true }),
  };
}

function makeStaging(appFolder: string): string {
  const staging = path.join(appFolder, `${DEPENDENCY_STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(staging, { recursive: true });
  return staging;
}

/** Removes staging folders of installs that were interrupted (the process died mid-way). */
function removeStaleInstalls(appFolder: string): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(appFolder);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(DEPENDENCY_STAGING_PREFIX)) fs.rmSync(path.join(appFolder, name), { recursive: true, force: true });
}
