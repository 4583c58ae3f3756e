import { ContainerAddresses } from './addresses.js';
import path from 'node:path';
import type { Config } from '../../config.js';
import { homePaths } from '../../config.js';
import { invalid, notFound } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Account } from '../accounts/service.js';
import { dockerClient, type DockerClient } from '../devenvs/engine.js';
import { AccountNetworks } from '../devenvs/networks.js';
import { newOwner } from '../devenvs/owners.js';
import { newId } from '../../shared/ids.js';
import type { RepoHostService } from '../repohost/service.js';
import { nowIso } from '../../shared/sqlite.js';
import type { Sql } from '../../shared/sql.js';
import type { PublicUrls } from '../urls.js';
import { AutoDeploy } from './autodeploy.js';
import { ImageBuilder } from './builder.js';
import { imageRepository } from './labels.js';
import {
  DEFAULT_HEALTH_CHECK_PATH,
  DEFAULT_PORT,
  checkAppName,
  checkBranchName,
  checkHealthCheckPath,
  checkReplicas,
  DEFAULT_REPLICAS,
  checkVariables,
  mergeVariables,
  normaliseRootDir,
  sameVariables,
  subdomainCandidates,
} from './names.js';
import { DeploymentPipeline, type PipelineSettings } from './pipeline.js';
import { followDeployment } from './follow.js';
import { WebAppProxy } from './proxy.js';
import { ContainerRunner, type RunnerSettings } from './runner.js';
import { RepositorySources } from './source.js';
import { SwarmServices, type SwarmSettings } from './swarm.js';
import { TaskTargets } from './tasks.js';
import { WebAppRecovery } from './recovery.js';
import type { CreateWebAppInput, Deployment, LogOptions, UpdateWebAppInput, WebApp } from './types.js';
import { UNFINISHED, WebAppStore, variablesOf, type DeploymentRow, type DeploymentTrigger, type LogRow, type SettingsUpdate, type WebAppRow } from './store.js';
import type { WebAppOperations } from '../services.js';

export type { CreateWebAppInput, Deployment, LogOptions, UpdateWebAppInput, WebApp } from './types.js';

export const DEFAULT_LOGS_LIMIT = 15;
/** stopWebApp: SIGTERM, then SIGKILL after this many seconds. */
const STOP_GRACE_S = 10;
/** How many deployments `deployments` lists when no limit is given (the dashboard's Web App page). */
export const DEPLOYMENTS_LIST_LIMIT = 50;

/** A deployment in a list: the Interface A `Deployment`, what started it, and when it ended (null while unfinished). */
export interface DeploymentSummary extends Deployment {
  trigger: DeploymentTrigger;
  /** ISO 8601 in UTC with milliseconds; null while queued, building or starting. */
  finishedAt: string | null;
}

/** Settings of the Web App service (Config: BACKYARD_WEBAPP_*, DOCKER_HOST). */
export interface WebAppSettings extends PipelineSettings, RunnerSettings, SwarmSettings {
  pollMs: number;
}

/** The service's settings from Backyard's configuration. */
export const webAppSettings = (config: Config): WebAppSettings => ({
  home: path.resolve(config.home),
  workRoot: homePaths(path.resolve(config.home)).webappWork,
  dockerHost: config.dockerHost,
  buildTimeoutMs: config.webappBuildTimeoutMs,
  healthTimeoutMs: config.webappHealthTimeoutMs,
  memoryMb: config.webappMemoryMb,
  cpus: config.webappCpus,
  pollMs: config.webappPollMs,
  swarm: config.webappSwarm,
});

export interface WebAppServiceOptions {
  db: Sql;
  settings: WebAppSettings;
  repoHost: RepoHostService;
  urls: PublicUrls;
  log: Logger;
  docker?: DockerClient;
  /** The accounts' networks, shared with the development environments (platform.ts); one of its own by default. */
  networks?: AccountNetworks;
}

const deploymentOf = (row: DeploymentRow): Deployment => ({
  id: row.id,
  commitSHA: row.commit_sha,
  createdAt: row.created_at,
  status: row.status,
  error: row.error,
});

/**
 * Web Apps and their deployments (Interface A operations 15 to 20): domain
 * rules, records in `platform.db`, the deployment pipeline on Docker, auto-deploy, and the reverse
 * proxy behind `appURL`. Knows nothing of REST or MCP.
 *
 * Every method takes the caller's account: another account's Web Apps behave as unknown ids
 * (docs/design.md, decision 2).
 */
export class WebAppService implements WebAppOperations {
  readonly proxy: WebAppProxy;
  private readonly store: WebAppStore;
  private readonly sources: RepositorySources;
  private readonly runner: ContainerRunner;
  private readonly builder: ImageBuilder;
  private readonly pipeline: DeploymentPipeline;
  private readonly autoDeploy: AutoDeploy;
  private readonly recovery: WebAppRecovery;
  /** Network addresses of the running containers, for the proxy (addresses.ts). */
  readonly addresses: ContainerAddresses;
  /** Web Apps as swarm services while the engine is a swarm manager (swarm.ts), and their tasks as the proxy sees them (tasks.ts). */
  readonly swarm: SwarmServices;
  readonly tasks: TaskTargets;
  /** Identifies this process as the owner of the deployments it runs. */
  private readonly owner = newOwner();
  private readonly settings: WebAppSettings;
  private readonly urls: PublicUrls;
  private readonly log: Logger;
  private closed = false;

  constructor(options: WebAppServiceOptions) {
    const docker = options.docker ?? dockerClient(options.settings.dockerHost);
    this.settings = options.settings;
    this.urls = options.urls;
    this.log = options.log;
    this.store = new WebAppStore(options.db);
    this.sources = new RepositorySources(options.repoHost);
    this.runner = new ContainerRunner(docker, options.settings, options.networks ?? new AccountNetworks(docker, options.settings.home, options.log));
    this.builder = new ImageBuilder(docker, options.settings.dockerHost);
    this.addresses = new ContainerAddresses(docker, options.settings.home, options.log);
    this.swarm = new SwarmServices(docker, options.settings);
    this.tasks = new TaskTargets(docker, this.swarm, options.log, (key) => this.proxy.letGo(key));
    this.proxy = new WebAppProxy(
      {
        route: (sub) => this.store.route(sub),
        relocate: (id) => this.recovery.relocate(id),
        address: (id) => this.addresses.get(id),
        forget: (id) => this.addresses.forget(id),
        task: (route, exclude) => this.tasks.pick(route, exclude),
        taskFailed: (webAppId, target, error) => this.tasks.fail(webAppId, target, error),
      },
      options.log,
    );
    this.pipeline = new DeploymentPipeline({
      store: this.store,
      sources: this.sources,
      builder: this.builder,
      runner: this.runner,
      swarm: this.swarm,
      settings: options.settings,
      log: options.log,
      owner: this.owner,
      retire: (id, maxMs) => this.proxy.retire(id, maxMs),
    });
    this.autoDeploy = new AutoDeploy(this.store, options.repoHost, this.sources, (app, trigger) => this.queue(app, trigger), options.log);
    this.recovery = new WebAppRecovery({
      store: this.store,
      runner: this.runner,
      builder: this.builder,
      swarm: this.swarm,
      addresses: this.addresses,
      home: options.settings.home,
      owner: this.owner,
      log: options.log,
      closed: () => this.closed,
    });
  }

  /**
   * Marks failed the deployments a stopped Backyard process left unfinished (its heartbeat ended).
   * openPlatform calls it once, before anything is served.
   */
  recoverInterrupted(): Promise<void> {
    return this.recovery.reconcile();
  }

  // ---- Operations ----

  /**
   * createWebApp (operation 15): checks the settings and the repository, stores the app (variables
   * kept, never returned), gives it a subdomain and queues its first deployment.
   * @returns the Web App, `deploying`, with the queued deployment as `lastDeployment`.
   * @throws ManagementError(invalid) for a bad name or setting, a name already used in the account,
   *   or a missing repository, branch or Dockerfile (the text says which).
   */
  async create(account: Account, input: CreateWebAppInput): Promise<WebApp> {
    checkAppName(input.appName);
    if (input.branchName !== undefined) checkBranchName(input.branchName);
    const rootDir = normaliseRootDir(input.rootDirPath ?? '.');
    const healthCheckPath = input.healthCheckPath ?? DEFAULT_HEALTH_CHECK_PATH;
    checkHealthCheckPath(healthCheckPath);
    const variables = input.environmentVariables ?? [];
    checkVariables(variables, 'environmentVariables');
    if (input.replicas !== undefined) checkReplicas(input.replicas);
    await this.requireFreeName(account.id, input.appName);
    const head = await this.sources.check(account, input.repositoryOwnerLogin, input.repositoryName, input.branchName, rootDir);

    const id = newId();
    const deploymentId = newId();
    await this.store.db.transaction(async () => {
        await this.requireFreeName(account.id, input.appName);
        let subdomain = '';
        for (const candidate of subdomainCandidates(input.appName)) {
          if (!await this.store.subdomainTaken(candidate)) {
            subdomain = candidate;
            break;
          }
        }
        const now = nowIso();
        await this.store.insertApp({
          id,
          account_id: account.id,
          app_name: input.appName,
          subdomain,
          repository_owner_login: input.repositoryOwnerLogin,
          repository_name: input.repositoryName,
          branch_name: head.branch,
          root_dir_path: rootDir,
          environment_variables: JSON.stringify(variables),
          port: input.port ?? null,
          health_check_path: healthCheckPath,
          auto_deploy: input.autoDeploy ? 1 : 0,
          last_seen_sha: head.sha,
          created_at: now,
          replicas: input.replicas ?? DEFAULT_REPLICAS,
        });
        await this.store.insertDeployment({ id: deploymentId, web_app_id: id, trigger: 'create', owner: this.owner, created_at: now });
    });
    this.log.info({ webAppId: id, appName: input.appName, repository: `${input.repositoryOwnerLogin}/${input.repositoryName}`, branch: head.branch }, 'web app created');
    this.pipeline.enqueue(id, deploymentId);
    return this.view((await this.store.appById(id))!);
  }

  /** getWebApps (operation 16): the account's Web Apps, oldest first; only the one named exactly `appName` when given. */
  async list(accountId: string, appName?: string): Promise<Array<{ appId: string; appName: string }>> {
    return (await this.store.apps(accountId, appName)).map((r) => ({ appId: r.id, appName: r.app_name }));
  }

  /**
   * getWebApp (operation 17). `status` is `stopped` when the active deployment's container is not
   * running (the engine is asked).
   * @throws ManagementError(notFound) for an unknown id or another account's app.
   */
  async get(accountId: string, appId: string): Promise<WebApp> {
    const app = await this.requireApp(accountId, appId);
    const view = await this.view(app);
    if (view.status === 'running' && app.stopped === 0 && app.active_deployment_id && !(await this.containerRuns(app.active_deployment_id))) {
      return { ...view, status: 'stopped', error: 'The active deployment\'s container is not running (stopped outside Backyard, or the Docker engine is not reachable). Start a new deployment with startDeployment.' };
    }
    return view;
  }

  /**
   * updateWebApp (operation 18): changes only the settings sent. When the result differs in what the
   * container gets (branch, folder, variables, port, health check), a new deployment is queued;
   * `autoDeploy` alone changes no container.
   * @throws ManagementError(notFound) for an unknown app; (invalid) for a bad setting or a missing branch or Dockerfile.
   */
  async update(account: Account, appId: string, input: UpdateWebAppInput): Promise<WebApp> {
    const app = await this.requireApp(account.id, appId);
    if (input.branchName !== undefined) checkBranchName(input.branchName);
    const rootDir = input.rootDirPath === undefined ? undefined : normaliseRootDir(input.rootDirPath);
    if (input.healthCheckPath !== undefined) checkHealthCheckPath(input.healthCheckPath);
    if (input.replicas !== undefined) checkReplicas(input.replicas);
    const current = variablesOf(app);
    const variables =
      input.setEnvironmentVariables === undefined && input.removeEnvironmentVariablesKeys === undefined
        ? undefined
        : mergeVariables(current, input.setEnvironmentVariables ?? [], input.removeEnvironmentVariablesKeys ?? []);

    const update: SettingsUpdate = {};
    if (input.branchName !== undefined && input.branchName !== app.branch_name) update.branch_name = input.branchName;
    if (rootDir !== undefined && rootDir !== app.root_dir_path) update.root_dir_path = rootDir;
    if (input.port !== undefined && input.port !== app.port) update.port = input.port;
    if (input.healthCheckPath !== undefined && input.healthCheckPath !== app.health_check_path) update.health_check_path = input.healthCheckPath;
    if (variables !== undefined && !sameVariables(current, variables)) update.variables = variables;
    if (input.replicas !== undefined && input.replicas !== app.replicas) update.replicas = input.replicas;
    const redeploy = Object.keys(update).length > 0;
    if (input.autoDeploy !== undefined && (input.autoDeploy ? 1 : 0) !== app.auto_deploy) update.auto_deploy = input.autoDeploy ? 1 : 0;

    if (update.branch_name !== undefined || update.root_dir_path !== undefined) {
      const head = await this.sources.check(account, app.repository_owner_login, app.repository_name, update.branch_name ?? app.branch_name, update.root_dir_path ?? app.root_dir_path);
      await this.store.setLastSeen(app.id, head.sha);
    }
    await this.store.updateSettings(app.id, update);
    if (redeploy) await this.queue((await this.store.appById(app.id))!, 'update');
    return this.view((await this.store.appById(app.id))!);
  }

  /**
   * startDeployment (operation 19): queues a deployment of the branch head.
   * @throws ManagementError(notFound) for an unknown app; (invalid) when the repository, branch or Dockerfile is gone.
   */
  async deploy(account: Account, appId: string): Promise<Deployment> {
    const app = await this.requireApp(account.id, appId);
    await this.sources.check(account, app.repository_owner_login, app.repository_name, app.branch_name, app.root_dir_path);
    return deploymentOf(await this.queue(app, 'manual'));
  }

  /**
   * Follows a deployment of the caller's app for a caller that listens to progress (follow.ts),
   * then answers it as it stands: finished, or still going after FOLLOW_LIMIT_MS or a cancellation.
   * @throws ManagementError(notFound) for an unknown app or deployment.
   */
  async follow(accountId: string, appId: string, deploymentId: string, report: (message: string) => void, signal?: AbortSignal): Promise<Deployment> {
    await this.requireApp(accountId, appId);
    if (!await this.store.deployment(appId, deploymentId)) throw notFound(`The Web App "${appId}" has no deployment with the id "${deploymentId}".`);
    return deploymentOf(await followDeployment(this.store, appId, deploymentId, report, signal));
  }

  /**
   * getDeployment (operation 20): the deployment, and on request the last rows of its build log
   * (stored as the build ran) and of its container's output (from the engine while the container
   * exists, else the rows kept when it was removed), each in time order.
   * @throws ManagementError(notFound) for an unknown app or a deployment of another app.
   */
  async deployment(accountId: string, appId: string, deploymentId: string, options: LogOptions = {}): Promise<Deployment & { buildLogs: LogRow[]; containersLogs: LogRow[] }> {
    await this.requireApp(accountId, appId);
    const row = await this.store.deployment(appId, deploymentId);
    if (!row) {
      throw notFound(`The Web App "${appId}" has no deployment with the id "${deploymentId}". Use the id from the app's lastDeployment or activeDeployment (getWebApp).`);
    }
    const buildLogs = options.includeBuildLogs ? await this.store.lastLogs(row.id, 'build', options.buildLogsLimit ?? DEFAULT_LOGS_LIMIT) : [];
    const containersLogs = options.includeContainersLogs ? await this.containerLogs(row, options.containersLogsLimit ?? DEFAULT_LOGS_LIMIT) : [];
    return { ...deploymentOf(row), buildLogs, containersLogs };
  }

  /**
   * The newest `limit` deployments of a Web App, newest first (in the order they were queued), for
   * the dashboard's list; getDeployment answers one at a time, with logs.
   * @param limit how many at most, a positive integer (default `DEPLOYMENTS_LIST_LIMIT`, 50).
   * @throws ManagementError(notFound) for an unknown app or another account's (docs/design.md, decision 2);
   *   (invalid) for a limit that is not a positive integer (SQLite reads a negative LIMIT as none).
   */
  async deployments(accountId: string, appId: string, limit = DEPLOYMENTS_LIST_LIMIT): Promise<DeploymentSummary[]> {
    await this.requireApp(accountId, appId);
    if (!Number.isInteger(limit) || limit < 1) throw invalid(`limit must be a positive integer (it is ${limit}).`);
    return (await this.store.deployments(appId, limit)).map((row) => ({ ...deploymentOf(row), trigger: row.trigger, finishedAt: row.finished_at }));
  }

  /**
   * stopWebApp: stops the app's containers and marks it stopped, so that neither the proxy nor a
   * restart of Backyard starts it again; its deployments and image stay.
   * @throws ManagementError(notFound) for an unknown app; (invalid) while a deployment is on its way.
   */
  async stop(accountId: string, appId: string): Promise<WebApp> {
    const app = await this.requireApp(accountId, appId);
    if ((await this.store.unfinishedOf(app.id)).length > 0) {
      throw invalid(`The Web App "${app.app_name}" is deploying: wait until getWebApp shows it running or failed, then stop it.`);
    }
    await this.store.setStopped(app.id, true);
    await this.swarm.scale(app.id, 0);
    this.tasks.forget(app.id);
    for (const container of await this.runner.listApp(app.id)) await this.runner.stop(container, STOP_GRACE_S);
    if (app.active_deployment_id) this.addresses.forget(app.active_deployment_id);
    this.log.info({ webAppId: app.id }, 'web app stopped');
    return this.view((await this.store.appById(app.id))!);
  }

  /**
   * startWebApp: starts the active deployment's container again (the one stopWebApp stopped) and
   * records its new loopback port.
   * @throws ManagementError(notFound) for an unknown app; (invalid) when it has no active deployment
   *   or its container is gone (then startDeployment makes a new one).
   */
  async startApp(accountId: string, appId: string): Promise<WebApp> {
    const app = await this.requireApp(accountId, appId);
    const active = await this.store.deploymentById(app.active_deployment_id);
    if (active?.service === 1 && await this.swarm.scale(app.id, app.replicas)) {
      await this.store.setStopped(app.id, false);
      this.log.info({ webAppId: app.id }, 'web app started');
      return this.get(accountId, appId);
    }
    const containerId = active ? await this.runner.find(active.id) : undefined;
    if (!active || !containerId) {
      throw invalid(`The Web App "${app.app_name}" has no deployment to start${active ? ' (its container is gone)' : ''}. Deploy it with startDeployment.`);
    }
    await this.runner.start(app.account_id, containerId);
    const state = await this.runner.state(containerId, active.container_port ?? DEFAULT_PORT);
    if (state.hostPort !== undefined && state.hostPort !== active.host_port) await this.store.setHostPort(active.id, state.hostPort);
    this.addresses.forget(active.id);
    await this.store.setStopped(app.id, false);
    this.log.info({ webAppId: app.id }, 'web app started');
    return this.get(accountId, appId);
  }

  /**
   * deleteWebApp: abandons a deployment on its way, then removes the app's containers, the images
   * built for it, its deployments and log rows and its record (its subdomain is free then).
   * @throws ManagementError(notFound) for an unknown app or another account's.
   */
  async remove(accountId: string, appId: string): Promise<void> {
    const app = await this.requireApp(accountId, appId);
    const now = nowIso();
    for (const row of await this.store.unfinishedOf(app.id)) await this.store.finish(row.id, 'failed', 'The Web App was deleted.', now);
    await this.pipeline.cancel(app.id);
    if (await this.swarm.active()) await this.swarm.remove(app.id, app.account_id);
    this.tasks.forget(app.id);
    for (const container of await this.runner.listApp(app.id)) await this.runner.remove(container);
    await this.runner.release(app.account_id);
    await this.builder.removeRepository(imageRepository(this.settings.home, app.subdomain));
    for (const id of await this.store.deploymentIds(app.id)) this.addresses.forget(id);
    await this.store.deleteApp(app.id);
    this.log.info({ webAppId: app.id, appName: app.app_name }, 'web app deleted');
  }

  /** The account that owns a Web App, whoever asks: for the machine's owner (CLI). */
  async ownerOf(appId: string): Promise<string | undefined> {
    return (await this.store.appById(appId))?.account_id;
  }

  // ---- Life cycle ----

  /**
   * Begins the background work of a serving process: finds the containers of active deployments
   * again by their labels (starting one that stopped, reading its current port, moving one made before
   * accounts had networks of their own onto its account's network), removes containers left by
   * abandoned deployments, and starts the GitHub branch poller. Returns at once.
   */
  start(): void {
    void this.recovery.sweep().catch((error: unknown) => this.log.warn({ message: (error as Error).message }, 'could not look up Web App containers at start'));
    this.autoDeploy.startPolling(this.settings.pollMs);
    this.addresses.start();
  }

  /** Resolves when no deployment is queued or running and superseded containers are gone (tests, benchmarks). */
  idle(): Promise<void> {
    return this.pipeline.idle();
  }

  /** One round of the auto-deploy poller (see `AutoDeploy.pollOnce`). */
  pollOnce(...args: Parameters<AutoDeploy['pollOnce']>): Promise<void> {
    return this.autoDeploy.pollOnce(...args);
  }

  /** Stops auto-deploy and the pipeline (unfinished deployments read failed). Active containers keep running. Call once, before the database closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.autoDeploy.close();
    await this.pipeline.close();
    this.proxy.close();
    this.addresses.close();
    this.tasks.close();
  }

  // ---- Internals ----

  /** Records a queued deployment of `app` and hands it to the pipeline. */
  private async queue(app: WebAppRow, trigger: DeploymentTrigger): Promise<DeploymentRow> {
    const id = newId();
    await this.store.insertDeployment({ id, web_app_id: app.id, trigger, owner: this.owner, created_at: nowIso() });
    this.pipeline.enqueue(app.id, id);
    return (await this.store.deploymentById(id))!;
  }

  private async view(app: WebAppRow): Promise<WebApp> {
    const last = await this.store.deploymentById(app.last_deployment_id);
    const active = await this.store.deploymentById(app.active_deployment_id);
    let status: WebApp['status'] = 'stopped';
    if (last && UNFINISHED.includes(last.status)) status = 'deploying';
    else if (last?.status === 'failed') status = 'failed';
    else if (active && app.stopped === 0) status = 'running';
    return {
      appId: app.id,
      appName: app.app_name,
      dashboardURL: `${this.urls.base}/dashboard/web-apps/${encodeURIComponent(app.id)}`,
      appURL: this.urls.hosting(app.subdomain),
      repositoryOwnerLogin: app.repository_owner_login,
      repositoryName: app.repository_name,
      branchName: app.branch_name,
      rootDirPath: app.root_dir_path,
      environmentVariablesKeys: variablesOf(app).map((v) => v.key),
      port: app.port ?? active?.container_port ?? last?.container_port ?? DEFAULT_PORT,
      healthCheckPath: app.health_check_path,
      autoDeploy: app.auto_deploy === 1,
      replicas: app.replicas,
      status,
      error: status === 'failed' ? last!.error : '',
      ...(last ? { lastDeployment: deploymentOf(last) } : {}),
      ...(active ? { activeDeployment: deploymentOf(active) } : {}),
    };
  }

  private async requireApp(accountId: string, appId: string): Promise<WebAppRow> {
    const app = await this.store.app(accountId, appId);
    if (!app) throw notFound(`This account has no Web App with the id "${appId}". Find the ids with getWebApps.`);
    return app;
  }

  private async requireFreeName(accountId: string, appName: string): Promise<void> {
    if (await this.store.appByName(accountId, appName)) {
      throw invalid(`A Web App named "${appName}" already exists in this account. Choose another appName, or change the existing app with updateWebApp (find it with getWebApps).`);
    }
  }

  private async containerRuns(deploymentId: string): Promise<boolean> {
    try {
      const active = await this.store.deploymentById(deploymentId);
      if (active?.service === 1) return await this.swarm.running(active.web_app_id);
      const id = await this.runner.find(deploymentId);
      if (!id) return false;
      const row = await this.store.deploymentById(deploymentId);
      return (await this.runner.state(id, row?.container_port ?? DEFAULT_PORT)).running;
    } catch {
      return false;
    }
  }

  private async containerLogs(row: DeploymentRow, limit: number): Promise<LogRow[]> {
    try {
      if (row.service === 1 && row.status === 'active') return await this.swarm.logs(row.web_app_id, limit);
      const containerId = await this.runner.find(row.id);
      if (containerId) return await this.runner.logs(containerId, limit);
    } catch (error) {
      this.log.debug({ message: (error as Error).message, deploymentId: row.id }, 'container logs read from the stored rows');
    }
    return this.store.lastLogs(row.id, 'container', limit);
  }
}
