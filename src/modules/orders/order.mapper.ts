import { toIso, toIsoOrNull } from '../../db/columns.js';
import type { ItemRecord, OrderRecord } from './order.repository.js';
import { lineCents } from './order.rules.js';
import type { OrderView } from './order.schema.js';

const money = (cents: number) => Number(cents) / 100;

export function toOrderView(record: OrderRecord, items: readonly ItemRecord[]): OrderView {
  const tracking =
    record.carrier !== null && record.tracking_number !== null && record.estimated_delivery !== null
      ? { carrier: record.carrier, trackingNumber: record.tracking_number, estimatedDelivery: toIso(record.estimated_delivery) }
      : null;
  return {
    id: Number(record.id),
    customer: record.customer ?? null,
    status: record.status,
    items: items.map((item) => ({
      cheeseId: item.cheese_id === null ? null : Number(item.cheese_id),
      cheeseSlug: item.cheese_slug,
      cheeseName: item.cheese_name,
      quantity: item.grams / 1000,
      quantityKg: item.grams / 1000,
      pricePerKg: money(item.price_cents),
      lineTotal: money(lineCents(item.grams, Number(item.price_cents))),
    })),
    shippingAddress: { street: record.ship_street, city: record.ship_city, state: record.ship_state, zipCode: record.ship_zip, country: record.ship_country },
    shipping: { method: record.shipping_method, fee: money(record.shipping_fee_cents) },
    notes: record.notes,
    subtotal: money(record.items_cents),
    total: money(record.total_cents),
    currency: 'USD',
    shipDate: toIsoOrNull(record.ship_date),
    tracking,
    createdAt: toIso(record.created_at),
    updatedAt: toIso(record.updated_at),
  };
}

/** The `data` of every order event: enough to act on without fetching the order. */
export function orderEventData(view: OrderView): Record<string, unknown> {
  return {
    order_id: String(view.id),
    status: view.status,
    customer: view.customer,
    total: view.total,
    currency: view.currency,
    shipping_method: view.shipping.method,
    items: view.items.map((item) => ({ cheese_id: item.cheeseId === null ? null : String(item.cheeseId), name: item.cheeseName, quantity_kg: item.quantityKg, price_per_kg: item.pricePerKg })),
    ...(view.tracking ? { tracking_number: view.tracking.trackingNumber, carrier: view.tracking.carrier, estimated_delivery: view.tracking.estimatedDelivery } : {}),
  };
}
