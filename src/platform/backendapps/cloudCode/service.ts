import fs from 'node:fs';
import path from 'node:path';
import { homePaths } from '../../../config.js';
import { CloudLoadError } from '../../../data/cloud/types.js';
import { notFound, unavailable } from '../../../errors.js';
import type { PublicUrls } from '../../urls.js';
import type { BackendApp, BackendAppService } from '../service.js';
import { applyPlan, type StepHook } from './apply.js';
import { dependencyManifest, LOCK_FILES, PACKAGE_JSON } from './dependencies.js';
import { prepareDependencies, type InstallLimits } from './installDependencies.js';
import { npmRegistry } from './npm.js';
import { onDisk, treeFolder } from './paths.js';
import { planDeploy, type CloudCodeChange, type DeployPlan } from './plan.js';
import { readTree, textOf } from './read.js';
import { templateFiles, type PublicAppFacts } from './template.js';
import { scanTree } from './tree.js';
import { deployWarnings } from './warnings.js';
import type { CloudCodeOperations } from '../../services.js';

/** What the cloud code service needs from the rest of the platform. */
export interface CloudCodeDeps {
  /** `BACKYARD_HOME`. */
  home: string;
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

/** deployCloudCode's answer (spec, operation 11). */
export interface DeployResult {
  /** What changed, one line per change, then whether the code was reloaded. */
  message: string;
  warnings: string[];
}

/**
 * The cloud code files of Backend Apps: each app's tree
 * `apps/<appId>/cloud/` with its roots `cloud/` and `public/`, its starting files, deploys (all
 * changes or none, then a reload of the app's cloud code) and reads. Another account's app behaves
 * as unknown (design.md, decision 2).
 */
export class CloudCodeService implements CloudCodeOperations {
  /** Deploys of one app run one after another. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Tests only: called before each step of a deploy's commit; throwing there simulates a failed step. */
  applyStepHook: StepHook | undefined;
  /** The registry npm installs from, asked once (a deployed lock file must resolve packages there). */
  private registry: Promise<string> | undefined;

  constructor(private readonly deps: CloudCodeDeps) {}

  /** The tree folder of an app, `apps/<appId>/cloud`. */
  tree(appId: string): string {
    return treeFolder(homePaths(this.deps.home).app(appId));
  }

  /**
   * Writes the starting files of a new app into its folder `apps/<appId>/` (`BackendAppService`'s
   * `initialiseFolder`, called while the app's record is being inserted): `cloud/main.js` with an
   * example function and `public/index.html` with the app's application id, JavaScript key and data
   * API address (never its REST or master key).
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
    for (const [treePath, content] of Object.entries(templateFiles(facts))) {
      const file = onDisk(tree, treePath);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content, { flag: 'wx' });
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
   * (installDependencies.ts); if npm refuses them, nothing is changed.
   *
   * @returns `message`, one line per change (`wrote cloud/main.js (append, 40 bytes added, now 352 bytes)`)
   *   and a line on the reload; `warnings`, the rules the tree breaks (see `deployWarnings`).
   * @throws ManagementError(notFound) (404) for an unknown or foreign app; ManagementError(invalid)
   *   (400) and ManagementError(forbidden) (403) as `planDeploy` says, and ManagementError(invalid)
   *   (400) with npm's reason or ManagementError(unavailable) (500) as `prepareDependencies` says,
   *   before anything is touched.
   */
  async deploy(accountId: string, appId: string, changes: readonly CloudCodeChange[], progress?: (message: string) => void): Promise<DeployResult> {
    await this.requireApp(accountId, appId);
    const previous = this.queues.get(appId) ?? Promise.resolve();
    const run = previous.then(
      () => this.deployNow(appId, changes, progress),
      () => this.deployNow(appId, changes, progress),
    );
    const settled = run.catch(() => undefined);
    this.queues.set(appId, settled);
    try {
      return await run;
    } finally {
      if (this.queues.get(appId) === settled) this.queues.delete(appId);
    }
  }

  private async deployNow(appId: string, changes: readonly CloudCodeChange[], progress?: (message: string) => void): Promise<DeployResult> {
    const appFolder = homePaths(this.deps.home).app(appId);
    const tree = treeFolder(appFolder);
    const before = scanTree(tree);
    const plan = planDeploy(before, changes, (p) => fs.readFileSync(onDisk(tree, p)));
    const changedCloud = changes.some((c) => c.path.startsWith('cloud/') || c.path === 'cloud');
    // Dependencies are installed before any file is touched, so that a refused install changes nothing.
    const dependencies = changedCloud ? await this.prepareDependencies(appFolder, tree, plan, changes, progress) : undefined;
    try {
      dependencies?.commit();
      try {
        applyPlan(appFolder, tree, before, plan, this.applyStepHook);
      } catch (error) {
        dependencies?.undo();
        throw error;
      }
    } finally {
      dependencies?.finish();
    }

    const read = (p: string) => {
      const content = plan.files.get(p)?.content ?? fs.readFileSync(onDisk(tree, p));
      return textOf(content) ?? '';
    };
    const { warnings, syntaxErrors } = deployWarnings(
      { files: [...plan.files.keys()], written: plan.written, created: plan.created, read },
      this.deps.urls.sdkScript,
    );
    const lines = [...plan.lines];
    if (dependencies?.line) lines.push(dependencies.line);
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
    return { message: lines.join('\n'), warnings };
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
