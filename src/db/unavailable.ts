/**
 * Whether an error means the database could not be reached or did not answer in time (so
 * the request may well succeed later: 503), rather than a query that is wrong (a bug: 500).
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'SQLITE_BUSY', 'SQLITE_LOCKED']);
// PostgreSQL SQLSTATE: 08 connection exceptions, 53 insufficient resources, 57P01-03 shutting
// down (`pg_ctl stop`: admin_shutdown, crash_shutdown) or starting up / in recovery
// (cannot_connect_now), 57P05 idle session timeout, 57014 cancelled by statement_timeout.
const POSTGRES_STATES = /^(08|53|57P0[1-35]$|57014$)/;
// What pg says when the server goes away under a query or a checked-out client (no code).
const MESSAGES = /cached plan must not change result type|timeout exceeded when trying to connect|Query read timeout|Connection terminated|connection is not open|Client has encountered a connection error|Client was closed and is not queryable/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  return unavailable(error, 0);
}

function unavailable(error: unknown, depth: number): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_STATES.test(code))) return true;
  if (MESSAGES.test(error.message)) return true;
  // Node's connect to a name with several addresses fails with an AggregateError of each attempt's;
  // a wrapper (a failed rollback after a lost connection, say) keeps the original as `cause`.
  if (error instanceof AggregateError && error.errors.some((inner) => unavailable(inner, depth + 1))) return true;
  return unavailable(error.cause, depth + 1);
}
