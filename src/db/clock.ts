import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { DB } from './schema.js';

/**
 * The database's clock now, as an ISO string with milliseconds (the form every timestamp is
 * written in): what leases and due times are compared against when several instances share a
 * database, so an instance whose clock runs ahead neither takes work early nor steals a lease
 * still running (issue 20). SQLite is one instance, and its clock the process's own.
 */
export async function databaseNow(executor: Kysely<DB>): Promise<string> {
  const query = isPostgres(executor)
    ? sql<{ now: string }>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as now`
    : sql<{ now: string }>`select strftime('%Y-%m-%dT%H:%M:%fZ', 'now') as now`;
  return (await query.execute(executor)).rows[0]!.now;
}
