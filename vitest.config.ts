import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites spawn servers and child processes; two cores are all a CI machine has.
    maxWorkers: 2,
  },
});
