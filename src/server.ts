import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { bootstrap } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { startJobs } from './jobs.js';
import { jobsOf, workersOf } from './modules.js';

async function main(): Promise<void> {
  const config = loadConfig();
  // One database and one set of services serve the bootstrap and then the requests.
  const database = openDatabase(config);
  const app = await buildApp(config, { database });
  app.addHook('onClose', () => database.close());
  const boot = await bootstrap(config, database, app.modules, { seed: true });
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after a fatal error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  const stopJobs = startJobs(jobsOf(app.modules), app.log);
  app.addHook('onClose', async () => stopJobs());
  const workers = workersOf(app.modules);
  // Registered after the database's own onClose hook, so it runs first (Fastify runs onClose in reverse).
  app.addHook('onClose', async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  });
  await app.listen({ port: config.port, host: config.host });
  for (const worker of workers) worker.start();

  const base = config.publicUrl;
  app.log.info({ database: app.database.location, environment: config.env, migrations: boot.migrations, seededCheeses: boot.seededCheeses }, 'ready');
  console.log(`\nFromagerie API listening on ${base}/v2  (environment: ${config.env})`);
  console.log(`  Dashboard:         ${base}/dashboard  (sign in with any account, e.g. the admin below)`);
  console.log(`  Interactive docs:  ${base}/docs`);
  console.log(`  OpenAPI document:  ${base}/v2/openapi.json`);
  if (boot.generatedAdminPassword) {
    // Printed once, on the terminal only, never through the logger.
    console.log(`\n  First start: created admin "${boot.adminUsername}" with password: ${boot.generatedAdminPassword}`);
    console.log(`  It will not be shown again. Sign in at ${base}/dashboard to create an API key, or:`);
    console.log(`    npm run cli -- api-keys create --user ${boot.adminUsername} --scopes admin\n`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
