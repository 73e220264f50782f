import { bootstrap } from '../../src/bootstrap.js';
import type { AppConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import type { ChangeContext } from '../../src/kernel/change-context.js';
import type { Principal } from '../../src/kernel/principal.js';
import { SCOPES, type Role, type Scope } from '../../src/kernel/scopes.js';
import { createModules, type Modules } from '../../src/modules.js';
import { testConfig } from './app.js';
import { createTestStorage, type TestStorage } from './database.js';

/**
 * The service tier (issue 29 §2): the modules as src/modules.ts composes them, over a real
 * database (a fresh SQLite file or PostgreSQL schema), without Fastify or HTTP. Fixtures are
 * made through the modules' services, as the table-ownership test asks of every test.
 */
export interface TestModules {
  modules: Modules;
  config: AppConfig;
  database: Database;
  /** A fresh customer account, registered through identity, and a principal acting for it. */
  customer(scopes?: Scope[]): Promise<Principal>;
  /** The bootstrap admin (staff), as a principal with every scope. */
  admin(): Promise<Principal>;
  /** A change made by `principal` outside any request. */
  context(principal: Principal | null): ChangeContext;
  close(): Promise<void>;
}

let customers = 0;

export async function createTestModules(options: { seed?: boolean; config?: Partial<AppConfig> } = {}): Promise<TestModules> {
  const storage: TestStorage = await createTestStorage();
  const config = testConfig(storage, options);
  const database = openDatabase({ ...config, poolSize: 4 });
  const modules = createModules(config, database);
  await bootstrap(config, database, modules, { seed: options.seed ?? false });
  const principal = (accountId: number, username: string, role: Role, scopes: readonly Scope[]): Principal => ({
    accountId,
    username,
    role,
    scopes: new Set(scopes),
    environment: config.env,
    credential: { kind: 'api_key', id: 0, expiresAt: null },
  });
  return {
    modules,
    config,
    database,
    async customer(scopes = ['read:cheeses', 'read:orders', 'write:orders']) {
      const username = `customer${++customers}_${process.pid}`;
      const account = await database.db.transaction().execute((trx) => modules.identity.provides.accounts.register(trx, { username, email: `${username}@example.com`, password: 'a long enough password' }));
      return principal(account.id, username, 'customer', scopes);
    },
    async admin() {
      const account = await modules.identity.provides.accounts.findByUsername(config.adminUsername);
      if (!account) throw new Error('no bootstrap admin');
      return principal(account.id, account.username, 'admin', SCOPES);
    },
    context: (acting) => ({ requestId: null, principal: acting }),
    async close() {
      await modules.catalogue.provides.changes.close();
      await modules.limits.provides.close();
      await modules.idempotency.provides.leases.close();
      modules.metrics.provides.close();
      await database.close();
      await storage.dispose();
    },
  };
}
