import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { Role } from './scopes.js';

export interface AccountTable {
  id: Id;
  username: string;
  email: string | null;
  password_hash: string;
  role: Role;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type KeyEnvironment = 'live' | 'test';

export interface ApiKeyTable {
  id: Id;
  account_id: number;
  name: string | null;
  /** First characters of the key, shown in listings so owners can tell keys apart. */
  key_prefix: string;
  /** SHA-256 of the whole key, hex; the key itself is never stored. */
  key_hash: string;
  environment: KeyEnvironment;
  /** Space-separated, as OAuth writes scopes. */
  scopes: string;
  expires_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  expiry_notified_at: NullableTimestamp;
  created_at: Timestamp;
  /** Creation, then revocation: what changes a key's own state (not its use). */
  updated_at: Timestamp;
}
