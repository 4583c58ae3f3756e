import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql ships ESM (`module`: index.mjs) beside CommonJS; Vite picks the ESM file while
  // graphql-relay (CommonJS) requires the other, and graphql refuses types from a second copy.
  // Node itself loads index.js for both (no `exports` map), as here.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites spawn servers and child processes; two cores are all a CI machine has.
    maxWorkers: 2,
  },
});
