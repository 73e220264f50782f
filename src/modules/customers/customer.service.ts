import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { CheeseDirectory } from '../catalogue/catalogue.module.js';
import type { AccountService } from '../identity/identity.module.js';
import type { NewEvent, Outbox } from '../outbox/outbox.module.js';
import type { CustomerRepository, ProfileFields } from './customer.repository.js';
import { customerAccess, inputProblems, NOT_YOURS, tierFor } from './customer.rules.js';
import type { CustomerInputBody, CustomerReplaceBody, CustomerView, ReplacedCustomerView } from './customer.schema.js';

export interface CustomerServiceOptions {
  db: Kysely<DB>;
  customers: CustomerRepository;
  accounts: AccountService;
  cheeses: CheeseDirectory;
  outbox: Outbox;
  /** Asked inside the closing transaction, before the account goes (orders anonymise theirs). */
  accountDeletion?: AccountDeletionPort;
}

/** Declared here, implemented by the orders module: what closing an account does to its orders. */
export interface AccountDeletionPort {
  beforeAccountDeleted(trx: Transaction<DB>, accountId: number): Promise<void>;
}

/** Fields compared to say what a customer.updated event changed. */
const VIEW_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'favouriteCheese'] as const;

/** customer.updated naming what changed (fields of the profile, `addresses`, `preferences`, `password`). */
export function customerChanged(view: CustomerView, changed: string[]): NewEvent {
  return customerEvent('customer.updated', view, { changed });
}

function customerEvent(type: 'customer.created' | 'customer.updated', view: CustomerView, extra: Record<string, unknown> = {}): NewEvent {
  return {
    type,
    aggregateType: 'customer',
    audience: { accountId: view.id },
    aggregateId: String(view.id),
    data: { customer_id: String(view.id), username: view.username, customer_status: view.customerStatus, ...extra },
  };
}

export class CustomerService {
  constructor(private readonly options: CustomerServiceOptions) {}

  async signUp(input: CustomerInputBody, ctx: ChangeContext): Promise<CustomerView> {
    this.#checkInput(input);
    const { db, accounts, customers, outbox } = this.options;
    return db.transaction().execute(async (trx) => {
      const fields = await this.#profile(trx, input);
      const account = await accounts.register(trx, { username: input.username, email: input.email, password: input.password });
      await customers.insertProfile(trx, account.id, fields);
      const view = (await customers.findByUsername(trx, account.username))!;
      await outbox.record(trx, [customerEvent('customer.created', view)], ctx);
      // The answer holds the new customer's data: a stored replay of it goes with their account.
      await ctx.created?.(trx, account.username, account.id);
      return view;
    });
  }

  async get(username: string, principal: Principal): Promise<CustomerView> {
    return this.require(this.options.db, username, principal);
  }

  /** PUT: every field of CustomerInput; the username cannot change; credentials only with proof. */
  async replace(username: string, input: CustomerReplaceBody, ctx: ChangeContext & { principal: Principal }): Promise<ReplacedCustomerView> {
    this.#checkInput(input);
    if (input.username.toLowerCase() !== username.toLowerCase()) throw ValidationFailedError.field('username', 'cannot be changed; it must be the username of the path');
    const { db, accounts, customers, outbox } = this.options;
    const { view, credentials } = await db.transaction().execute(async (trx) => {
      const before = await this.require(trx, username, ctx.principal);
      const fields = await this.#profile(trx, input);
      const credentials = await accounts.changeCredentials(trx, before.id, { email: input.email, password: input.password, currentPassword: input.currentPassword }, ctx.principal);
      await customers.updateProfile(trx, before.id, fields);
      const after = (await customers.findByUsername(trx, before.username))!;
      const changed: string[] = VIEW_FIELDS.filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
      if (credentials.passwordChanged) changed.push('password');
      await outbox.record(trx, [customerChanged(after, changed)], ctx);
      return { view: after, credentials };
    });
    if (!credentials.passwordChanged) return view;
    // A new password ended the account's other sessions and grants: this instance stops trusting them now.
    accounts.forget(view.id, ctx.principal.credential.kind === 'login_token' ? ctx.principal.credential.id : null);
    const keys = await accounts.activeKeysOf(view.id);
    return {
      ...view,
      passwordChange: {
        loginSessionsEnded: credentials.loginSessionsEnded,
        oauthGrantsRevoked: credentials.oauthGrantsRevoked,
        apiKeysStillValid: keys.map((key) => ({ id: key.id, name: key.name, keyPrefix: key.keyPrefix, scopes: key.scopes.split(' ').filter(Boolean), expiresAt: key.expiresAt })),
      },
    };
  }

  /** Removes the account and everything of it: profile, keys, login sessions. */
  async delete(username: string, ctx: ChangeContext & { principal: Principal }): Promise<void> {
    const { db, accounts } = this.options;
    const accountId = await db.transaction().execute(async (trx) => {
      const customer = await this.require(trx, username, ctx.principal);
      await this.options.accountDeletion?.beforeAccountDeleted(trx, customer.id);
      await accounts.remove(trx, customer.id);
      return customer.id;
    });
    accounts.forget(accountId);
  }

  /**
   * Sets the tier that `deliveredGrams` (the last 12 months) earns; when it changes,
   * `customer.updated` names `customerStatus`, in the caller's transaction. Accounts without a
   * customer profile (staff) have no tier. True when the tier changed.
   */
  async applyTier(trx: Transaction<DB>, accountId: number, deliveredGrams: number, ctx: ChangeContext): Promise<boolean> {
    const current = await this.options.customers.findById(trx, accountId);
    if (!current) return false;
    const tier = tierFor(deliveredGrams);
    if (tier === current.customerStatus) return false;
    await this.options.customers.setTier(trx, accountId, tier);
    await this.options.outbox.record(trx, [customerChanged({ ...current, customerStatus: tier }, ['customerStatus'])], ctx);
    return true;
  }

  /** The customer the principal may reach, or 403/404 (customer.rules.ts). */
  async require(executor: Kysely<DB>, username: string, principal: Principal): Promise<CustomerView> {
    const access = customerAccess(principal, username);
    if (access === 'forbidden') throw new ForbiddenError(NOT_YOURS);
    const customer = await this.options.customers.findByUsername(executor, username);
    if (!customer) {
      // A customer's own account that is not a customer's (a staff member's, say) is theirs to know about.
      throw access === 'own' ? new ForbiddenError('This account has no customer profile.') : new NotFoundError(`Customer ${username} not found.`);
    }
    return customer;
  }

  /** The rules the schema cannot state; with a body the schema refused, the same 422 names them (customer.rules.ts). */
  #checkInput(input: CustomerInputBody): void {
    const errors = inputProblems(input);
    if (errors.length > 0) throw new ValidationFailedError(`The request body is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, errors);
  }

  async #profile(trx: Transaction<DB>, input: CustomerInputBody): Promise<ProfileFields> {
    const favourite = input.favouriteCheese ?? null;
    let favouriteCheese: ProfileFields['favouriteCheese'] = null;
    if (favourite && 'cheeseId' in favourite) {
      const cheese = await this.options.cheeses.find(trx, favourite.cheeseId);
      if (!cheese) throw ValidationFailedError.field('favouriteCheese.cheeseId', `no cheese ${String(favourite.cheeseId).slice(0, 120)}`);
      favouriteCheese = cheese;
    } else if (favourite) {
      favouriteCheese = { id: null, name: favourite.name.trim() };
    }
    return { firstName: input.firstName ?? null, lastName: input.lastName ?? null, phone: input.phone ?? null, favouriteCheese };
  }
}
