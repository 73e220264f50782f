import { tableColumns } from '../../db/table-columns.js';
import type { Id, Timestamp } from '../../db/columns.js';

/**
 * One request an account made to /v2 (issue 30): what `GET /v2/request-logs` lists. Never a
 * secret: the credential is its kind and public label (a key's 16-character prefix, an OAuth
 * client id), and bodies and headers are kept redacted (request-log.redaction.ts).
 */
export interface RequestLogTable {
  /** Commit order too: the writer takes ids under a lock held to its commit (request-log.repository.ts). */
  id: Id;
  request_id: string;
  account_id: number;
  environment: string;
  created_at: Timestamp;
  method: string;
  /** The route's pattern (`/v2/orders/:id`); the path itself when no route matched. */
  route: string;
  path: string;
  /** The query string as sent, without `?`, secrets redacted; '' when none. */
  query: string;
  status: number;
  duration_ms: number;
  credential_kind: string;
  /** A key's prefix, an OAuth client's id, a login token's session: public, never the secret. */
  credential_label: string;
  idempotency_key: string | null;
  client_ip: string;
  user_agent: string | null;
  /** JSON object of the request's headers, credentials and cookies redacted. */
  request_headers: string;
  response_headers: string;
  /** The first 16 KB, redacted; null when the policy keeps none (REQUEST_LOG_BODIES) or there was none. */
  request_body: string | null;
  response_body: string | null;
  /** The request's trace (W3C trace id, 32 hex digits) when tracing was on; null otherwise. */
  trace_id: string | null;
}

export const REQUEST_LOG_COLUMNS = tableColumns<RequestLogTable>()({
  id: 'not null',
  request_id: 'not null',
  account_id: 'not null',
  environment: 'not null',
  created_at: 'not null',
  method: 'not null',
  route: 'not null',
  path: 'not null',
  query: 'not null',
  status: 'not null',
  duration_ms: 'not null',
  credential_kind: 'not null',
  credential_label: 'not null',
  idempotency_key: 'nullable',
  client_ip: 'not null',
  user_agent: 'nullable',
  request_headers: 'not null',
  response_headers: 'not null',
  request_body: 'nullable',
  response_body: 'nullable',
  trace_id: 'nullable',
});
