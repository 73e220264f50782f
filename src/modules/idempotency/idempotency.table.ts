import { tableColumns } from '../../db/table-columns.js';
import type { Bool, Id, Timestamp } from '../../db/columns.js';

export interface IdempotencyKeyTable {
  id: Id;
  scope: string;
  idempotency_key: string;
  fingerprint: string;
  state: 'running' | 'done';
  status_code: number | null;
  /** JSON object of the replayed headers. */
  response_headers: string | null;
  response_body: string | null;
  /** The path of what the request created, written in the creating transaction. */
  created_resource: string | null;
  /** The credential of the first request (`api_key:12`, `anonymous`): only it is answered with the reply. */
  credential: string | null;
  /** The account whose data the reply holds; deleting it deletes the record. */
  account_id: number | null;
  /** The reply held a secret: never stored, never replayed. */
  reply_withheld: Bool;
  locked_until: Timestamp;
  created_at: Timestamp;
  expires_at: Timestamp;
}
export const IDEMPOTENCY_KEY_COLUMNS = tableColumns<IdempotencyKeyTable>()({
  id: 'not null',
  scope: 'not null',
  idempotency_key: 'not null',
  fingerprint: 'not null',
  state: 'not null',
  status_code: 'nullable',
  response_headers: 'nullable',
  response_body: 'nullable',
  created_resource: 'nullable',
  credential: 'nullable',
  account_id: 'nullable',
  reply_withheld: 'not null',
  locked_until: 'not null',
  created_at: 'not null',
  expires_at: 'not null',
});
