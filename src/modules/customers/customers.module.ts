import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { latePorts, type FeatureModule, type Wired } from '../../kernel/module.js';
import { NO_GUARD, type BruteForceGuard } from '../../kernel/brute-force.js';
import type { CheeseDirectory } from '../catalogue/catalogue.module.js';
import type { AccountDirectory, AccountService } from '../identity/identity.module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { Clock } from '../../kernel/clock.js';
import { CustomerRepository } from './customer.repository.js';
import { customerRoutes } from './customer.routes.js';
import { CustomerService, type AccountDeletionPort } from './customer.service.js';
import { AddressRepository } from './address.repository.js';
import { AddressService } from './address.service.js';
import { PreferencesService } from './preferences.service.js';
import { profileRoutes } from './profile.routes.js';
export { accountPasswordProblem } from './customer.rules.js';

export interface CustomersOptions {
  db: Kysely<DB>;
  /** Identity's accounts: a customer is an account of role `customer` with a profile. */
  accounts: AccountService;
  /** Identity's reads of accounts: a customer's username, e-mail and role. */
  directory: AccountDirectory;
  /** Catalogue's lookup, for a favourite cheese given by reference. */
  cheeses: CheeseDirectory;
  outbox: Outbox;
  /** Limits sign-ups per address (the limits module). */
  bruteForce?: BruteForceGuard;
  clock?: Clock;
}

/** Wired once orders exist (they are built after customers: they read their tiers). */
export interface CustomersPorts {
  /** Asked before an account is closed; the orders module implements it. */
  accountDeletion: AccountDeletionPort;
}

export interface CustomersProvides {
  /** Sign-up and lookups, for the sandbox's test customer. */
  customers: CustomerService;
  /** A customer's preference profile, reached as the principal may (recommendations). */
  preferences: PreferencesService;
}

export type CustomersModule = FeatureModule<CustomersProvides> & Wired<CustomersPorts>;
export type { AccountDeletionPort, CustomerService } from './customer.service.js';
export type { PreferencesService } from './preferences.service.js';

/** Customer accounts: sign-up, Form A's profile, Form B's addresses and preferences, closing an account. */
export function createCustomersModule(options: CustomersOptions): CustomersModule {
  const late = latePorts<CustomersPorts>('customers');
  const repository = new CustomerRepository(options.directory, options.cheeses, options.clock);
  const customers = new CustomerService({ ...options, customers: repository, accountDeletion: { beforeAccountDeleted: (trx, accountId) => late.ports.accountDeletion.beforeAccountDeleted(trx, accountId) } });
  const addresses = new AddressService({ db: options.db, addresses: new AddressRepository(options.clock), customers, outbox: options.outbox });
  const preferences = new PreferencesService({ db: options.db, repository, customers, outbox: options.outbox });
  return {
    name: 'customers',
    wire: late.wire,
    routes: async (app) => {
      await app.register(customerRoutes, { customers, bruteForce: options.bruteForce ?? NO_GUARD });
      await app.register(profileRoutes, { addresses, preferences });
    },
    jobs: [],
    provides: { customers, preferences },
  };
}
export { ownAccountOnly } from './customer.access.js';
