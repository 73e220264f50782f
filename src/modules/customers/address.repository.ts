import { sql, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { toBool, toIso } from '../../db/columns.js';
import type { AddressView } from './address.schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const COLUMNS = ['id', 'label', 'recipient', 'line1', 'line2', 'city', 'region', 'postal_code', 'country', 'phone', 'is_default', 'created_at', 'updated_at'] as const;

export type AddressFields = Omit<AddressView, 'id' | 'isDefault' | 'createdAt' | 'updatedAt'>;

type Row = {
  id: number; label: string | null; recipient: string | null; line1: string; line2: string | null; city: string; region: string | null;
  postal_code: string | null; country: string; phone: string | null; is_default: boolean | number; created_at: Date | string; updated_at: Date | string;
};

function toView(row: Row): AddressView {
  const { postal_code, is_default, created_at, updated_at, ...rest } = row;
  return { ...rest, postalCode: postal_code, isDefault: toBool(is_default), createdAt: toIso(created_at), updatedAt: toIso(updated_at) };
}

const columnsOf = (fields: AddressFields) => ({
  label: fields.label,
  recipient: fields.recipient,
  line1: fields.line1,
  line2: fields.line2,
  city: fields.city,
  region: fields.region,
  postal_code: fields.postalCode,
  country: fields.country,
  phone: fields.phone,
});

export class AddressRepository {
  constructor(private readonly clock: Clock = systemClock) {}

  async list(executor: Kysely<DB>, accountId: number): Promise<AddressView[]> {
    const rows = await executor.selectFrom('customer_addresses').select(COLUMNS).where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map(toView);
  }

  async find(executor: Kysely<DB>, accountId: number, addressId: number): Promise<AddressView | undefined> {
    const row = await executor.selectFrom('customer_addresses').select(COLUMNS).where('account_id', '=', accountId).where('id', '=', addressId).executeTakeFirst();
    return row && toView(row);
  }

  async insert(trx: Transaction<DB>, accountId: number, fields: AddressFields, isDefault: boolean): Promise<number> {
    const now = this.clock.iso();
    const row = await trx
      .insertInto('customer_addresses')
      .values({ account_id: accountId, ...columnsOf(fields), is_default: isDefault, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async update(trx: Transaction<DB>, addressId: number, fields: AddressFields): Promise<void> {
    await trx.updateTable('customer_addresses').set({ ...columnsOf(fields), updated_at: this.clock.iso() }).where('id', '=', addressId).execute();
  }

  /** Makes `addressId` the account's only default (the other one first, for the unique index). */
  async makeDefault(trx: Transaction<DB>, accountId: number, addressId: number): Promise<void> {
    const now = this.clock.iso();
    await trx.updateTable('customer_addresses').set({ is_default: false, updated_at: now }).where('account_id', '=', accountId).where('is_default', '=', true).where('id', '<>', addressId).execute();
    await trx.updateTable('customer_addresses').set({ is_default: true, updated_at: now }).where('id', '=', addressId).execute();
  }

  async delete(trx: Transaction<DB>, addressId: number): Promise<void> {
    await trx.deleteFrom('customer_addresses').where('id', '=', addressId).execute();
  }

  async oldest(trx: Transaction<DB>, accountId: number): Promise<number | undefined> {
    return (await trx.selectFrom('customer_addresses').select('id').where('account_id', '=', accountId).orderBy('id').limit(1).executeTakeFirst())?.id;
  }

  /** Serialises address changes per customer (a row lock on PostgreSQL; SQLite writers are serial already). */
  async lockCustomer(trx: Transaction<DB>, accountId: number): Promise<void> {
    if (isPostgres(trx)) await sql`select account_id from customer_profiles where account_id = ${accountId} for update`.execute(trx);
  }
}
