import path from 'node:path';
import { homePaths, type Config } from '../config.js';
import type { Logger } from '../log.js';
import { AccountService } from './accounts/service.js';
import { BackendAppService } from './backendapps/service.js';
import { CloudCodeService } from './backendapps/cloudCode/service.js';
import { bundledGuides } from './guides/bundled.js';
import type { Services } from './services.js';
import { openDatabase } from '../shared/sqlite.js';
import type { Sql } from '../shared/sql.js';
import { SqliteSql } from '../shared/sqliteSql.js';
import { OutboundClient } from '../shared/outbound/client.js';
import { Mailer } from '../data/mail/mailer.js';
import { PostgresSql } from './store/postgresSql.js';
import { postgresMigrations } from './store/postgresMigrations.js';
import { migrations as platformMigrations } from './store/migrations.js';
import { PublicUrls } from './urls.js';
import { DataApps } from '../data/apps.js';
import { createDataRouter } from '../data/rest/routes/index.js';
import type { DataRouter } from '../data/rest/router.js';
import { DataApiService } from '../data/service.js';
import { LiveQueryServer } from '../data/livequery/server.js';
import { WorkerCloudRuntime } from '../data/cloud/runtime.js';
import { TEMPLATE_MAIN_JS, TEMPLATE_REGISTRY } from './backendapps/cloudCode/template.js';
import { jobMessage } from '../data/cloud/jobs.js';
import { postgresStorage, sqliteStorage } from '../data/storage/provider.js';
import { AppEvents } from '../data/events.js';
import type { DataServices } from '../data/services.js';
import { WebhookCloudRuntime, WebhookStore, webhookFiles } from '../data/cloud/webhooks.js';
import { JobScheduler, scheduleMarkFiles } from '../data/cloud/scheduler.js';
import { SignInProviders } from '../data/users/providers/catalog.js';
import { dockerClient } from './devenvs/engine.js';
import { AccountNetworks } from './devenvs/networks.js';
import { DevEnvService, devEnvSettings } from './devenvs/service.js';
import { RepoHostService } from './repohost/service.js';
import { createOAuthService } from './oauth/index.js';
import { DashboardSessions } from './dashboard/sessions.js';
import { WebAppService, webAppSettings } from './webapps/service.js';
import { scheduleMarksIn, webhookListsIn } from './backendapps/sharedAppState.js';
import { CloudTreeSync } from './backendapps/cloudCode/treeSync.js';
import { CloudCodeVersions } from './backendapps/cloudCode/versions.js';
import type { CloudTrees } from '../data/cloud/runtime.js';

/** The running domain: the platform store and the services over it, without any front end. */
export interface Platform {
  config: Config;
  log: Logger;
  /** The platform's own state: `platform.db`, or the `backyard` schema of `BACKYARD_DATABASE_URL`. */
  db: Sql;
  services: Services;
  /** Routes data API calls (Interface B) for the HTTP mount. */
  dataRouter: DataRouter;
  /** What the data API's routes reach besides the apps' engines: cloud code, schedules, mail, sign-in providers, the outbound client. */
  dataServices: DataServices;
  /** Parse's LiveQuery over WebSocket at the data API's address. */
  liveQuery: LiveQueryServer;
  /** Where apps' cloud trees come from on PostgreSQL (the platform store's active versions); undefined on SQLite, where the home's tree is the truth. */
  cloudTrees: CloudTrees | undefined;
  /** App deletions and cloud deploys, this process's and (PostgreSQL) the others': for front ends that hold something per app. */
  events: Pick<AppEvents, 'on'>;
  /**
   * Starts the background work of the process that serves the data API (the HTTP server calls it
   * before it listens): hearing the other processes' app events and LiveQuery changes (PostgreSQL),
   * LiveQuery's session checks, and the scheduled jobs (the last two not on a `platform` node,
   * `BACKYARD_ROLE`). Opening the platform starts none of it, so that a short command (the CLI's)
   * runs nothing in the background. Does nothing after `stop`.
   */
  start(): Promise<void>;
  /**
   * Stops what `start` started that could open an app's database or run a job (the scheduler;
   * resolves once a check under way is over) and stops following the other processes. Safe to call
   * more than once; `close` calls it.
   */
  stop(): Promise<void>;
  /**
   * Stops the services' background work and closes the databases. Call once, after the front ends
   * have stopped. A step that fails (the database gone, so interrupted deployments cannot be marked)
   * does not keep the later ones from running.
   * @throws the first step's failure, once every step has run.
   */
  close(): Promise<void>;
  /**
   * Checks that the database of the apps' data answers (PostgreSQL; SQLite always does).
   * @throws Error saying which database and what failed.
   */
  checkStorage(): Promise<void>;
}

/**
 * Opens the platform's store (migrating it): `platform.db` under the configured home, or with
 * `BACKYARD_DATABASE_URL` the `backyard` schema of that PostgreSQL database; builds the
 * domain services and marks failed what a stopped process left unfinished.
 * @throws Error when the home cannot be written, the database cannot be reached, or its schema is
 *   from a newer Backyard.
 */
export async function openPlatform(config: Config, log: Logger): Promise<Platform> {
  const db: Sql = config.databaseUrl
    ? await PostgresSql.open(config.databaseUrl, postgresMigrations, (err) => log.error({ err }, 'PostgreSQL connection of the platform store failed'))
    : new SqliteSql(openDatabase(homePaths(config.home).platformDb, platformMigrations));
  const urls = new PublicUrls(config.publicUrl, config.hostingDomain);
  const storage = config.databaseUrl ? postgresStorage(config.databaseUrl, (err) => log.error({ err }, 'PostgreSQL connection failed')) : sqliteStorage;
  // App deletions and cloud deploys, made here or (PostgreSQL) by the other processes serving the same apps.
  const events = new AppEvents(storage.broadcast, log);
  // A new app's folder gets its starting cloud code tree.
  const backendApps = new BackendAppService(
    db,
    config.home,
    urls,
    (appId, folder) => cloudCode.initialise(appId, folder),
    // A deleted app's workers stop and its data.db closes before its folder goes.
    (appId) => events.announce('app_deleted', appId),
    (appId) => dataApps.reloadSettings(appId),
  );
  const cloudCode = new CloudCodeService({
    home: config.home,
    db,
    apps: backendApps,
    urls,
    reload: (appId) => events.announce('cloud_deployed', appId),
  });
  const dataRouter = createDataRouter(log, () => new URL(urls.dataApi).pathname);
  // On PostgreSQL, each app's active cloud code version comes from the platform store to this home
  // before it runs or is served: nodes need not share a home (BACKYARD_ROLE).
  const cloudTrees = config.databaseUrl ? new CloudTreeSync(new CloudCodeVersions(db), config.home, log) : undefined;
  const cloud = new WorkerCloudRuntime({
    trees: cloudTrees,
    home: config.home,
    directory: backendApps,
    dataApiUrl: () => urls.dataApi,
    functionTimeoutMs: config.functionTimeoutMs,
    jobTimeoutMs: config.jobTimeoutMs,
    memoryMb: config.cloudMemoryMb,
    idleMs: config.cloudIdleMs,
    knownRegistries: new Map([[TEMPLATE_MAIN_JS, TEMPLATE_REGISTRY]]),
    confinement: config.cloudConfinement,
    accountCount: () => accounts.count(),
    network: config.cloudNetwork,
    allowHosts: config.cloudAllowHosts,
    log,
    onJobMessage: (appId, jobId, message) => jobMessage(dataApps, appId, jobId, message, log),
  });
  const dataApps = new DataApps(config.home, backendApps, () => urls.dataApi, storage, (appId, store) => liveQuery.watch(appId, store));
  // What the data API's routes reach besides the apps' engines (src/data/services.ts).
  const outbound = new OutboundClient({ allowHosts: config.cloudAllowHosts });
  // On PostgreSQL, in the platform store, which every node reads whatever its home (BACKYARD_ROLE).
  const hookFiles = webhookFiles((appId) => dataApps.appFolder(appId));
  const webhooks = new WebhookStore(config.databaseUrl ? webhookListsIn(db, hookFiles) : hookFiles);
  const dataCloud = new WebhookCloudRuntime(cloud, webhooks, {
    fetch: outbound.fetch,
    webhookKey: async (appId) => (await dataApps.keys(appId))?.webhookKey,
    timeoutMs: config.functionTimeoutMs,
  });
  const markFiles = scheduleMarkFiles(homePaths(config.home).apps);
  const scheduler = new JobScheduler(dataApps, dataCloud, config.databaseUrl ? scheduleMarksIn(db, markFiles) : markFiles, log);
  const dataServices: DataServices = {
    cloud: dataCloud,
    webhooks,
    scheduler,
    mailer: new Mailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, allowHosts: config.cloudAllowHosts, log }),
    signIn: new SignInProviders(outbound.fetch),
    outbound,
  };
  const liveQuery = new LiveQueryServer(dataApps, dataCloud, log, storage.broadcast);
  events.on('cloud_deployed', async ({ appId, here }) => {
    // Deployed here: the workers load it now. Deployed by another process: its tree comes here, and a live worker here loads it.
    if (here && appId !== undefined) return cloud.reload(appId);
    cloudTrees?.stale(appId);
    for (const app of appId === undefined ? cloud.appsWithWorkers() : [appId]) if (cloud.liveWorkers(app) > 0) await cloud.reload(app);
  });
  events.on('app_deleted', async ({ appId, here }) => {
    // Deleted here: its workers stop, then its storage closes and its data goes.
    if (here && appId !== undefined) {
      await cloud.forget(appId);
      return dataApps.remove(appId);
    }
    // Deleted by another process (which dropped its data): forget what this one holds.
    const gone = async () => {
      const open = dataApps.openApps();
      const known = await Promise.all(open.map((id) => backendApps.keys(id)));
      return open.filter((_, i) => !known[i]);
    };
    for (const app of appId === undefined ? await gone() : [appId]) {
      await cloud.forget(app);
      dataApps.close(app);
    }
  });
  const accounts = new AccountService(db);
  const repoHost = new RepoHostService({ db, root: homePaths(config.home).git, accounts, urls, log, github: config.github });
  // One engine client, and one keeper of the accounts' networks for both kinds of containers.
  const docker = dockerClient(config.dockerHost);
  const networks = new AccountNetworks(docker, path.resolve(config.home), log, { range: config.networkPool, subnetPrefix: config.networkSubnetPrefix });
  const services: Services = {
    urls,
    accounts,
    guides: bundledGuides(),
    backendApps,
    dataApi: new DataApiService(dataApps, dataServices, dataRouter, () => urls.dataApi, log),
    cloud,
    cloudCode,
    devenvs: new DevEnvService(db, devEnvSettings(config), log, docker, networks),
    repoHost,
    webApps: new WebAppService({ db, settings: webAppSettings(config), repoHost, urls, log, docker, networks }),
    oauth: createOAuthService(db, urls, config),
    dashboardSessions: new DashboardSessions(db, accounts),
  };
  urls.describeEnvironmentsWith(() => services.devenvs.imageText());
  try {
    await services.devenvs.recoverInterrupted();
    await services.webApps.recoverInterrupted();
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  let stopped = false;
  const stop = async () => {
    stopped = true;
    events.close();
    await scheduler.stop();
  };
  log.debug({ home: path.resolve(config.home) }, 'platform opened');
  return {
    config,
    log,
    db,
    services,
    dataRouter,
    dataServices,
    liveQuery,
    cloudTrees,
    events,
    checkStorage: () => storage.check(),
    start: async () => {
      if (stopped) return;
      // A platform node serves no data API: LiveQuery and scheduled jobs are the data nodes' (BACKYARD_ROLE).
      const servesData = config.role !== 'platform';
      await Promise.all([events.start(), ...(servesData ? [liveQuery.start(), scheduler.start()] : [])]);
    },
    stop,
    close: async () => {
      const failures: unknown[] = [];
      const settle = async (steps: Array<() => Promise<void> | void>) => {
        for (const result of await Promise.allSettled(steps.map(async (step) => step()))) if (result.status === 'rejected') failures.push(result.reason);
      };
      await settle([stop]);
      await settle([() => liveQuery.close(), () => cloud.close(), () => services.devenvs.close(), () => services.webApps.close()]);
      await settle([() => dataApps.closeAll()]);
      await settle([() => outbound.close()]);
      await settle([() => db.close()]);
      if (failures.length) throw failures[0];
    },
  };
}
