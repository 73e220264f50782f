import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { bootstrap } from '../../src/bootstrap.js';
import type { AppConfig, CheeseEnv } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { ROLE_SCOPES, type Role, type Scope } from '../../src/modules/identity/scopes.js';
import { hashPassword } from '../../src/modules/identity/password.js';
import { AccountRepository } from '../../src/modules/identity/account.repository.js';
import { createTestStorage, type TestStorage } from './database.js';
import { HttpClient } from './http.js';

export interface TestApp {
  app: FastifyInstance;
  config: AppConfig;
  database: Database;
  http: HttpClient;
  /** An API key of a fresh account of that role with those scopes. */
  key(scopes: Scope[], role?: Role): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  seed?: boolean;
  env?: CheeseEnv;
  config?: Partial<AppConfig>;
}

let accounts = 0;

/** The real app on a real ephemeral port, over a fresh SQLite file or PostgreSQL schema. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const storage: TestStorage = await createTestStorage();
  const config: AppConfig = {
    env: options.env ?? 'development',
    host: '127.0.0.1',
    port: 0,
    dataDir: storage.dataDir,
    databaseUrl: storage.databaseUrl,
    databaseSchema: storage.databaseSchema,
    adminUsername: 'admin',
    adminPassword: 'test-admin-password',
    logLevel: 'silent',
    publicUrl: 'http://localhost:8080',
    lowStockThresholdKg: 5,
    bodyLimitBytes: 1_048_576,
    trustProxy: false,
    appSecret: 'test-secret-test-secret-test-secret-0123',
    authCacheTtlMs: 5000,
    readCacheTtlMs: 2000,
    ...options.config,
  };
  const database = openDatabase({ ...config, poolSize: 4 });
  const app = await buildApp(config, { database, logger: false });
  await bootstrap(config, database, app.services, { seed: options.seed ?? false });
  await app.listen({ port: 0, host: '127.0.0.1' });
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
      const account = await accountRepository.create({ username: `user${++accounts}_${process.pid}`, passwordHash, role });
      const created = await app.services.apiKeys.create({ accountId: account.id, role }, { scopes }, new Set(ROLE_SCOPES[role]));
      return created.key;
    },
    async close() {
      await app.close();
      await database.close();
      await storage.dispose();
    },
  };
}
