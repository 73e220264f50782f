import { tableColumns } from '../../db/table-columns.js';
import type { Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

/** One secret shown once: a hash of the reveal's id (the sealed cookie holds the id and the secret), never the secret. */
export interface DashboardRevealTable {
  id: Id;
  /** SHA-256 of the reveal's random id, hex. */
  reveal_hash: string;
  /** The browser session it was made for (browser_sessions.id): it goes with it. */
  session_id: number;
  expires_at: Timestamp;
  /** When a page showed it; it shows nothing after. */
  consumed_at: NullableTimestamp;
  created_at: Timestamp;
}
export const DASHBOARD_REVEAL_COLUMNS = tableColumns<DashboardRevealTable>()({
  id: 'not null',
  reveal_hash: 'not null',
  session_id: 'not null',
  expires_at: 'not null',
  consumed_at: 'nullable',
  created_at: 'not null',
});
