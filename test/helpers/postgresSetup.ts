import { startPostgres } from '../../bench/postgres.js';

/**
 * vitest globalSetup of the PostgreSQL run (vitest.postgres.config.ts): one throwaway cluster from
 * Debian's packages on a port of its own for the whole run; every test server puts its apps there
 * (helpers/server.ts, postgresDatabase) in a database of its own: the platform state in its
 * schema `backyard`, each app in a schema of its own.
 */
export default async function setup(): Promise<() => void> {
  const pg = await startPostgres({ database: 'backyard' });
  process.env.BACKYARD_TEST_DATABASE_URL = pg.url;
  return () => pg.stop();
}
