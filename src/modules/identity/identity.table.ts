import { tableColumns } from '../../db/table-columns.js';
import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';
import type { Role } from '../../kernel/scopes.js';
import type { Plan } from '../../kernel/plans.js';

export interface AccountTable {
  id: Id;
  username: string;
  /** username in lower case: usernames are unique regardless of case. */
  username_key: string;
  email: string | null;
  /** email in lower case, unique. */
  email_key: string | null;
  password_hash: string;
  role: Role;
  /** Rate-limit plan; set at creation from the role, changed by staff. */
  plan: Plan;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const ACCOUNT_COLUMNS = tableColumns<AccountTable>()({
  id: 'not null',
  username: 'not null',
  username_key: 'not null',
  email: 'nullable',
  email_key: 'nullable',
  password_hash: 'not null',
  role: 'not null',
  plan: 'not null',
  created_at: 'not null',
  updated_at: 'not null',
});

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
  /** The key's last 4 characters, shown with its prefix; null for keys made before 2.5. */
  key_last4: string | null;
  /** When a roll replaced the key: it works until expires_at but no longer counts against the cap. */
  rolled_at: NullableTimestamp;
  created_at: Timestamp;
  /** Creation, then revocation or a roll: what changes a key's own state (not its use). */
  updated_at: Timestamp;
}
export const API_KEY_COLUMNS = tableColumns<ApiKeyTable>()({
  id: 'not null',
  account_id: 'not null',
  name: 'nullable',
  key_prefix: 'not null',
  key_hash: 'not null',
  environment: 'not null',
  scopes: 'not null',
  expires_at: 'nullable',
  last_used_at: 'nullable',
  revoked_at: 'nullable',
  expiry_notified_at: 'nullable',
  key_last4: 'nullable',
  rolled_at: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});

export interface LoginSessionTable {
  id: Id;
  account_id: number;
  expires_at: Timestamp;
  /** Set by logout, a password change or the account's deletion. */
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
}
export const LOGIN_SESSION_COLUMNS = tableColumns<LoginSessionTable>()({
  id: 'not null',
  account_id: 'not null',
  expires_at: 'not null',
  revoked_at: 'nullable',
  created_at: 'not null',
});

/** A browser's sign-in to the dashboard (or the OAuth pages): the cookie's token is kept only as its SHA-256. */
export interface BrowserSessionTable {
  id: Id;
  account_id: number;
  token_hash: string;
  /** When the password was last given: the sign-in, or the last step-up. */
  authenticated_at: Timestamp;
  last_seen_at: Timestamp;
  /** The absolute end, fixed at sign-in. */
  expires_at: Timestamp;
  created_at: Timestamp;
}
export const BROWSER_SESSION_COLUMNS = tableColumns<BrowserSessionTable>()({
  id: 'not null',
  account_id: 'not null',
  token_hash: 'not null',
  authenticated_at: 'not null',
  last_seen_at: 'not null',
  expires_at: 'not null',
  created_at: 'not null',
});

export type OAuthClientType = 'confidential' | 'public';

export interface OAuthClientTable {
  id: Id;
  client_id: string;
  /** SHA-256 of the secret, hex; null for public clients, which have none. */
  secret_hash: string | null;
  name: string;
  client_type: OAuthClientType;
  /** JSON array of the exact redirect URIs allowed. */
  redirect_uris: string;
  /** Space-separated grant types. */
  grants: string;
  /** Space-separated scopes the client may ask for. */
  scopes: string;
  created_by: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const OAUTH_CLIENT_COLUMNS = tableColumns<OAuthClientTable>()({
  id: 'not null',
  client_id: 'not null',
  secret_hash: 'nullable',
  name: 'not null',
  client_type: 'not null',
  redirect_uris: 'not null',
  grants: 'not null',
  scopes: 'not null',
  created_by: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});
