import { defineConfig } from 'vitest/config';

// Two cores: two test files at a time, each with its own database.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // Files share each worker's module graph (every file builds its own app and database, and
    // no test mocks modules): loading the app once per worker instead of once per file took
    // a suite run from 248 to 172 s on SQLite and from 287 to 215 s on PostgreSQL.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
