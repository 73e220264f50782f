import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { BacklogSources } from './metrics.ports.js';

/** What waits in the outbox and the webhook deliveries, read at once. */
export interface Backlog {
  undispatched: number;
  /** When the oldest event the dispatcher has not fanned out yet was recorded; null when none waits. */
  oldestUndispatchedAt: string | null;
  pending: number;
  /** Pending deliveries whose next attempt is due now (the others wait for their retry's time). */
  due: number;
  /** When the longest-waiting due delivery became due; null when none is due. */
  oldestDueAt: string | null;
  dead: number;
}

/** The webhook fan-out's position in the outbox: what lies past it is not fanned out yet. */
const FAN_OUT = 'webhooks';

/**
 * Read-only, for the metrics: the outbox's rows past the webhook fan-out's position and the
 * deliveries pending or dead (never the delivered ones, which pile up for
 * WEBHOOK_RETENTION_DAYS). The SQL is the owners' (the outbox's and webhooks' repositories,
 * through BacklogSources); this runs both reads in one transaction under the timeout.
 */
export class BacklogRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: DialectName,
    private readonly sources: BacklogSources,
  ) {}

  /** On PostgreSQL the server cancels the statements after `timeoutMs` (SQLite answers from this process). */
  async read(now: string, timeoutMs: number): Promise<Backlog> {
    if (this.dialect === 'sqlite') return this.#read(this.db, now);
    return this.db.transaction().execute(async (trx) => {
      await sql`set local statement_timeout = ${sql.lit(Math.ceil(timeoutMs))}`.execute(trx);
      return this.#read(trx, now);
    });
  }

  async #read(executor: Kysely<DB>, now: string): Promise<Backlog> {
    const outbox = await this.sources.outbox.behind(executor, FAN_OUT);
    const deliveries = await this.sources.deliveries.backlog(executor, now);
    return { undispatched: outbox.count, oldestUndispatchedAt: outbox.oldestAt, ...deliveries };
  }
}
