import { defineConfig } from 'vitest/config';

/**
 * The data API suites again, with every Backend App's data on PostgreSQL (issue 16): `npm test` runs
 * this after the main run. The set-up starts PostgreSQL from Debian's packages.
 */
export default defineConfig({
  test: {
    include: [
      'test/data-*.test.ts',
      'test/parity-*.test.ts',
      'test/parse-differential.test.ts',
      'test/query.test.ts',
      'test/postgres-*.test.ts',
      'test/platform-store.test.ts',
    ],
    exclude: ['test/data-storage.test.ts'],
    globalSetup: ['test/helpers/postgresSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    maxWorkers: 2,
  },
});
