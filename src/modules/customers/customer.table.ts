import { tableColumns } from '../../db/table-columns.js';
import type { Bool, Id, Timestamp } from '../../db/columns.js';

export const CUSTOMER_TIERS = ['bronze', 'silver', 'gold', 'platinum'] as const;
export type CustomerTier = (typeof CUSTOMER_TIERS)[number];

export interface CustomerProfileTable {
  /** The account this profile belongs to (accounts of role `customer`). */
  account_id: number;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  customer_status: CustomerTier;
  /** Set: the favourite is this cheese (by reference). Null with a name: by name. */
  favourite_cheese_id: number | null;
  favourite_cheese_name: string | null;
  /** JSON: the preference profile with the milk allergies. */
  preferences: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const CUSTOMER_PROFILE_COLUMNS = tableColumns<CustomerProfileTable>()({
  account_id: 'not null',
  first_name: 'nullable',
  last_name: 'nullable',
  phone: 'nullable',
  customer_status: 'not null',
  favourite_cheese_id: 'nullable',
  favourite_cheese_name: 'nullable',
  preferences: 'not null',
  created_at: 'not null',
  updated_at: 'not null',
});

export interface CustomerAddressTable {
  id: Id;
  account_id: number;
  label: string | null;
  recipient: string | null;
  line1: string;
  line2: string | null;
  city: string;
  region: string | null;
  postal_code: string | null;
  /** ISO 3166-1 alpha-2. */
  country: string;
  phone: string | null;
  /** Exactly one address of a customer with any is the default (a partial unique index). */
  is_default: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const CUSTOMER_ADDRESS_COLUMNS = tableColumns<CustomerAddressTable>()({
  id: 'not null',
  account_id: 'not null',
  label: 'nullable',
  recipient: 'nullable',
  line1: 'not null',
  line2: 'nullable',
  city: 'not null',
  region: 'nullable',
  postal_code: 'nullable',
  country: 'not null',
  phone: 'nullable',
  is_default: 'not null',
  created_at: 'not null',
  updated_at: 'not null',
});
