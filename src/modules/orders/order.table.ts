import { tableColumns } from '../../db/table-columns.js';
import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

export const ORDER_STATUSES = ['placed', 'approved', 'shipped', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const SHIPPING_METHODS = ['standard', 'temperature_controlled', 'express_chilled'] as const;
export type ShippingMethod = (typeof SHIPPING_METHODS)[number];

export interface OrderTable {
  id: Id;
  /** The customer (or staff member) who placed it; null once that account is deleted. */
  account_id: number | null;
  status: OrderStatus;
  shipping_method: ShippingMethod;
  shipping_fee_cents: number;
  items_cents: number;
  total_cents: number;
  ship_street: string;
  ship_city: string;
  ship_state: string | null;
  ship_zip: string | null;
  ship_country: string;
  notes: string | null;
  payment_reference: string | null;
  carrier: string | null;
  tracking_number: string | null;
  ship_date: NullableTimestamp;
  estimated_delivery: NullableTimestamp;
  next_step_at: NullableTimestamp;
  event_sequence: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const ORDER_COLUMNS = tableColumns<OrderTable>()({
  id: 'not null',
  account_id: 'nullable',
  status: 'not null',
  shipping_method: 'not null',
  shipping_fee_cents: 'not null',
  items_cents: 'not null',
  total_cents: 'not null',
  ship_street: 'not null',
  ship_city: 'not null',
  ship_state: 'nullable',
  ship_zip: 'nullable',
  ship_country: 'not null',
  notes: 'nullable',
  payment_reference: 'nullable',
  carrier: 'nullable',
  tracking_number: 'nullable',
  ship_date: 'nullable',
  estimated_delivery: 'nullable',
  next_step_at: 'nullable',
  event_sequence: 'not null',
  created_at: 'not null',
  updated_at: 'not null',
});

export interface OrderItemTable {
  id: Id;
  order_id: number;
  position: number;
  cheese_id: number | null;
  cheese_slug: string;
  cheese_name: string;
  grams: number;
  price_cents: number;
}
export const ORDER_ITEM_COLUMNS = tableColumns<OrderItemTable>()({
  id: 'not null',
  order_id: 'not null',
  position: 'not null',
  cheese_id: 'nullable',
  cheese_slug: 'not null',
  cheese_name: 'not null',
  grams: 'not null',
  price_cents: 'not null',
});

export type OrderActor = 'customer' | 'staff' | 'system';

export interface OrderStatusChangeTable {
  id: Id;
  order_id: number;
  status: OrderStatus;
  actor: OrderActor;
  note: string | null;
  at: Timestamp;
}
export const ORDER_STATUS_CHANGE_COLUMNS = tableColumns<OrderStatusChangeTable>()({
  id: 'not null',
  order_id: 'not null',
  status: 'not null',
  actor: 'not null',
  note: 'nullable',
  at: 'not null',
});
