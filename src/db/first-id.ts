import { sql, type Kysely } from 'kysely';
import { toIso } from './columns.js';
import type { DB } from './schema.js';

/** Instants whose first id is remembered; the oldest goes first past this. */
const REMEMBERED = 100;

/**
 * The lowest id of an append-only table written at or after an instant, without an index on
 * `created_at`: ids follow arrival, so the ids are bisected (about 17 lookups by primary key for
 * 100,000 rows). Found once per instant: ids only grow, so the first id at or after a past instant
 * stays it. The owning repository names its own table (the request log, webhook attempts).
 */
export class FirstIdAtOrAfter {
  readonly #known = new Map<string, number>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly table: keyof DB & string,
  ) {}

  /** Null when no row is at or after `at` (yet: a null is not remembered). */
  async find(at: string): Promise<number | null> {
    const known = this.#known.get(at);
    if (known !== undefined) return known;
    const found = await this.#bisect(at);
    if (found !== null) {
      this.#known.set(at, found);
      if (this.#known.size > REMEMBERED) this.#known.delete(this.#known.keys().next().value!);
    }
    return found;
  }

  async #bisect(at: string): Promise<number | null> {
    const table = sql.table(this.table);
    const { rows: [bounds] } = await sql<{ lo: number | string | null; hi: number | string | null }>`select min(id) as lo, max(id) as hi from ${table}`.execute(this.db);
    if (bounds?.lo === null || bounds?.lo === undefined || bounds.hi === null) return null;
    let lo = Number(bounds.lo);
    let hi = Number(bounds.hi) + 1;
    // Invariant: every id below lo is older than `at`; the row at or after hi (if any) is not.
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const { rows: [row] } = await sql<{ id: number | string; created_at: string | Date }>`select id, created_at from ${table} where id >= ${mid} order by id limit 1`.execute(this.db);
      if (!row) hi = mid;
      else if (toIso(row.created_at) < at) lo = Number(row.id) + 1;
      else hi = mid;
    }
    return lo > Number(bounds.hi) ? null : lo;
  }
}
