import type { SelectQueryBuilder, Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import type { DB } from './schema.js';

/**
 * Claims due work in one statement, `UPDATE … WHERE id IN (<due> FOR UPDATE SKIP LOCKED)
 * RETURNING …`, so each row goes to exactly one caller however many instances run the same
 * job. Pending work is selected by its state, never by "ids after the last one seen": on
 * PostgreSQL ids are taken before commit, and a row committing late would be skipped.
 * SQLite has one writer at a time, so the same statement needs no locking clause there.
 *
 * `due` selects the ids of claimable rows; `mark` updates the rows whose id is in it (setting
 * what makes them no longer due) and says what to return.
 */
export async function claimRows<TB extends keyof DB, O>(
  trx: Transaction<DB>,
  due: SelectQueryBuilder<DB, TB, { id: number }>,
  mark: (ids: SelectQueryBuilder<DB, TB, { id: number }>) => { execute(): Promise<O[]> },
): Promise<O[]> {
  return mark(isPostgres(trx) ? due.forUpdate().skipLocked() : due).execute();
}
