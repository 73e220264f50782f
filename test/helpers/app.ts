import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { bootstrap } from '../../src/bootstrap.js';
import type { AppConfig, CheeseEnv } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import type { Role, Scope } from '../../src/kernel/scopes.js';
import { jobsOf, workersOf } from '../../src/modules.js';
import { hashPassword } from '../../src/modules/identity/password.hash.js';
import { AccountRepository } from '../../src/modules/identity/account.repository.js';
import { createTestStorage, type TestStorage } from './database.js';
import { apiKey, bearer, HttpClient } from './http.js';

export interface TestApp {
  app: FastifyInstance;
  config: AppConfig;
  database: Database;
  http: HttpClient;
  /** An API key of a fresh account of that role with those scopes. */
  key(scopes: Scope[], role?: Role): Promise<string>;
  /** Runs one of the modules' background jobs now, as the job runner would; returns its count. */
  runJob(name: string, now?: Date): Promise<number>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  seed?: boolean;
  env?: CheeseEnv;
  config?: Partial<AppConfig>;
  /** When given, the app logs at `info` and every line lands here. */
  logLines?: string[];
  /** Start the modules' workers (the webhook dispatcher) as the server does. */
  workers?: boolean;
  /** Run over this storage (another instance's, to run two instances on one database); the caller disposes of it. */
  storage?: TestStorage;
}

let accounts = 0;

/** The configuration every test app (and test/helpers/modules.ts) runs with over `storage`, with a test's own settings over it. */
export function testConfig(storage: TestStorage, options: Pick<TestAppOptions, 'env' | 'config' | 'logLines'> = {}): AppConfig {
  return {
    env: options.env ?? 'development',
    host: '127.0.0.1',
    port: 0,
    dataDir: storage.dataDir,
    databaseUrl: storage.databaseUrl,
    databaseSchema: storage.databaseSchema,
    adminUsername: 'admin',
    adminPassword: 'test-staff-password',
    logLevel: options.logLines ? 'info' : 'silent',
    publicUrl: 'http://localhost:8080',
    lowStockThresholdKg: 5,
    bodyLimitBytes: 1_048_576,
    trustProxy: false,
    appSecret: 'test-secret-test-secret-test-secret-0123',
    authCacheTtlMs: 5000,
    loginTokenTtlSeconds: 3600,
    dashboard: { sessionIdleMinutes: 120, sessionMaxHours: 12, cookieName: 'fromagerie_session' },
    // None: a rotated refresh token presented again revokes its grant at once; test/oauth/oauth-refresh.test.ts sets its own.
    oauthRefreshReuseIntervalSeconds: 0,
    readCacheMaxBytes: 32 * 1024 * 1024,
    corsOrigins: [],
    requestTimeoutMs: 60_000,
    headersTimeoutMs: 10_000,
    maxConnectionsPerClient: 0,
    imageConcurrency: 2,
    imageQueue: 4,
    readCacheTtlMs: 2000,
    eventsMaxHeldPerAccount: 100,
    requestLog: { enabled: true, bodies: 'all', retentionDays: 7 },
    // Off: tests make many requests; test/limits/rate-limits.test.ts turns them on with its own figures.
    rateLimits: { enabled: false, free: { perHour: 100, burst: 10 }, pro: { perHour: 10_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 },
    redisUrl: undefined,
    tracing: {},
    idempotencyTtlSeconds: 86_400,
    role: 'all',
    migrateOnBoot: true,
    drainDelayMs: 0,
    heapGrowingPercent: 0,
    // Sign-ups and logins at a test's cost (password.hash.ts keeps N per hash): see AppConfig.passwordCost.
    passwordCost: 1024,
    // A writer thread per test app would cost each its start-up: test/request-log/request-log-thread.test.ts tests the thread.
    requestLogWriter: 'event-loop',
    redisKeyPrefix: `fromagerie-test:${process.pid}:${Math.random().toString(36).slice(2)}:`,
    // Orders stay where they are unless a test runs the lifecycle (short delays, or the job by hand).
    orderDelays: { captureS: -1, shipS: -1, deliverS: -1 },
    // Short, so retries and timeouts are seen in seconds; the dispatcher runs as in production.
    webhooks: { retryScheduleS: [0, 0.2, 0.4], timeoutMs: 2000, retentionDays: 30, concurrency: 16, endpointConcurrency: 4, accountConcurrency: 4, pollMs: 200 },
    ...options.config,
  };
}

/** The real app on a real ephemeral port, over a fresh SQLite file or PostgreSQL schema. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const storage: TestStorage = options.storage ?? (await createTestStorage());
  const config = testConfig(storage, options);
  const database = openDatabase({ ...config, poolSize: 4 });
  const logLines = options.logLines;
  const app = await buildApp(config, logLines ? { database, logStream: { write: (line) => logLines.push(line) } } : { database, logger: false });
  await bootstrap(config, database, app.modules, { seed: options.seed ?? false });
  await app.listen({ port: config.port, host: '127.0.0.1' });
  const workers = options.workers ? workersOf(app.modules) : [];
  for (const worker of workers) worker.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const http = new HttpClient(`http://127.0.0.1:${port}`);
  const accountRepository = new AccountRepository(database.db);
  const passwordHash = await hashPassword('not-used-in-tests');
  return {
    app,
    config,
    database,
    http,
    async key(scopes, role = 'admin') {
      const account = await accountRepository.create(database.db, { username: `user${++accounts}_${process.pid}`, passwordHash, role });
      if ('taken' in account) throw new Error('test account name taken');
      const created = await app.modules.identity.provides.apiKeys.create({ accountId: account.id, role }, { scopes }, null);
      return created.key;
    },
    runJob(name, now) {
      const job = jobsOf(app.modules).find((j) => j.name === name);
      if (!job) throw new Error(`no job named ${name}`);
      return job.run(now);
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await app.close();
      await database.close();
      if (!options.storage) await storage.dispose();
    },
  };
}

/** An app and one admin key, sent as `Authorization: Bearer` (`auth`) and as `X-API-Key` (`read`). */
export async function createAdminTestApp(options: TestAppOptions = {}): Promise<{ t: TestApp; auth: Record<string, string>; read: Record<string, string> }> {
  const t = await createTestApp(options);
  const key = await t.key(['admin']);
  return { t, auth: bearer(key), read: apiKey(key) };
}
