import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CheeseDirectory } from '../catalogue/catalogue.module.js';
import type { AccountDirectory, AccountFacts } from '../identity/identity.module.js';
import type { CustomerTier } from './customer.table.js';
import { toIso } from '../../db/columns.js';
import type { CustomerView } from './customer.schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface ProfileFields {
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  favouriteCheese: { id: number | null; name: string } | null;
}

function selectProfile(executor: Kysely<DB>, accountId: number) {
  return executor
    .selectFrom('customer_profiles')
    .select(['first_name', 'last_name', 'phone', 'customer_status', 'favourite_cheese_id', 'favourite_cheese_name', 'updated_at'])
    .where('account_id', '=', accountId);
}

type ProfileRow = Awaited<ReturnType<ReturnType<typeof selectProfile>['executeTakeFirstOrThrow']>>;

/** `currentCheeseName`: the favourite cheese's name in the catalogue now (it may have been renamed since it was chosen). */
function toView(account: AccountFacts, row: ProfileRow, currentCheeseName: string | undefined): CustomerView {
  const favouriteName = currentCheeseName ?? row.favourite_cheese_name;
  return {
    id: account.id,
    username: account.username,
    firstName: row.first_name,
    lastName: row.last_name,
    email: account.email ?? '',
    phone: row.phone,
    customerStatus: row.customer_status,
    favouriteCheese:
      row.favourite_cheese_id !== null ? { cheeseId: row.favourite_cheese_id, name: favouriteName ?? '' } : favouriteName !== null ? { name: favouriteName } : null,
    createdAt: account.createdAt,
    updatedAt: toIso(row.updated_at),
  };
}

const profileColumns = (fields: ProfileFields) => ({
  first_name: fields.firstName,
  last_name: fields.lastName,
  phone: fields.phone,
  favourite_cheese_id: fields.favouriteCheese?.id ?? null,
  favourite_cheese_name: fields.favouriteCheese?.name ?? null,
});

/**
 * A customer is an account of role `customer` (identity's) with a profile (ours), whose
 * favourite cheese is catalogue's: each part is asked of its owner, in the caller's transaction.
 */
export class CustomerRepository {
  constructor(
    private readonly accounts: AccountDirectory,
    private readonly cheeses: CheeseDirectory,
    private readonly clock: Clock = systemClock,
  ) {}

  async #view(executor: Kysely<DB>, account: AccountFacts | undefined): Promise<CustomerView | undefined> {
    if (account?.role !== 'customer') return undefined;
    const row = await selectProfile(executor, account.id).executeTakeFirst();
    if (!row) return undefined;
    const cheese = row.favourite_cheese_id === null ? undefined : await this.cheeses.find(executor, Number(row.favourite_cheese_id));
    return toView(account, row, cheese?.name);
  }

  async findById(executor: Kysely<DB>, accountId: number): Promise<CustomerView | undefined> {
    return this.#view(executor, await this.accounts.findById(executor, accountId));
  }

  async setTier(trx: Transaction<DB>, accountId: number, tier: CustomerTier): Promise<void> {
    await trx.updateTable('customer_profiles').set({ customer_status: tier, updated_at: this.clock.iso() }).where('account_id', '=', accountId).execute();
  }

  async findByUsername(executor: Kysely<DB>, username: string): Promise<CustomerView | undefined> {
    return this.#view(executor, await this.accounts.findByUsername(executor, username));
  }

  async insertProfile(trx: Transaction<DB>, accountId: number, fields: ProfileFields): Promise<void> {
    const now = this.clock.iso();
    await trx.insertInto('customer_profiles').values({ account_id: accountId, ...profileColumns(fields), customer_status: 'bronze', preferences: '{}', created_at: now, updated_at: now }).execute();
  }

  async preferencesOf(executor: Kysely<DB>, accountId: number): Promise<{ json: string; updatedAt: string }> {
    const row = await executor.selectFrom('customer_profiles').select(['preferences', 'updated_at']).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return { json: row.preferences, updatedAt: toIso(row.updated_at) };
  }

  async setPreferences(trx: Transaction<DB>, accountId: number, json: string): Promise<void> {
    await trx.updateTable('customer_profiles').set({ preferences: json, updated_at: this.clock.iso() }).where('account_id', '=', accountId).execute();
  }

  async updateProfile(trx: Transaction<DB>, accountId: number, fields: ProfileFields): Promise<void> {
    await trx.updateTable('customer_profiles').set({ ...profileColumns(fields), updated_at: this.clock.iso() }).where('account_id', '=', accountId).execute();
  }
}
