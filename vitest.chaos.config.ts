import { defineConfig } from 'vitest/config';

// The fault suite (test/chaos, issue 20): real processes, one scenario at a time, never part of
// `npm test`. Each scenario has its own 120 s budget and a watchdog inside it.
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.chaos.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
