import { tableColumns } from '../../db/table-columns.js';
import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { ShippingMethod } from './order.table.js';

export type SubscriptionStatus = 'active' | 'cancelled';

export interface SubscriptionTable {
  id: Id;
  account_id: number;
  status: SubscriptionStatus;
  grams: number;
  shipping_method: ShippingMethod;
  ship_street: string;
  ship_city: string;
  ship_state: string | null;
  ship_zip: string | null;
  ship_country: string;
  day_of_month: number;
  next_order_at: NullableTimestamp;
  last_order_id: number | null;
  last_problem: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const SUBSCRIPTION_COLUMNS = tableColumns<SubscriptionTable>()({
  id: 'not null',
  account_id: 'not null',
  status: 'not null',
  grams: 'not null',
  shipping_method: 'not null',
  ship_street: 'not null',
  ship_city: 'not null',
  ship_state: 'nullable',
  ship_zip: 'nullable',
  ship_country: 'not null',
  day_of_month: 'not null',
  next_order_at: 'nullable',
  last_order_id: 'nullable',
  last_problem: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});
