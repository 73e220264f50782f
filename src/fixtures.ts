import { ConfigError } from './config.js';
import type { Database } from './db/database.js';
import { DeploymentRepository } from './db/deployment.repository.js';
import type { CheeseEnv } from './kernel/environment.js';
import type { Principal } from './kernel/principal.js';
import { ROLE_SCOPES } from './kernel/scopes.js';
import type { Modules } from './modules.js';
import type { AccountFacts } from './modules/identity/identity.module.js';

/**
 * The development fixtures: what seeding outside production makes besides the catalogue and the
 * admin. Made (seedSandbox), found and removed here, through the modules' services.
 */
export const TEST_CUSTOMER = { username: 'test.customer', email: 'test.customer@example.com', password: 'Gruyere and crackers 2026' } as const;

export const REMOVE_FIXTURES_COMMAND = '`fromagerie fixtures remove` (or `npm run cli -- fixtures remove`)';

/** A production start on a store holding development fixtures: the server does not start. */
export class DevelopmentFixturesError extends ConfigError {}

export interface Fixtures {
  /** The sandbox's test customer (its password is published), when it is a fixture. */
  testCustomer: AccountFacts | undefined;
  /** The sandbox orders: the test customer's, and those its closed account left anonymised. */
  orders: number[];
}

/** The test customer acting on its own account: how its fixtures are made and closed. */
function actingAs(account: Pick<AccountFacts, 'id' | 'username' | 'role'>, environment: CheeseEnv): Principal {
  return {
    accountId: account.id,
    username: account.username,
    role: account.role,
    scopes: new Set(ROLE_SCOPES[account.role]),
    environment,
    credential: { kind: 'login_token', id: 0, expiresAt: null },
  };
}

/** Sandbox and development: the documented test customer and orders 1 to 10 (README, "Sandbox"). */
export async function seedSandbox(database: Database, modules: Modules, environment: CheeseEnv): Promise<void> {
  const { directory } = modules.identity.provides;
  const { db } = database;
  let account = await directory.findByUsername(db, TEST_CUSTOMER.username);
  if (!account) {
    await modules.customers.provides.customers.signUp({ ...TEST_CUSTOMER, firstName: 'Test', lastName: 'Customer' }, { requestId: null, principal: null });
    account = (await directory.findByUsername(db, TEST_CUSTOMER.username))!;
  }
  await modules.orders.provides.orders.seedSandbox(actingAs(account, environment));
}

/**
 * Fixtures are what was made before the first production start (production never seeds, so an
 * account named test.customer signed up for later is a real customer's); everything made so far
 * when production has not started on this store.
 */
async function fixturesOf(database: Database, modules: Modules, remove: boolean): Promise<Fixtures> {
  const before = (await new DeploymentRepository(database.db).productionSince()) ?? '9999-12-31T23:59:59.999Z';
  const account = await modules.identity.provides.directory.findByUsername(database.db, TEST_CUSTOMER.username);
  const testCustomer = account && account.role === 'customer' && account.createdAt < before ? account : undefined;
  const orders = await modules.orders.provides.orders.removeSandboxOrders(testCustomer?.id ?? null, before, !remove);
  return { testCustomer, orders };
}

export function findFixtures(database: Database, modules: Modules): Promise<Fixtures> {
  return fixturesOf(database, modules, false);
}

/**
 * Removes the fixtures: the sandbox orders (those not shipped cancelled first, so their stock
 * goes back), then the test customer's account, closed as a customer closes theirs (its keys,
 * sessions, grants, webhooks and addresses go with it; running instances forget its credentials).
 * Nothing else. Idempotent: a second run finds nothing.
 */
export async function removeFixtures(database: Database, modules: Modules, environment: CheeseEnv): Promise<Fixtures> {
  const removed = await fixturesOf(database, modules, true);
  const customer = removed.testCustomer;
  if (customer) await modules.customers.provides.customers.delete(customer.username, { requestId: null, principal: actingAs(customer, environment) });
  return removed;
}

export function describeFixtures(fixtures: Fixtures): string {
  const parts = [
    ...(fixtures.testCustomer ? [`the sandbox test customer "${fixtures.testCustomer.username}" (its password is published in the README)`] : []),
    ...(fixtures.orders.length > 0 ? [`${fixtures.orders.length} sandbox order(s) (id ${fixtures.orders.join(', ')})`] : []),
  ];
  return parts.join(' and ');
}

export const hasFixtures = (fixtures: Fixtures) => fixtures.testCustomer !== undefined || fixtures.orders.length > 0;

/** CHEESE_ENV=production on a store a development start seeded: refused, before anything is marked or made. */
export async function refuseDevelopmentFixtures(database: Database, modules: Modules): Promise<void> {
  const fixtures = await findFixtures(database, modules);
  if (!hasFixtures(fixtures)) return;
  throw new DevelopmentFixturesError(
    `refusing to start with CHEESE_ENV=production: this store holds development fixtures: ${describeFixtures(fixtures)}. ` +
      `Remove them with ${REMOVE_FIXTURES_COMMAND}, with this DATA_DIR or DATABASE_URL, then start again.`,
  );
}
