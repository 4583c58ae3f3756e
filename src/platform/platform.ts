import path from 'node:path';
import { homePaths, type Config } from '../config.js';
import type { Logger } from '../log.js';
import { AccountService } from './accounts/service.js';
import { BackendAppService } from './backendapps/service.js';
import { bundledGuides } from './guides/bundled.js';
import type { Services } from './services.js';
import { openDatabase, type Db } from './store/db.js';
import { PublicUrls } from './urls.js';

/** The running domain: the platform store and the services over it, without any front end. */
export interface Platform {
  config: Config;
  log: Logger;
  db: Db;
  services: Services;
  /** Closes the databases. Call once, after the front ends have stopped. */
  close(): void;
}

/**
 * Opens `platform.db` under the configured home (migrating it) and builds the domain services.
 * @throws Error when the home cannot be written or the database is from a newer Backyard.
 */
export function openPlatform(config: Config, log: Logger): Platform {
  const db = openDatabase(homePaths(config.home).platformDb);
  const urls = new PublicUrls(config.publicUrl);
  const services: Services = {
    urls,
    accounts: new AccountService(db),
    guides: bundledGuides(),
    backendApps: new BackendAppService(db, config.home, urls),
  };
  log.debug({ home: path.resolve(config.home) }, 'platform opened');
  return {
    config,
    log,
    db,
    services,
    close: () => {
      if (db.open) db.close();
    },
  };
}
