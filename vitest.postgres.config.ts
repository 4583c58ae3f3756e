import { defineConfig } from 'vitest/config';

/**
 * The data API suites again, with every Backend App's data on PostgreSQL, and the suites of the
 * management API, MCP and the dashboard's settings with the platform's own state there too:
 * `npm test` runs this after the main run. The set-up starts PostgreSQL from Debian's packages.
 */
export default defineConfig({
  // graphql ships ESM (`module`: index.mjs) beside CommonJS; Vite picks the ESM file while
  // graphql-relay (CommonJS) requires the other, and graphql refuses types from a second copy.
  // Node itself loads index.js for both (no `exports` map), as here.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: [
      'test/data-*.test.ts',
      'test/parity-*.test.ts',
      'test/parse-differential.test.ts',
      'test/graphql-differential.test.ts',
      'test/graphql-documents.test.ts',
      'test/graphql-read-back.test.ts',
      'test/query.test.ts',
      'test/postgres-*.test.ts',
      // The platform's own state on PostgreSQL: the management API, MCP (and its OAuth), the dashboard's settings.
      'test/platform-store.test.ts',
      'test/rest.test.ts',
      'test/mcp.test.ts',
      'test/mcp-oauth.test.ts',
      'test/cloud-versions.test.ts',
      'test/server-options.test.ts',
      'test/dashboard-settings.test.ts',
      // The real Parse Dashboard in Chromium against the data API on PostgreSQL.
      'test/parse-dashboard.test.ts',
      'test/parse-dashboard-pages.test.ts',
      // LiveQuery and Parse's other subsystems with the apps and the platform on PostgreSQL.
      'test/livequery.test.ts',
      'test/sign-in-providers.test.ts',
      'test/emails.test.ts',
      'test/webhooks.test.ts',
      'test/scheduled-jobs.test.ts',
      'test/push.test.ts',
    ],
    exclude: ['test/data-storage.test.ts'],
    globalSetup: ['test/helpers/postgresSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    maxWorkers: 2,
  },
});
