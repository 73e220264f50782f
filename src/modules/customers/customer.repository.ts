import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CustomerTier } from './customer.table.js';
import { nowIso, toIso } from '../../db/columns.js';
import type { CustomerView } from './customer.schema.js';

export interface ProfileFields {
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  favouriteCheese: { id: number | null; name: string } | null;
}

function selectCustomers(executor: Kysely<DB>) {
  return executor
    .selectFrom('accounts as a')
    .innerJoin('customer_profiles as p', 'p.account_id', 'a.id')
    .leftJoin('cheeses as c', 'c.id', 'p.favourite_cheese_id')
    // Explicit columns: never the password hash.
    .select([
      'a.id', 'a.username', 'a.email', 'a.created_at', 'p.first_name', 'p.last_name', 'p.phone', 'p.customer_status',
      'p.favourite_cheese_id', 'p.favourite_cheese_name', 'c.name as current_cheese_name', 'p.updated_at',
    ])
    .where('a.role', '=', 'customer');
}

type CustomerRow = Awaited<ReturnType<ReturnType<typeof selectCustomers>['executeTakeFirstOrThrow']>>;

function toView(row: CustomerRow): CustomerView {
  const favouriteName = row.current_cheese_name ?? row.favourite_cheese_name;
  return {
    id: row.id,
    username: row.username,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email ?? '',
    phone: row.phone,
    customerStatus: row.customer_status,
    favouriteCheese:
      row.favourite_cheese_id !== null ? { cheeseId: row.favourite_cheese_id, name: favouriteName ?? '' } : favouriteName !== null ? { name: favouriteName } : null,
    createdAt: toIso(row.created_at),
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

export class CustomerRepository {
  async findById(executor: Kysely<DB>, accountId: number): Promise<CustomerView | undefined> {
    const row = await selectCustomers(executor).where('a.id', '=', accountId).executeTakeFirst();
    return row && toView(row);
  }

  async setTier(trx: Transaction<DB>, accountId: number, tier: CustomerTier): Promise<void> {
    await trx.updateTable('customer_profiles').set({ customer_status: tier, updated_at: nowIso() }).where('account_id', '=', accountId).execute();
  }

  async findByUsername(executor: Kysely<DB>, username: string): Promise<CustomerView | undefined> {
    const row = await selectCustomers(executor).where('a.username_key', '=', username.toLowerCase()).executeTakeFirst();
    return row && toView(row);
  }

  async insertProfile(trx: Transaction<DB>, accountId: number, fields: ProfileFields): Promise<void> {
    const now = nowIso();
    await trx.insertInto('customer_profiles').values({ account_id: accountId, ...profileColumns(fields), customer_status: 'bronze', preferences: '{}', created_at: now, updated_at: now }).execute();
  }

  async preferencesOf(executor: Kysely<DB>, accountId: number): Promise<{ json: string; updatedAt: string }> {
    const row = await executor.selectFrom('customer_profiles').select(['preferences', 'updated_at']).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return { json: row.preferences, updatedAt: toIso(row.updated_at) };
  }

  async setPreferences(trx: Transaction<DB>, accountId: number, json: string): Promise<void> {
    await trx.updateTable('customer_profiles').set({ preferences: json, updated_at: nowIso() }).where('account_id', '=', accountId).execute();
  }

  async updateProfile(trx: Transaction<DB>, accountId: number, fields: ProfileFields): Promise<void> {
    await trx.updateTable('customer_profiles').set({ ...profileColumns(fields), updated_at: nowIso() }).where('account_id', '=', accountId).execute();
  }
}
