import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from '../../log.js';
import { nowIso } from '../../shared/sqlite.js';
import { HEARTBEAT_MS } from '../devenvs/owners.js';
import type { ImageBuilder } from './builder.js';
import { buildContext } from './context.js';
import { DeployError, engineReason } from './engine.js';
import { waitHealthy } from './health.js';
import { containerName, deploymentLabels, imageTag } from './labels.js';
import { DEFAULT_PORT, dockerfilePath } from './names.js';
import type { ContainerRunner } from './runner.js';
import { SourceError, type RepositorySources } from './source.js';
import type { Replaced, ServiceInput, SwarmServices } from './swarm.js';
import { variablesOf, type LogRow, type WebAppRow, type WebAppStore } from './store.js';

/** Settings of the pipeline (Config: BACKYARD_WEBAPP_*). */
export interface PipelineSettings {
  /** Absolute `BACKYARD_HOME`, written into labels. */
  home: string;
  /** Where deployments clone their branch (`BACKYARD_HOME/webapps/work`). */
  workRoot: string;
  dockerHost: string | undefined;
  buildTimeoutMs: number;
  healthTimeoutMs: number;
}

export interface PipelineDeps {
  store: WebAppStore;
  sources: RepositorySources;
  builder: ImageBuilder;
  runner: ContainerRunner;
  /** Web Apps as swarm services, used instead of `runner` while the engine is a swarm manager. */
  swarm: SwarmServices;
  settings: PipelineSettings;
  log: Logger;
  /** This process as the owner of the deployments it runs (devenvs/owners.ts). */
  owner: string;
  /** Resolves once no proxied request to the deployment is in flight (or after `maxMs`), and the proxy let go of it. */
  retire: (deploymentId: string, maxMs: number) => Promise<void>;
}

/** Steps of a deployment, as its `error` names them. */
const STEP = { clone: 'Cloning the repository', build: 'Building the image', start: 'Starting the container' } as const;
type Step = keyof typeof STEP;

/** Where a running deployment is, for its failure. */
interface RunState {
  step: Step;
  containerId: string | undefined;
  /** The service this deployment created or updated, and what it replaced (swarm.ts). */
  service: { input: ServiceInput; replaced: Replaced } | undefined;
  /** Aborted when Backyard stops or the deployment is cancelled (its Web App deleted). */
  signal: AbortSignal;
}

/** Time a swarm takes to schedule a service's tasks, on top of their health checks, in milliseconds. */
const SERVICE_SCHEDULING_MS = 20_000;
/** How long a superseded container keeps serving requests already in flight, and its SIGTERM grace. */
const DRAIN_MS = 10_000;
const STOP_GRACE_S = 10;
/** At most this many rows of a container's output are kept once it is removed. */
const KEPT_CONTAINER_ROWS = 1000;
/** At most this many build rows are kept per deployment (the last ones: errors come last). */
export const KEPT_BUILD_ROWS = 10_000;

/** The text of a deployment ended by a stop or restart of Backyard. */
export const interruptedText = (status: string): string =>
  `Backyard stopped or restarted while this deployment was ${status}, so it was abandoned. Nothing is wrong with the app: start a new deployment with startDeployment.`;

/**
 * Runs deployments: `queued → building` (shallow clone of the branch head into a
 * work folder, `commitSHA` recorded, the `rootDirPath` folder sent as the build context, build rows
 * stored as they come) `→ starting` (the container runs with the app's variables, its port published
 * on loopback, until the health check passes) `→ active` (the traffic switches to it in one
 * transaction, then the container it replaced drains, stops and becomes `superseded`), or `failed`
 * with the step and the reason. One deployment at a time per Web App, in order; a queued deployment
 * with a newer one behind it is `superseded` without being built.
 */
export class DeploymentPipeline {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly background = new Set<Promise<unknown>>();
  private readonly controller = new AbortController();
  /** One per Web App with a deployment running: `cancel` aborts it. */
  private readonly cancels = new Map<string, AbortController>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private runs = 0;
  private closed = false;

  constructor(private readonly deps: PipelineDeps) {}

  /** Queues a deployment (already stored as `queued`) behind the app's earlier ones. */
  enqueue(webAppId: string, deploymentId: string): void {
    if (this.closed) return;
    const previous = this.chains.get(webAppId) ?? Promise.resolve();
    const next = previous.then(() => this.run(deploymentId));
    this.chains.set(webAppId, next);
    void next.then(() => {
      if (this.chains.get(webAppId) === next) this.chains.delete(webAppId);
    });
  }

  /**
   * Abandons the Web App's running deployment (its clone, build or health check is aborted) and
   * resolves once the app's queue has drained. Mark its unfinished deployments finished first, so that
   * queued ones are skipped and the running one fails instead of going live.
   */
  async cancel(webAppId: string): Promise<void> {
    this.cancels.get(webAppId)?.abort();
    while (this.chains.has(webAppId)) await this.chains.get(webAppId)!.catch(() => undefined);
    await Promise.allSettled([...this.background]);
  }

  /** Resolves when every queued deployment and every retirement has finished (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.chains.size > 0 || this.background.size > 0) {
      await Promise.allSettled([...this.chains.values(), ...this.background]);
    }
  }

  /**
   * Stops: builds and health checks in progress are abandoned, and this process's unfinished
   * deployments read `failed` with a reason saying Backyard stopped. Call once, before the database closes.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.controller.abort();
    clearInterval(this.heartbeatTimer);
    const now = nowIso();
    for (const row of await this.deps.store.unfinished()) {
      if (row.owner === this.deps.owner) await this.deps.store.finish(row.id, 'failed', interruptedText(row.status), now);
    }
  }

  /** One deployment, from `queued` to `active` or `failed`. */
  private async run(id: string): Promise<void> {
    const { store, log } = this.deps;
    const row = await store.deploymentById(id);
    if (this.closed || !row || row.status !== 'queued') return;
    const app = await store.appById(row.web_app_id);
    const account = app && await store.account(app.account_id);
    if (!app || !account) return;
    if (await store.hasNewer(app.id, id)) {
      await store.finish(id, 'superseded', '', nowIso());
      return;
    }
    this.beginRun();
    const work = path.join(this.deps.settings.workRoot, id);
    const started = Date.now();
    /** Milliseconds since the start at the end of each step, for the log. */
    const marks: Record<string, number> = {};
    const cancel = new AbortController();
    this.cancels.set(app.id, cancel);
    const run: RunState = { step: 'clone', containerId: undefined, service: undefined, signal: AbortSignal.any([this.controller.signal, cancel.signal]) };
    try {
      await store.setStatus(id, 'building', nowIso());
      fs.rmSync(work, { recursive: true, force: true });
      const ref = { owner: app.repository_owner_login, repo: app.repository_name, branch: app.branch_name };
      const commit = await this.deps.sources.checkout(account, ref, work, { timeoutMs: this.deps.settings.buildTimeoutMs, signal: run.signal });
      await store.setCommit(id, commit.sha);
      marks.cloned = Date.now() - started;

      run.step = 'build';
      const tag = imageTag(this.deps.settings.home, app.subdomain, id);
      const imageId = await this.build(id, app, work, commit, tag, this.deps.settings.buildTimeoutMs - (Date.now() - started), run.signal);
      marks.built = Date.now() - started;
      fs.rmSync(work, { recursive: true, force: true });

      run.step = 'start';
      if (this.closed || !await store.setStatus(id, 'starting', nowIso())) throw new DeployError(interruptedText('building'));
      await this.start(id, app, imageId, tag, run);
      const { switched, previous } = await store.activate(app.id, id, nowIso());
      if (!switched) throw new DeployError(interruptedText('starting'));
      log.info({ webAppId: app.id, deploymentId: id, commit: commit.sha, ...marks, ms: Date.now() - started }, 'deployment active');
      if (previous && previous !== id) this.track(this.retire(previous, app.subdomain));
    } catch (error) {
      await this.fail(id, app, run, error);
    } finally {
      if (this.cancels.get(app.id) === cancel) this.cancels.delete(app.id);
      fs.rmSync(work, { recursive: true, force: true });
      this.endRun();
    }
  }

  /** Step 2: the `rootDirPath` folder of the clone as the build context; build rows stored as they come. @returns the image id. */
  private async build(id: string, app: WebAppRow, work: string, commit: { sha: string; time: number }, tag: string, remainingMs: number, signal: AbortSignal): Promise<string> {
    const contextDir = this.contextFolder(work, app.root_dir_path, commit.sha);
    const context = buildContext(contextDir, { mtime: new Date(commit.time * 1000), skipGit: app.root_dir_path === '.' }) as unknown as Readable;
    const rows = new BuildRows(this.deps.store, id, () => this.closed, (error) => this.deps.log.warn({ err: error, deploymentId: id }, 'could not store build log rows'));
    // A file of the context that cannot be read (the work folder removed under us) fails the build with
    // its reason instead of escaping as an unhandled stream error.
    let contextError: Error | undefined;
    context.on('error', (error: Error) => {
      contextError = error;
    });
    try {
      const imageId = await this.deps.builder.build(context, {
        tag,
        timeoutMs: Math.max(1000, remainingMs),
        signal,
        onLog: (row) => rows.add(row),
      });
      if (contextError) throw new DeployError(`the build context could not be read: ${contextError.message}`);
      await this.deps.store.setImage(id, imageId);
      return imageId;
    } finally {
      // On an engine failure its own error is thrown: it also ends the context stream, whose echo says less.
      await rows.flush();
    }
  }

  /**
   * Step 3: the container runs (its id noted in `run`) and passes its health check; its loopback port
   * is recorded. While the engine is a swarm manager, the Web App's service is created or updated instead (`startService`).
   */
  private async start(id: string, app: WebAppRow, imageId: string, tag: string, run: RunState): Promise<void> {
    const { store, runner } = this.deps;
    const port = app.port ?? (await this.deps.builder.exposedPort(imageId)) ?? DEFAULT_PORT;
    if (await this.deps.swarm.active()) return this.startService(id, app, tag, port, run);
    await store.setPorts(id, port, null);
    const containerId = await runner.run({
      accountId: app.account_id,
      name: containerName(app.subdomain, id),
      image: tag,
      port,
      env: variablesOf(app).map((v) => `${v.key}=${v.value}`),
      labels: deploymentLabels(this.deps.settings.home, app.account_id, app.id, id),
    });
    run.containerId = containerId;
    const hostPort = await waitHealthy({
      path: app.health_check_path,
      port,
      timeoutMs: this.deps.settings.healthTimeoutMs,
      state: () => runner.state(containerId, port),
      signal: run.signal,
    });
    if (this.closed) throw new DeployError(interruptedText('starting'));
    await store.setPorts(id, port, hostPort);
  }

  /**
   * Step 3 on a swarm: the Web App's service is created, or updated to this deployment's image
   * (a rolling update, start-first, so that the tasks of the active deployment answer until new ones
   * run), until `replicas` tasks of it answer the health check.
   */
  private async startService(id: string, app: WebAppRow, tag: string, port: number, run: RunState): Promise<void> {
    const { store, swarm, settings } = this.deps;
    await store.setService(id, port);
    const input: ServiceInput = {
      accountId: app.account_id,
      webAppId: app.id,
      deploymentId: id,
      image: tag,
      port,
      env: variablesOf(app).map((v) => `${v.key}=${v.value}`),
      replicas: app.replicas,
    };
    const replaced = await swarm.deploy(input, run.signal);
    run.service = { input, replaced };
    // Tasks start one after another (a rolling update): each gets the health check's time.
    await swarm.waitConverged(input, app.health_check_path, settings.healthTimeoutMs * Math.max(1, app.replicas) + SERVICE_SCHEDULING_MS, run.signal);
    if (this.closed) throw new DeployError(interruptedText('starting'));
  }

  /** A deployment that failed at `run.step`: its container's output kept, then `failed` with the step and the reason, then its container and image go. */
  private async fail(id: string, app: WebAppRow, run: RunState, error: unknown): Promise<void> {
    const { store, log } = this.deps;
    const known = error instanceof DeployError || error instanceof SourceError;
    const reason = known ? error.message : engineReason(error, STEP[run.step].toLowerCase(), this.deps.settings.dockerHost);
    if (!known) log.error({ err: error, deploymentId: id }, 'deployment failed unexpectedly');
    // Kept before the failure shows, so whoever reads `failed` can read why.
    if (run.containerId) await this.keepLogs(id, run.containerId);
    if (run.service) {
      const rows = await this.deps.swarm.logs(app.id, KEPT_CONTAINER_ROWS).catch(() => []);
      if (!this.closed && rows.length > 0) await store.insertLogs(id, 'container', rows);
      await this.deps.swarm.restore(app.id, app.account_id, run.service.replaced);
    }
    if (!this.closed) {
      await store.finish(id, 'failed', `${STEP[run.step]} failed: ${upperFirst(reason)}`, nowIso());
      log.info({ webAppId: app.id, deploymentId: id, step: run.step }, 'deployment failed');
    }
    await this.discard(id, app.subdomain, run.containerId, app.account_id);
  }

  /**
   * The folder to send as the build context: `rootDirPath` inside the clone, which must stay inside it
   * once links are followed and must hold the Dockerfile.
   */
  private contextFolder(work: string, rootDir: string, sha: string): string {
    const folder = rootDir === '.' ? work : path.join(work, rootDir);
    let real: string;
    try {
      real = fs.realpathSync(folder);
    } catch {
      throw new DeployError(`the folder ${rootDir} does not exist in commit ${sha.slice(0, 12)}. Set rootDirPath to the folder that holds the Dockerfile.`);
    }
    const realWork = fs.realpathSync(work);
    if (real !== realWork && !real.startsWith(realWork + path.sep)) throw new DeployError(`rootDirPath ${rootDir} leads out of the repository through a symbolic link.`);
    if (!fs.existsSync(path.join(folder, 'Dockerfile'))) {
      throw new DeployError(`there is no Dockerfile at ${dockerfilePath(rootDir)} in commit ${sha.slice(0, 12)}. Push one there, or set rootDirPath to the folder that holds it.`);
    }
    return folder;
  }

  /** A failed deployment's container (its output already kept) and image go; its account's network too when that was its last container. */
  private async discard(id: string, subdomain: string, containerId: string | undefined, accountId: string): Promise<void> {
    try {
      if (containerId) {
        await this.deps.runner.remove(containerId);
        await this.deps.runner.release(accountId);
      }
      await this.deps.builder.remove(imageTag(this.deps.settings.home, subdomain, id));
    } catch (error) {
      this.deps.log.warn({ err: error, deploymentId: id }, 'could not clean up after a failed deployment');
    }
  }

  /** The deployment replaced by a new active one: drains, stops, keeps its output, goes away with its image. */
  private async retire(previousId: string, subdomain: string): Promise<void> {
    const { runner, log, store } = this.deps;
    try {
      await this.deps.retire(previousId, DRAIN_MS);
      // A deployment that ran as the service's tasks: the rolling update already replaced them. Its
      // image, and those of older deployments, go once the engine's task history no longer holds them
      // (it keeps a few stopped tasks per replica; a held image stays until a later deployment or the app's deletion).
      const row = await store.deploymentById(previousId);
      if (row?.service === 1) {
        for (const old of await store.deployments(row.web_app_id, 50)) {
          if (old.status === 'superseded' || old.status === 'failed') await this.deps.builder.remove(imageTag(this.deps.settings.home, subdomain, old.id));
        }
        return;
      }
      const containerId = await runner.find(previousId);
      if (containerId) {
        await runner.stop(containerId, STOP_GRACE_S);
        await this.keepLogs(previousId, containerId);
        await runner.remove(containerId);
      }
      await this.deps.builder.remove(imageTag(this.deps.settings.home, subdomain, previousId));
      log.debug({ deploymentId: previousId }, 'superseded container removed');
    } catch (error) {
      log.warn({ err: error, deploymentId: previousId }, 'could not remove a superseded container');
    }
  }

  private async keepLogs(id: string, containerId: string): Promise<void> {
    const rows = await this.deps.runner.logs(containerId, KEPT_CONTAINER_ROWS).catch(() => []);
    if (!this.closed && rows.length > 0) await this.deps.store.insertLogs(id, 'container', rows);
  }

  private track(task: Promise<unknown>): void {
    const tracked = task.catch((error: unknown) => this.deps.log.debug({ err: error }, 'background clean-up failed'));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  private beginRun(): void {
    this.runs++;
    this.heartbeatTimer ??= setInterval(() => {
      if (!this.closed) this.deps.store.heartbeat(this.deps.owner, nowIso()).catch((error: unknown) => this.deps.log.warn({ err: error }, 'deployment heartbeat failed'));
    }, HEARTBEAT_MS).unref();
  }

  private endRun(): void {
    if (--this.runs === 0) {
      clearInterval(this.heartbeatTimer);
      this.heartbeatTimer = undefined;
    }
  }
}

const upperFirst = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Build log rows on their way to the store: written in one transaction at most every
 * `FLUSH_MS` (a build prints many lines, and every commit waits for the disk), and at the end of the
 * build, before its outcome is recorded. Only the last `KEPT_BUILD_ROWS` are kept.
 */
class BuildRows {
  private static readonly FLUSH_MS = 100;
  private pending: LogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private count = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: WebAppStore,
    private readonly deploymentId: string,
    private readonly closed: () => boolean,
    /** Where a failed write goes (the log): a build goes on without its rows rather than fail. */
    private readonly onError: (error: unknown) => void,
  ) {}

  add(row: LogRow): void {
    this.pending.push(row);
    this.timer ??= setTimeout(() => void this.flush(), BuildRows.FLUSH_MS);
  }

  /** Writes the rows added so far, after those of earlier flushes (one write at a time keeps their order); never rejects. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0 || this.closed()) return this.writing;
    const rows = this.pending;
    this.pending = [];
    this.writing = this.writing.then(async () => {
      try {
        await this.store.insertLogs(this.deploymentId, 'build', rows);
        const before = this.count;
        this.count += rows.length;
        if (this.count > KEPT_BUILD_ROWS && Math.floor(this.count / 1000) > Math.floor(before / 1000)) await this.store.pruneLogs(this.deploymentId, 'build', KEPT_BUILD_ROWS);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.writing;
  }
}

