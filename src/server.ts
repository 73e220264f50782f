import v8 from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { bootstrap } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { runsBackgroundWork, startJobs } from './jobs.js';
import { NotFoundError } from './kernel/errors.js';
import { startTracing } from './kernel/start-tracing.js';
import { API_VERSION } from './version.js';
import { jobsOf, workersOf } from './modules.js';
import { PROBE_PATHS } from './modules/health/health.module.js';
import { serveMetrics, type MetricsOutcome } from './modules/metrics/metrics.module.js';

/** After the drain delay, how long requests in flight get to finish before the process exits anyway. */
const FINISH_IN_FLIGHT_MS = 10_000;

async function main(): Promise<void> {
  const loaded = loadConfig();
  // Before the heap grows: a flag of V8's collector, read at every full collection.
  if (loaded.heapGrowingPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${loaded.heapGrowingPercent}`);
  // OpenTelemetry is loaded here only, and only with an OTLP endpoint set (src/kernel/start-tracing.ts).
  const tracer = await startTracing(loaded.tracing, { serviceVersion: API_VERSION });
  const config = { ...loaded, tracer };
  // One database and one set of services serve the bootstrap and then the requests.
  const database = openDatabase(config);
  const app = await buildApp(config, { database });
  if (config.role === 'worker') {
    // A worker serves its probes only: the API's routes answer 404 before any of their hooks run.
    const probes = new Set<string>(PROBE_PATHS);
    app.addHook('onRequest', async (request) => {
      if (!probes.has(request.url.split('?')[0]!)) throw new NotFoundError('This is a ROLE=worker instance: it serves /v2/health/live and /v2/health/ready only.');
    });
  }
  const boot = await bootstrap(config, database, app.modules, { seed: true, migrate: config.migrateOnBoot });
  // SQLite's one instance (ROLE=all) alone serves the file, so a running Idempotency-Key is a
  // crashed predecessor's: its retry runs now, not a lease later. (Not in bootstrap: the CLI's
  // seed runs it beside a live server.)
  const soleInstance = database.dialect === 'sqlite' && config.role === 'all';
  const freedKeys = soleInstance ? await app.modules.idempotency.provides.keys.releaseAllRunning() : 0;
  // Stored webhook secrets no key opens (APP_SECRET changed without APP_SECRET_PREVIOUS): their deliveries cannot be signed.
  const unreadableSecrets = await app.modules.webhooks.provides.storedSecrets.unreadable();
  if (unreadableSecrets > 0) {
    app.log.warn({ unreadableWebhookSecrets: unreadableSecrets }, `${unreadableSecrets} stored webhook secret(s) open under neither APP_SECRET nor APP_SECRET_PREVIOUS: their deliveries fail until the webhooks' secrets are rolled (docs/operations.md, "Rotating APP_SECRET")`);
  }
  const { readiness } = app.modules.health.provides;
  const runsJobs = runsBackgroundWork(config.role);
  const jobs = runsJobs ? startJobs(jobsOf(app.modules), app.log, app.metrics.jobs, tracer) : undefined;
  const workers = runsJobs ? workersOf(app.modules) : [];
  let workStopped: Promise<unknown> | undefined;
  // Jobs finish the run in progress (its leases are then released by its own transaction).
  const stopWork = () => (workStopped ??= Promise.all([jobs?.stop(), ...workers.map((worker) => worker.stop())]));
  closeWithGrace({ delay: config.drainDelayMs + FINISH_IN_FLIGHT_MS }, async ({ signal, err }) => {
    if (err) {
      app.log.error({ err }, 'shutting down after a fatal error');
    } else {
      // Readiness fails at once; the load balancer notices within the drain delay and stops
      // sending requests, which this instance keeps serving meanwhile.
      readiness.drain();
      // Long polls of the event log answer now: their clients poll again, on another instance.
      app.modules.events.provides.drain();
      app.modules.requestLog.provides.drain();
      app.log.info({ signal, drainDelayMs: config.drainDelayMs }, 'draining');
      if (config.drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.drainDelayMs));
      app.log.info({ signal }, 'shutting down');
    }
    // Jobs and the dispatcher stop claiming first; then Fastify stops listening, lets the
    // requests in flight finish, and its onClose hooks close the pools.
    await stopWork();
    await app.close();
    // Only now: the app's onClose hooks (the broadcast, leases) still use the pool.
    await database.close();
    // The last spans go out, within a bound: a dead collector never holds the exit.
    await tracer.shutdown();
  });
  // Fastify runs onClose hooks in reverse: this one runs before those buildApp registered.
  app.addHook('onClose', async () => {
    await stopWork();
    // Keys of requests that did not finish are freed now, not a lease later (issue 20).
    await app.modules.idempotency.provides.leases.close();
  });
  // Prometheus scrapes a port of its own, never the public one (docs/metrics.md); closed with the app.
  const served: { metrics?: MetricsOutcome } = {};
  app.addHook('onClose', async () => (served.metrics && 'server' in served.metrics ? served.metrics.server.close() : undefined));
  await app.listen({ port: config.port, host: config.host });
  const metrics = (served.metrics = await serveMetrics(app.metrics, { port: config.metricsPort, host: config.metricsHost, log: app.log }));
  for (const worker of workers) worker.start();

  const base = config.publicUrl;
  app.log.info({ database: app.database.location, environment: config.env, role: config.role, migrations: boot.migrations, seededCheeses: boot.seededCheeses, freedIdempotencyKeys: freedKeys }, 'ready');
  if (config.role === 'worker') {
    console.log(`\nFromagerie worker (jobs and webhook dispatcher) running  (environment: ${config.env})`);
    console.log(`  Probes:            ${base}/v2/health/live, ${base}/v2/health/ready`);
  } else {
    console.log(`\nFromagerie API listening on ${base}/v2  (environment: ${config.env}${config.role === 'api' ? '; ROLE=api: no jobs here' : ''})`);
    const signIn = boot.generatedAdminPassword ? `as "${boot.adminUsername}" with the password below` : `as "${boot.adminUsername}" with ADMIN_PASSWORD, or any account`;
    console.log(`  Dashboard:         ${base}/dashboard  (sign in ${signIn})`);
    console.log(`  Interactive docs:  ${base}/docs`);
    console.log(`  OpenAPI document:  ${base}/v2/openapi.json`);
  }
  console.log(`  Metrics:           ${metricsLine(metrics)}`);
  if (boot.generatedAdminPassword) {
    // Printed once, on the terminal only, never through the logger: a plain line of its own, after the banner.
    console.log(`\n  First start: created the admin account "${boot.adminUsername}". Its password (shown only this once):\n`);
    console.log(`    ${boot.generatedAdminPassword}\n`);
    console.log(`  Sign in at ${base}/dashboard to create an API key, or:`);
    console.log(`    npm run cli -- api-keys create --user ${boot.adminUsername} --scopes admin\n`);
  }
}

/** Where Prometheus scrapes this instance, or why it cannot (a port taken is said here, not only logged). */
function metricsLine(outcome: MetricsOutcome): string {
  if ('off' in outcome) return 'off (METRICS_PORT=0)';
  if ('failure' in outcome) return `NOT SERVED: ${outcome.failure}`;
  const { address, port } = outcome.server.address;
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics  (Prometheus; not on the public port)`;
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
