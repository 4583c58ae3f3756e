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
import { EVERYTHING, postgresStorage, sqliteStorage } from '../data/storage/provider.js';
import { Peers } from './peers.js';
import { dockerClient } from './devenvs/engine.js';
import { AccountNetworks } from './devenvs/networks.js';
import { DevEnvService, devEnvSettings } from './devenvs/service.js';
import { RepoHostService } from './repohost/service.js';
import { WebAppService, webAppSettings } from './webapps/service.js';

/** The running domain: the platform store and the services over it, without any front end. */
export interface Platform {
  config: Config;
  log: Logger;
  /** The platform's own state: `platform.db`, or the `backyard` schema of `BACKYARD_DATABASE_URL`. */
  db: Sql;
  services: Services;
  /** Routes data API calls (Interface B) for the HTTP mount. */
  dataRouter: DataRouter;
  /** Parse's LiveQuery over WebSocket at the data API's address (issue 17). */
  liveQuery: LiveQueryServer;
  /** Stops the services' background work and closes the databases. Call once, after the front ends have stopped. */
  close(): Promise<void>;
  /**
   * Checks that the database of the apps' data answers (PostgreSQL; SQLite always does).
   * @throws Error saying which database and what failed.
   */
  checkStorage(): Promise<void>;
}

/**
 * Opens the platform's store (migrating it): `platform.db` under the configured home, or with
 * `BACKYARD_DATABASE_URL` the `backyard` schema of that PostgreSQL database (issue 16); builds the
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
  // Several processes on one PostgreSQL (issue 16): what one changes outside the database, the others hear of.
  const peers = new Peers(storage.broadcast, log);
  // A new app's folder gets its starting cloud code tree (issue 4, item 1).
  const backendApps = new BackendAppService(
    db,
    config.home,
    urls,
    (appId, folder) => cloudCode.initialise(appId, folder),
    // A deleted app's workers stop and its data.db closes before its folder goes.
    async (appId) => {
      await cloud.forget(appId);
      await dataApps.remove(appId);
      await peers.announce('app_deleted', appId);
    },
    (appId) => dataApps.reloadSettings(appId),
  );
  const cloudCode = new CloudCodeService({
    home: config.home,
    apps: backendApps,
    urls,
    reload: async (appId) => {
      try {
        await cloud.reload(appId);
      } finally {
        await peers.announce('cloud_deployed', appId);
      }
    },
  });
  const dataRouter = createDataRouter(log, () => new URL(urls.dataApi).pathname);
  const cloud = new WorkerCloudRuntime({
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
  const outbound = new OutboundClient({ allowHosts: config.cloudAllowHosts });
  const dataApps = new DataApps(config.home, backendApps, () => urls.dataApi, cloud, storage, (appId, store) => liveQuery.watch(appId, store), {
    outbound,
    mailer: new Mailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, allowHosts: config.cloudAllowHosts, log }),
    webhookTimeoutMs: config.functionTimeoutMs,
    log,
  });
  const liveQuery = new LiveQueryServer(dataApps, log, storage.broadcast);
  // Another process deployed cloud code: a live worker here loads it; deleted an app: forget it here.
  peers.hear('cloud_deployed', async (appId) => {
    for (const app of appId === EVERYTHING ? cloud.appsWithWorkers() : [appId]) if (cloud.liveWorkers(app) > 0) await cloud.reload(app);
  });
  peers.hear('app_deleted', async (appId) => {
    const gone = async () => {
      const open = dataApps.openApps();
      const known = await Promise.all(open.map((id) => backendApps.keys(id)));
      return open.filter((_, i) => !known[i]);
    };
    for (const app of appId === EVERYTHING ? await gone() : [appId]) {
      await cloud.forget(app);
      dataApps.close(app);
    }
  });
  const accounts = new AccountService(db);
  const repoHost = new RepoHostService({ db, root: homePaths(config.home).git, accounts, urls, log, github: config.github });
  // One engine client, and one keeper of the accounts' networks for both kinds of containers (issue 18).
  const docker = dockerClient(config.dockerHost);
  const networks = new AccountNetworks(docker, path.resolve(config.home), log);
  const services: Services = {
    urls,
    accounts,
    guides: bundledGuides(),
    backendApps,
    dataApi: new DataApiService(dataApps, dataRouter, () => urls.dataApi, log),
    cloud,
    cloudCode,
    devenvs: new DevEnvService(db, devEnvSettings(config), log, docker, networks),
    repoHost,
    webApps: new WebAppService({ db, settings: webAppSettings(config), repoHost, urls, log, docker, networks }),
  };
  urls.describeEnvironmentsWith(() => services.devenvs.imageText());
  try {
    await services.devenvs.recoverInterrupted();
    await services.webApps.recoverInterrupted();
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  log.debug({ home: path.resolve(config.home) }, 'platform opened');
  return {
    config,
    log,
    db,
    services,
    dataRouter,
    liveQuery,
    checkStorage: () => storage.check(),
    close: async () => {
      liveQuery.close();
      await Promise.all([
        cloud.close(),
        services.devenvs.close(),
        services.webApps.close(),
      ]);
      await dataApps.closeAll();
      await outbound.close();
      await db.close();
    },
  };
}
