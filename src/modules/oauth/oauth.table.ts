import { tableColumns } from '../../db/table-columns.js';
import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

export interface OAuthGrantTable {
  id: Id;
  /** oauth_clients.id (the row, not the public client_id). */
  client_id: number;
  /** Who consented; for client credentials, the account that registered the client. */
  account_id: number;
  /** Space-separated, as OAuth writes them. */
  scopes: string;
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
}
export const OAUTH_GRANT_COLUMNS = tableColumns<OAuthGrantTable>()({
  id: 'not null',
  client_id: 'not null',
  account_id: 'not null',
  scopes: 'not null',
  revoked_at: 'nullable',
  created_at: 'not null',
});

export type OAuthTokenKind = 'authorization_code' | 'access_token' | 'refresh_token';

export interface OAuthTokenTable {
  id: Id;
  grant_id: number;
  kind: OAuthTokenKind;
  /** SHA-256 of the token, hex. */
  token_hash: string;
  scopes: string;
  redirect_uri: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  created_at: Timestamp;
}
export const OAUTH_TOKEN_COLUMNS = tableColumns<OAuthTokenTable>()({
  id: 'not null',
  grant_id: 'not null',
  kind: 'not null',
  token_hash: 'not null',
  scopes: 'not null',
  redirect_uri: 'nullable',
  code_challenge: 'nullable',
  code_challenge_method: 'nullable',
  expires_at: 'not null',
  consumed_at: 'nullable',
  revoked_at: 'nullable',
  created_at: 'not null',
});
