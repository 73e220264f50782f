/**
 * Whether an error means the database could not be reached or did not answer in time (so
 * the request may well succeed later: 503), rather than a query that is wrong (a bug: 500).
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE', 'SQLITE_BUSY', 'SQLITE_LOCKED']);
// PostgreSQL SQLSTATE: 08 connection exceptions, 53 insufficient resources, 57P01-03 shutting down or starting, 57014 cancelled by statement_timeout.
const POSTGRES_STATES = /^(08|53|57P0[1-3]$|57014$)/;
const MESSAGES = /timeout exceeded when trying to connect|Query read timeout|Connection terminated|connection is not open|Client has encountered a connection error/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_STATES.test(code))) return true;
  return MESSAGES.test(error.message);
}
