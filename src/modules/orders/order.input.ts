import type { Updateable } from 'kysely';
import { isCountryCode } from '../../kernel/countries.js';
import { ValidationFailedError, type FieldError } from '../../kernel/errors.js';
import type { Placement, PlacementLine } from './order.placement.js';
import { kilogramsToGrams } from './order.rules.js';
import type { OrderInputBody, OrderPatchBody, StoreOrderBody } from './order.schema.js';
import type { OrderTable } from './order.table.js';

/** Form B's address, as orders and subscriptions take it. */
export interface AddressB {
  line1: string;
  city: string;
  region?: string | null;
  postalCode?: string | null;
  country: string;
}

/** Form A (`POST /store/order`): whole kilograms, Form A's address names, shipped standard. */
export function storeOrderPlacement(body: StoreOrderBody): Placement {
  const address = body.shippingAddress;
  return {
    lines: body.items.map((item, i) => ({ cheese: item.cheeseId, grams: item.quantity * 1000, field: `items.${i}`, quantityField: `items.${i}.quantity` })),
    address: { street: address.street, city: address.city, state: address.state ?? null, zip: address.zipCode ?? null, country: address.country },
    countryField: 'shippingAddress.country',
    method: 'standard',
    notes: body.notes ?? null,
  };
}

/**
 * Form B (`POST /orders`): kilograms in steps of 0.05, a shipping method. Every line with a
 * quantity that is not one is named in a single 422, so a client fixes them all at once.
 */
export function orderPlacement(body: OrderInputBody): Placement {
  const problems: FieldError[] = [];
  const lines: PlacementLine[] = body.items.map((item, i) => {
    const grams = kilogramsToGrams(item.quantity_kg);
    if ('problem' in grams) problems.push({ field: `items.${i}.quantity_kg`, message: grams.problem });
    return { cheese: item.cheeseId, grams: 'grams' in grams ? grams.grams : 0, field: `items.${i}`, quantityField: `items.${i}.quantity_kg` };
  });
  if (problems.length > 0) throw new ValidationFailedError(`The order is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`, problems);
  return { lines, address: addressFromFormB(body.shipping.address), countryField: 'shipping.address.country', method: body.shipping.method, notes: body.notes ?? null };
}

/** Form B's names (`line1`, `region`, `postalCode`) as an order's address. */
export function addressFromFormB(address: AddressB): Placement['address'] {
  return { street: address.line1, city: address.city, state: address.region ?? null, zip: address.postalCode ?? null, country: address.country };
}

/** A quantity in kilograms (0.05 kg steps) as grams, or a 422 naming `field`. */
export function gramsOf(kg: number, field: string): number {
  const grams = kilogramsToGrams(kg);
  if ('problem' in grams) throw ValidationFailedError.field(field, grams.problem);
  return grams.grams;
}

/**
 * The owner's part of a merge patch (`notes`, `shippingAddress` with Form A's names) as the
 * order's columns: only what was sent changes. An unknown country is a 422.
 */
export function ownerPatchChanges(body: Pick<OrderPatchBody, 'notes' | 'shippingAddress'>): Updateable<OrderTable> {
  const address = body.shippingAddress;
  if (address?.country !== undefined && !isCountryCode(address.country.toUpperCase())) throw ValidationFailedError.field('shippingAddress.country', 'is not an ISO 3166-1 alpha-2 country code');
  return {
    ...(body.notes !== undefined ? { notes: body.notes } : {}),
    ...(address?.street !== undefined ? { ship_street: address.street } : {}),
    ...(address?.city !== undefined ? { ship_city: address.city } : {}),
    ...(address?.state !== undefined ? { ship_state: address.state } : {}),
    ...(address?.zipCode !== undefined ? { ship_zip: address.zipCode } : {}),
    ...(address?.country !== undefined ? { ship_country: address.country.toUpperCase() } : {}),
  };
}
