import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Tests in tiers (issue 29 §2), each a vitest project:
 * - `unit`: rules and pure code, no database, no app, no process;
 * - `http`: the app over a real database and real HTTP, in this process (contract tests);
 * - `process`: what starts processes (servers, the CLI, the build, npm pack), browsers or private
 *   PostgreSQL/Redis/HAProxy.
 * `npm test` runs all three; `npm run test:fast` the first two. A file lands in `http` unless
 * listed below: a new process test must be named here.
 */
export const UNIT = [
  'test/**/*-rules.test.ts',
  'test/architecture/*.test.ts',
  'test/identity/password.test.ts',
  'test/orders/order-input.test.ts',
  'test/http/auth-admission.test.ts',
  'test/platform/expiring-cache.test.ts',
  'test/platform/pagination.test.ts',
  'test/platform/key-ring.test.ts',
  'test/platform/config-docs.test.ts',
  'test/platform/env-example.test.ts',
];

export const PROCESS = [
  // Browsers (Debian's Chromium)
  'test/dashboard/dashboard-a11y.test.ts',
  'test/dashboard/dashboard-browser.test.ts',
  'test/dashboard/dashboard-layout.test.ts',
  'test/dashboard/dashboard-live.test.ts',
  'test/dashboard/dashboard-orders-browser.test.ts',
  'test/oauth/oauth-browser.test.ts',
  'test/platform/docs-browser.test.ts',
  // Server and CLI processes, the build, npm pack, tsc
  'test/platform/build.test.ts',
  'test/platform/readme-walkthrough.test.ts',
  'test/platform/cli-*.test.ts',
  'test/platform/admin-password-policy.test.ts',
  'test/platform/development-fixtures-production.test.ts',
  'test/platform/sqlite-file-modes.test.ts',
  'test/platform/metrics.test.ts',
  'test/platform/compose.test.ts',
  // promtool, and a real Prometheus scraping a server process (Debian's prometheus package)
  'test/platform/alerts.test.ts',
  'test/platform/prometheus.test.ts',
  'test/health/cli-migrate-healthcheck.test.ts',
  'test/health/drain.test.ts',
  'test/platform/app-secret-rotation.test.ts',
  'test/platform/backup-restore.test.ts',
  'test/platform/tracing-process.test.ts',
  'test/health/roles.test.ts',
  'test/idempotency/restart-frees-keys.test.ts',
  'test/orders/order-crash.test.ts',
  'test/webhooks/webhook-crash.test.ts',
  'test/sdk/sdk-pack.test.ts',
  'test/sdk/sdk-quickstart.test.ts',
  'test/sdk/sdk-types.test.ts',
  'test/openapi/openapi-breaking.test.ts',
  // The operator CLI beside an app of this process (test/architecture/test-tiers.test.ts found them)
  'test/dashboard/prototype-names.test.ts',
  'test/identity/first-key.test.ts',
  'test/limits/rate-limits.test.ts',
  'test/oauth/oauth-clients.test.ts',
  'test/platform/cross-instance-cache.test.ts',
  // A private PostgreSQL, Redis or HAProxy
  'test/health/postgres-restart.test.ts',
  'test/limits/redis-fail-closed.test.ts',
  'test/limits/redis-deadline.test.ts',
  'test/http/trust-proxy-haproxy.test.ts',
  'test/platform/haproxy-tls.test.ts',
];

/**
 * Process-tier files whose subject has no SQL dialect (the docs page, the SDK's package, types and
 * README, the OpenAPI breaking-change check, the compose file, the secrets file, a Redis deadline):
 * when TEST_DATABASE_URL selects PostgreSQL they are left out, having run in the SQLite pass
 * (.ci/run runs both). Each still passes on PostgreSQL; it only proves nothing new there.
 */
export const DIALECT_NEUTRAL = [
  'test/platform/docs-browser.test.ts',
  'test/sdk/sdk-pack.test.ts',
  'test/sdk/sdk-quickstart.test.ts',
  'test/sdk/sdk-types.test.ts',
  'test/openapi/openapi-breaking.test.ts',
  'test/platform/compose.test.ts',
  'test/platform/cli-secrets-init.test.ts',
  'test/limits/redis-deadline.test.ts',
];
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

// Two cores: two test files at a time, each with its own database.
export default defineConfig({
  // Tests run the SDK from its sources, as the CLI's bin does (its `@fromagerie/source` export
  // condition): `npm test` on a fresh clone needs no `npm run sdk:build` first. An alias, not
  // the condition itself: extra conditions also reach other packages (prom-client's optional
  // @opentelemetry/api then resolved to a build Node cannot load).
  resolve: { alias: [{ find: /^@fromagerie\/sdk$/, replacement: fileURLToPath(new URL('packages/sdk/src/index.ts', import.meta.url)) }] },
  test: {
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
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'http', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...PROCESS] } },
      { extends: true, test: { name: 'process', include: PROCESS, exclude: onPostgres ? DIALECT_NEUTRAL : [] } },
    ],
  },
});
