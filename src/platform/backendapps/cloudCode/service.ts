import fs from 'node:fs';
import path from 'node:path';
import { homePaths } from '../../../config.js';
import { CloudLoadError } from '../../../data/cloud/types.js';
import { notFound, unavailable } from '../../../errors.js';
import type { Sql } from '../../../shared/sql.js';
import type { PublicUrls } from '../../urls.js';
import type { BackendApp, BackendAppService } from '../service.js';
import { applyPlan, type StepHook } from './apply.js';
import { packTree, unpackTree } from './archive.js';
import { dependencyManifest, LOCK_FILES, PACKAGE_JSON } from './dependencies.js';
import { prepareDependencies, type InstallLimits } from './installDependencies.js';
import { npmRegistry } from './npm.js';
import { ancestorsOf, CLOUD_ROOTS, onDisk, treeFolder } from './paths.js';
import { planDeploy, type CloudCodeChange, type DeployPlan } from './plan.js';
import { readTree, textOf } from './read.js';
import { templateFiles, type PublicAppFacts } from './template.js';
import { scanTree, type TreeState } from './tree.js';
import { CloudCodeVersions, summarise, type CloudCodeVersion } from './versions.js';
import { markVersion } from './treeSync.js';
import { deployWarnings } from './warnings.js';
import type { CloudCodeOperations } from '../../services.js';

/** What the cloud code service needs from the rest of the platform. */
export interface CloudCodeDeps {
  /** `BACKYARD_HOME`. */
  home: string;
  /** The platform store, which keeps each app's versions (versions.ts). */
  db: Sql;
  /** App lookup (`get` answers only the account's own apps) and keys. */
  apps: Pick<BackendAppService, 'get' | 'keys'>;
  /** Read per call: the public URL is known only once the HTTP listener is bound. */
  urls: Pick<PublicUrls, 'sdkScript' | 'dataApi'>;
  /** Loads the app's new cloud code in its worker (`CloudRuntime.reload`). */
  reload(appId: string): Promise<void>;
  /** How long a reload may take before the deploy answers without waiting for it (default 30 s). */
  reloadTimeoutMs?: number;
  /** Limits and environment of the npm runs that install `cloud/package.json`'s dependencies. */
  npm?: InstallLimits;
}

/** deployCloudCode's answer (spec, operation 11), and rollbackCloudCode's. */
export interface DeployResult {
  /** What changed, one line per change, then the version it made and whether the code was reloaded. */
  message: string;
  warnings: string[];
  /** The version the deploy made (versions.ts). */
  version: number;
}

/** What a deploy is, beyond its changes: a rollback's summary and its lifted change count limit. */
interface DeployKind {
  /** The version's `changes`; default: the summary of the change lines. */
  summary?: string;
  /** Most changes accepted; default `MAX_CHANGES`. */
  maxChanges?: number;
}

/** What the versions of an app made before versions were kept start from. */
const FIRST_KEPT = 'the files as they were when versions began to be kept';

/**
 * The cloud code files of Backend Apps: each app's tree
 * `apps/<appId>/cloud/` with its roots `cloud/` and `public/`, its starting files, deploys (all
 * changes or none, then a reload of the app's cloud code), reads, and the versions each deploy
 * keeps in the platform store, with rollbacks to them. Another account's app behaves as unknown
 * (docs/design.md, decision 2).
 */
export class CloudCodeService implements CloudCodeOperations {
  /** Deploys of one app run one after another. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Tests only: called before each step of a deploy's commit; throwing there simulates a failed step. */
  applyStepHook: StepHook | undefined;
  /** The registry npm installs from, asked once (a deployed lock file must resolve packages there). */
  private registry: Promise<string> | undefined;

  /** The kept versions of each app's tree. */
  private readonly versionStore: CloudCodeVersions;

  constructor(private readonly deps: CloudCodeDeps) {
    this.versionStore = new CloudCodeVersions(deps.db);
  }

  /** The tree folder of an app, `apps/<appId>/cloud`. */
  tree(appId: string): string {
    return treeFolder(homePaths(this.deps.home).app(appId));
  }

  /**
   * Writes the starting files of a new app into its folder `apps/<appId>/` (`BackendAppService`'s
   * `initialiseFolder`, called while the app's record is being inserted): `cloud/main.js` with an
   * example function and `public/index.html` with the app's application id, JavaScript key and data
   * API address (never its REST or master key). They are kept as the app's version 1.
   * @throws Error when the app's keys cannot be read or the files cannot be written (the app is then
   *   not created), or before the HTTP listener is bound (the public URL is unknown).
   */
  async initialise(appId: string, appFolder: string): Promise<void> {
    const keys = await this.deps.apps.keys(appId);
    if (!keys) throw new Error(`initialise: no record for app ${appId}`);
    const facts: PublicAppFacts = {
      applicationId: keys.applicationId,
      javascriptKey: keys.javascriptKey,
      apiURL: this.deps.urls.dataApi,
      sdkScriptUrl: this.deps.urls.sdkScript,
    };
    const tree = treeFolder(appFolder);
    const files = new Map<string, Buffer>();
    for (const [treePath, content] of Object.entries(templateFiles(facts))) {
      const file = onDisk(tree, treePath);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content, { flag: 'wx' });
      files.set(treePath, Buffer.from(content, 'utf8'));
    }
    // Called inside the transaction that inserts the app's record: the version goes with it.
    markVersion(appFolder, await this.versionStore.record(appId, await packTree(files), `the starting files: ${[...files.keys()].join(', ')}`));
  }

  /** The files of a tree as it is on disk (without `cloud/node_modules`). */
  private static filesOf(tree: string, state: TreeState = scanTree(tree)): Map<string, Buffer> {
    return new Map([...state.files.keys()].map((p) => [p, fs.readFileSync(onDisk(tree, p))]));
  }

  /** Keeps an app's tree as its version 1 when the app was made before versions were kept. */
  private async keepFirstVersion(appId: string): Promise<void> {
    if (await this.versionStore.any(appId)) return;
    const archive = await packTree(CloudCodeService.filesOf(this.tree(appId)));
    markVersion(homePaths(this.deps.home).app(appId), await this.versionStore.record(appId, archive, FIRST_KEPT, { onlyFirst: true }));
  }

  /** Runs `work` after the app's earlier deploys and rollbacks (this process's), one at a time. */
  private async serially<T>(appId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(appId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.queues.set(appId, settled);
    try {
      return await run;
    } finally {
      if (this.queues.get(appId) === settled) this.queues.delete(appId);
    }
  }

  private async requireApp(accountId: string, appId: string): Promise<BackendApp> {
    const app = await this.deps.apps.get(accountId, appId);
    if (!app) throw notFound(`No Backend App with appId "${appId}" exists in this account. List your apps with getBackendApps.`);
    return app;
  }

  /**
   * Applies `changes` to an app's tree, all or none, then reloads its cloud code unless a file under
   * `cloud/` has a syntax error (spec, operation 11 and "Rules for deployCloudCode").
   * The reload happens only when the deploy changed something under `cloud/`. Such a deploy first
   * installs the dependencies `cloud/package.json` names, as Back4App does, when they changed
   * (installDependencies.ts); if npm refuses them, nothing is changed. The tree after the deploy is
   * kept as the app's next version (versions.ts), recorded in the same transaction as the files are
   * put in place.
   *
   * @returns `message`, one line per change (`wrote cloud/main.js (append, 40 bytes added, now 352 bytes)`),
   *   a line naming the version and a line on the reload; `warnings`, the rules the tree breaks (see
   *   `deployWarnings`); `version`, the version made.
   * @throws ManagementError(notFound) (404) for an unknown or foreign app; ManagementError(invalid)
   *   (400) and ManagementError(forbidden) (403) as `planDeploy` says, and ManagementError(invalid)
   *   (400) with npm's reason or ManagementError(unavailable) (500) as `prepareDependencies` says,
   *   before anything is touched; the store's error when the version cannot be recorded (then
   *   nothing is changed either).
   */
  async deploy(accountId: string, appId: string, changes: readonly CloudCodeChange[], progress?: (message: string) => void): Promise<DeployResult> {
    await this.requireApp(accountId, appId);
    return this.serially(appId, () => this.deployNow(appId, changes, progress));
  }

  /**
   * getCloudCodeVersions: the app's kept versions, newest first. An app made before versions were
   * kept gets its tree as it is now kept as version 1 first.
   * @throws ManagementError(notFound) (404) for an unknown or foreign app.
   */
  async versions(accountId: string, appId: string): Promise<CloudCodeVersion[]> {
    await this.requireApp(accountId, appId);
    await this.keepFirstVersion(appId);
    return this.versionStore.list(appId);
  }

  /**
   * rollbackCloudCode: puts the files of a kept version back in place as a new version whose
   * `changes` is `rollback to version N`. It is a deploy (`deploy`'s path: dependencies installed,
   * the worker reloaded, the same warnings) of the difference between the tree now and that
   * version's: folders and files the version lacks are deleted, and each file that differs is
   * written back as it was. The per-call change count limit does not apply; the size limits do.
   * @returns as `deploy`, the new version in `version`.
   * @throws ManagementError(notFound) (404) for an unknown or foreign app, or a version the app does
   *   not keep (never made, or deleted as one of the oldest); as `deploy` otherwise.
   */
  async rollback(accountId: string, appId: string, version: number, progress?: (message: string) => void): Promise<DeployResult> {
    await this.requireApp(accountId, appId);
    return this.serially(appId, async () => {
      await this.keepFirstVersion(appId);
      const archive = await this.versionStore.archive(appId, version);
      if (!archive) {
        const kept = (await this.versionStore.list(appId)).map((v) => v.version);
        throw notFound(
          `version ${version} is not a kept version of the Backend App "${appId}"; it keeps ${kept.length === 1 ? 'version' : 'versions'} ${kept.join(', ')}. List them with getCloudCodeVersions.`,
        );
      }
      const changes = CloudCodeService.difference(scanTree(this.tree(appId)), this.tree(appId), await unpackTree(archive));
      return this.deployNow(appId, changes, progress, { summary: `rollback to version ${version}`, maxChanges: Infinity });
    });
  }

  /**
   * The changes that turn the tree `now` (on disk at `tree`) into `wanted`: first the outermost
   * folders and then the files that `wanted` lacks, then a write of each file that is missing or
   * differs.
   */
  private static difference(now: TreeState, tree: string, wanted: ReadonlyMap<string, Buffer>): CloudCodeChange[] {
    const wantedFolders = new Set<string>(CLOUD_ROOTS);
    for (const file of wanted.keys()) for (const folder of ancestorsOf(file)) wantedFolders.add(folder);
    const parent = (p: string) => p.slice(0, p.lastIndexOf('/'));
    const changes: CloudCodeChange[] = [];
    for (const folder of [...now.folders].sort()) {
      if (!wantedFolders.has(folder) && wantedFolders.has(parent(folder))) changes.push({ path: folder, operation: 'delete' });
    }
    for (const file of [...now.files.keys()].sort()) {
      if (!wanted.has(file) && wantedFolders.has(parent(file))) changes.push({ path: file, operation: 'delete' });
    }
    for (const file of [...wanted.keys()].sort()) {
      const content = wanted.get(file)!;
      const same = now.files.get(file) === content.length && fs.readFileSync(onDisk(tree, file)).equals(content);
      if (!same) changes.push({ path: file, operation: 'write', writeMode: 'overwrite', data: content });
    }
    return changes;
  }

  private async deployNow(appId: string, changes: readonly CloudCodeChange[], progress?: (message: string) => void, kind: DeployKind = {}): Promise<DeployResult> {
    const appFolder = homePaths(this.deps.home).app(appId);
    const tree = treeFolder(appFolder);
    await this.keepFirstVersion(appId);
    const before = scanTree(tree);
    const plan = planDeploy(before, changes, (p) => fs.readFileSync(onDisk(tree, p)), kind.maxChanges);
    // The tree as it will be, kept before anything is touched: a version exactly when its files are in place.
    const archive = await packTree(new Map([...plan.files].map(([p, file]) => [p, file.content ?? fs.readFileSync(onDisk(tree, p))])));
    const summary = kind.summary ?? summarise(plan.lines);
    const changedCloud = changes.some((c) => c.path.startsWith('cloud/') || c.path === 'cloud');
    let version = 0;
    // Dependencies are installed before any file is touched, so that a refused install changes nothing.
    const dependencies = changedCloud ? await this.prepareDependencies(appFolder, tree, plan, changes, progress) : undefined;
    try {
      dependencies?.commit();
      try {
        version = await this.versionStore.record(appId, archive, summary, { during: () => applyPlan(appFolder, tree, before, plan, this.applyStepHook) });
      } catch (error) {
        dependencies?.undo();
        throw error;
      }
    } finally {
      dependencies?.finish();
    }
    // Names the version on disk, so that other processes sharing this home unpack nothing (treeSync.ts).
    markVersion(appFolder, version);

    const read = (p: string) => {
      const content = plan.files.get(p)?.content ?? fs.readFileSync(onDisk(tree, p));
      return textOf(content) ?? '';
    };
    const { warnings, syntaxErrors } = deployWarnings(
      { files: [...plan.files.keys()], written: plan.written, created: plan.created, read },
      this.deps.urls.sdkScript,
    );
    const lines = plan.lines.length > 0 ? [...plan.lines] : ['No file changed.'];
    if (dependencies?.line) lines.push(dependencies.line);
    lines.push(`Kept as version ${version}${kind.summary ? ` (${kind.summary})` : ''}.`);
    if (!changedCloud) lines.push('Nothing under cloud/ changed, so the cloud code was not reloaded.');
    else if (syntaxErrors > 0) lines.push('The cloud code was not reloaded because of a syntax error (see warnings); the previous version keeps running.');
    else {
      progress?.(`Saved ${changes.length} change${changes.length === 1 ? '' : 's'}; reloading the cloud code.`);
      try {
        const limit = this.deps.reloadTimeoutMs ?? 30_000;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), limit);
        });
        const outcome = await Promise.race([this.deps.reload(appId).then(() => 'done' as const), late]).finally(() => clearTimeout(timer));
        if (outcome === 'late') {
          warnings.push(`The files were saved, but the cloud code was still loading after ${limit / 1000} s: check that cloud/main.js does not run a long task when it loads.`);
          lines.push('The cloud code reload did not finish in time (see warnings).');
        } else lines.push('The cloud code was reloaded.');
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (error instanceof CloudLoadError) {
          warnings.push(
            `The files were saved and the new cloud code replaced the old, but ${reason}. Until a deploy that loads, every function, job and trigger of this app answers 141 with that error: fix the file named there and deploy again.`,
          );
          lines.push('The new cloud code is live but failed to load: its functions, jobs and triggers fail until you fix it (see warnings).');
        } else {
          warnings.push(`The files were saved, but the cloud code could not be reloaded: ${reason}`);
          lines.push('The cloud code was not reloaded (see warnings).');
        }
      }
    }
    return { message: lines.join('\n'), warnings, version };
  }

  /**
   * The change of `cloud/node_modules` the tree after `plan` needs (installDependencies.ts): npm runs
   * here when `cloud/package.json`'s dependencies or its lock file changed.
   * @throws ManagementError(invalid) (400) for a bad package.json or lock file, or npm's refusal;
   *   ManagementError(unavailable) (500) when npm cannot run.
   */
  private async prepareDependencies(appFolder: string, tree: string, plan: DeployPlan, changes: readonly CloudCodeChange[], progress?: (message: string) => void) {
    const after = (p: string) => {
      const file = plan.files.get(p);
      if (!file) return undefined;
      return textOf(file.content ?? fs.readFileSync(onDisk(tree, p))) ?? '';
    };
    const registry = () => {
      this.registry ??= npmRegistry(appFolder, this.deps.npm?.env);
      return this.registry.catch((error: unknown) => {
        this.registry = undefined;
        throw unavailable(`The npm registry this server uses could not be read to check the lock file: ${(error as Error).message}`);
      });
    };
    const manifest = await dependencyManifest(after, registry);
    const named = [PACKAGE_JSON, ...LOCK_FILES] as string[];
    const mentioned = changes.some((c) => named.includes(c.path));
    return prepareDependencies(appFolder, tree, manifest, mentioned, this.deps.npm, progress);
  }

  /**
   * getCloudCode (spec, operation 12): a file's content, or a folder's listing
   * (format in `read.ts`).
   * @param treePath default: the whole tree (both roots).
   * @param recursive default true; ignored for a file.
   * @throws ManagementError(notFound) (404) for an unknown or foreign app or nothing at the path;
   *   ManagementError(invalid) (400) for a malformed path; ManagementError(forbidden) (403) for a
   *   path outside `cloud/` and `public/`.
   */
  async read(accountId: string, appId: string, treePath?: string, recursive = true): Promise<string> {
    await this.requireApp(accountId, appId);
    return readTree(this.tree(appId), treePath, recursive);
  }
}
