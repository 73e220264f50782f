import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import type { Principal } from '../../kernel/principal.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { CustomerRepository } from './customer.repository.js';
import { customerChanged, type CustomerService } from './customer.service.js';
import { DEFAULT_PREFERENCES, type PreferencesInputBody, type PreferencesView } from './preferences.schema.js';

export class PreferencesService {
  constructor(private readonly options: { db: Kysely<DB>; repository: CustomerRepository; customers: CustomerService; outbox: Outbox }) {}

  async get(username: string, principal: Principal): Promise<PreferencesView> {
    const { db, repository, customers } = this.options;
    const customer = await customers.require(db, username, principal);
    return this.#view(await repository.preferencesOf(db, customer.id));
  }

  /** The customer (as the principal may reach them: 403/404 otherwise) and their profile, for recommendations. */
  async ofCustomer(username: string, principal: Principal): Promise<{ accountId: number; preferences: PreferencesView }> {
    const { db, repository, customers } = this.options;
    const customer = await customers.require(db, username, principal);
    return { accountId: customer.id, preferences: this.#view(await repository.preferencesOf(db, customer.id)) };
  }

  /** The account's profile as the system reads it (the monthly subscription order): no access check. */
  async ofAccount(executor: Kysely<DB>, accountId: number): Promise<PreferencesView> {
    return this.#view(await this.options.repository.preferencesOf(executor, accountId));
  }

  /** PUT: the whole profile; customer.updated names `preferences`. */
  async replace(username: string, input: PreferencesInputBody, ctx: ChangeContext & { principal: Principal }): Promise<PreferencesView> {
    const { db, repository, customers, outbox } = this.options;
    const profile = { ...DEFAULT_PREFERENCES, ...input };
    return db.transaction().execute(async (trx) => {
      const customer = await customers.require(trx, username, ctx.principal);
      await repository.setPreferences(trx, customer.id, JSON.stringify(profile));
      await outbox.record(trx, [customerChanged(customer, ['preferences'])], ctx);
      return this.#view(await repository.preferencesOf(trx, customer.id));
    });
  }

  #view(stored: { json: string; updatedAt: string }): PreferencesView {
    return { ...DEFAULT_PREFERENCES, ...(JSON.parse(stored.json) as Partial<PreferencesView>), updatedAt: stored.updatedAt };
  }
}
