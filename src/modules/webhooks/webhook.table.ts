import { tableColumns } from '../../db/table-columns.js';
import type { Bool, Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

export interface WebhookTable {
  id: Id;
  account_id: number;
  url: string;
  /** JSON array of kinds and patterns. */
  events: string;
  description: string | null;
  max_attempts: number;
  /** Space-separated: the scopes of the credential that last set `events`. */
  scopes: string;
  active: Bool;
  disabled_reason: string | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** The OAuth grant whose access token created it: it is deleted when the grant ends (null: the account's own credential made it). */
  oauth_grant_id: number | null;
  /** That grant's client's public id (`cl_…`), shown as `oauthClientId`. */
  oauth_client_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const WEBHOOK_COLUMNS = tableColumns<WebhookTable>()({
  id: 'not null',
  account_id: 'not null',
  url: 'not null',
  events: 'not null',
  description: 'nullable',
  max_attempts: 'not null',
  scopes: 'not null',
  active: 'not null',
  disabled_reason: 'nullable',
  secret_ciphertext: 'not null',
  previous_secret_ciphertext: 'nullable',
  previous_secret_expires_at: 'nullable',
  oauth_grant_id: 'nullable',
  oauth_client_id: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface WebhookDeliveryTable {
  id: Id;
  webhook_id: number;
  outbox_id: number;
  event_id: string;
  event_type: string;
  state: DeliveryState;
  attempts: number;
  max_attempts: number;
  schedule_start: Timestamp;
  next_attempt_at: Timestamp;
  lease_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const WEBHOOK_DELIVERY_COLUMNS = tableColumns<WebhookDeliveryTable>()({
  id: 'not null',
  webhook_id: 'not null',
  outbox_id: 'not null',
  event_id: 'not null',
  event_type: 'not null',
  state: 'not null',
  attempts: 'not null',
  max_attempts: 'not null',
  schedule_start: 'not null',
  next_attempt_at: 'not null',
  lease_until: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});

export type AttemptOutcome = 'delivered' | 'failed' | 'dead_lettered';

/** Why an attempt failed, as a class a reader can filter on (the `error` text says more); null when delivered. */
export const ERROR_CLASSES = ['http_error', 'redirect', 'timeout', 'connection_refused', 'connection_reset', 'dns', 'tls', 'address_refused', 'network'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export interface WebhookAttemptTable {
  id: Id;
  delivery_id: number;
  webhook_id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  next_attempt_at: NullableTimestamp;
  created_at: Timestamp;
  /** JSON object: the headers sent (signatures, never the secret); null for attempts made before 0020. */
  request_headers: string | null;
  /** The first 4 KB of the receiver's answer (UTF-8 text); null when none came. */
  response_body: string | null;
  error_class: ErrorClass | null;
}
export const WEBHOOK_ATTEMPT_COLUMNS = tableColumns<WebhookAttemptTable>()({
  id: 'not null',
  delivery_id: 'not null',
  webhook_id: 'not null',
  event_id: 'not null',
  event_type: 'not null',
  attempt: 'not null',
  outcome: 'not null',
  status_code: 'nullable',
  latency_ms: 'not null',
  error: 'nullable',
  next_attempt_at: 'nullable',
  created_at: 'not null',
  request_headers: 'nullable',
  response_body: 'nullable',
  error_class: 'nullable',
});
