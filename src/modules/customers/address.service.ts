import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { isCountryCode } from '../../kernel/countries.js';
import { NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { AddressFields, AddressRepository } from './address.repository.js';
import type { AddressInputBody, AddressPatchBody, AddressView } from './address.schema.js';
import { customerChanged, type CustomerService } from './customer.service.js';

type Acting = ChangeContext & { principal: Principal };

function country(code: string, field = 'country'): string {
  const upper = code.toUpperCase();
  if (!isCountryCode(upper)) throw ValidationFailedError.field(field, `"${code}" is not an ISO 3166-1 alpha-2 country code`);
  return upper;
}

/** A customer's shipping addresses; exactly one is the default whenever there is any. */
export class AddressService {
  constructor(private readonly options: { db: Kysely<DB>; addresses: AddressRepository; customers: CustomerService; outbox: Outbox }) {}

  async list(username: string, principal: Principal): Promise<AddressView[]> {
    const { db, addresses, customers } = this.options;
    const customer = await customers.require(db, username, principal);
    return addresses.list(db, customer.id);
  }

  async create(username: string, input: AddressInputBody, ctx: Acting): Promise<AddressView> {
    const fields: AddressFields = {
      label: input.label ?? null,
      recipient: input.recipient ?? null,
      line1: input.line1,
      line2: input.line2 ?? null,
      city: input.city,
      region: input.region ?? null,
      postalCode: input.postalCode ?? null,
      country: country(input.country),
      phone: input.phone ?? null,
    };
    const created = await this.#change(username, ctx, async (trx, accountId) => {
      const first = (await this.options.addresses.oldest(trx, accountId)) === undefined;
      const id = await this.options.addresses.insert(trx, accountId, fields, false);
      if (first || input.isDefault) await this.options.addresses.makeDefault(trx, accountId, id);
      // The answer holds the customer's address: a stored replay of it goes with their account.
      await ctx.created?.(trx, id, accountId);
      return id;
    });
    return created!;
  }

  async patch(username: string, addressId: number, patch: AddressPatchBody, ctx: Acting): Promise<AddressView> {
    const changed = await this.#change(username, ctx, async (trx, accountId) => {
      const current = await this.#require(trx, accountId, addressId);
      const { isDefault, ...changes } = patch;
      if (changes.line1 === null || changes.city === null || changes.country === null) throw ValidationFailedError.field('address', 'line1, city and country cannot be cleared');
      const { id: _id, isDefault: _d, createdAt: _c, updatedAt: _u, ...fields } = current;
      await this.options.addresses.update(trx, addressId, { ...fields, ...changes, ...(changes.country !== undefined && { country: country(changes.country) }) } as AddressFields);
      if (isDefault === true) await this.options.addresses.makeDefault(trx, accountId, addressId);
      if (isDefault === false && current.isDefault) throw ValidationFailedError.field('isDefault', 'make another address the default instead');
      return addressId;
    });
    return changed!;
  }

  async delete(username: string, addressId: number, ctx: Acting): Promise<void> {
    await this.#change(username, ctx, async (trx, accountId) => {
      const current = await this.#require(trx, accountId, addressId);
      await this.options.addresses.delete(trx, addressId);
      // The default went: the oldest remaining address takes its place.
      const next = current.isDefault ? await this.options.addresses.oldest(trx, accountId) : undefined;
      if (next !== undefined) await this.options.addresses.makeDefault(trx, accountId, next);
      return null;
    });
  }

  async #require(executor: Kysely<DB>, accountId: number, addressId: number): Promise<AddressView> {
    const address = await this.options.addresses.find(executor, accountId, addressId);
    if (!address) throw new NotFoundError(`Address ${addressId} not found.`);
    return address;
  }

  /** One transaction: the customer's addresses locked, the change, and customer.updated. */
  async #change(username: string, ctx: Acting, work: (trx: Transaction<DB>, accountId: number) => Promise<number | null>): Promise<AddressView | undefined> {
    const { db, addresses, customers, outbox } = this.options;
    return db.transaction().execute(async (trx) => {
      const customer = await customers.require(trx, username, ctx.principal);
      await addresses.lockCustomer(trx, customer.id);
      const id = await work(trx, customer.id);
      await outbox.record(trx, [customerChanged(customer, ['addresses'])], ctx);
      return id === null ? undefined : addresses.find(trx, customer.id, id);
    });
  }
}
