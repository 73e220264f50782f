import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';

/** What waits in the outbox and the webhook deliveries, read at once. */
export interface Backlog {
  undispatched: number;
  /** When the oldest event the dispatcher has not fanned out yet was recorded; null when none waits. */
  oldestUndispatchedAt: string | null;
  pending: number;
  /** Pending deliveries whose next attempt is due now (the others wait for their retry's time). */
  due: number;
  dead: number;
}

/**
 * Read-only, for the metrics: the outbox's rows past the webhook fan-out's position (index `outbox_log_idx`)
 * and the deliveries pending or dead (`webhook_deliveries_due_idx`, the partial dead index),
 * never the delivered ones, which pile up for WEBHOOK_RETENTION_DAYS. Tables of the outbox
 * and webhooks modules, read here so that a scrape needs neither module's services.
 */
export class BacklogRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly dialect: DialectName,
  ) {}

  /** On PostgreSQL the server cancels the statements after `timeoutMs` (SQLite answers from this process). */
  async read(now: string, timeoutMs: number): Promise<Backlog> {
    if (this.dialect === 'sqlite') return this.#read(this.db, now);
    return this.db.transaction().execute(async (trx) => {
      await sql`set local statement_timeout = ${sql.lit(Math.ceil(timeoutMs))}`.execute(trx);
      return this.#read(trx, now);
    });
  }

  async #read(db: Kysely<DB>, now: string): Promise<Backlog> {
    // Past the fan-out's position (outbox_consumers 'webhooks'), along the (txid, id) index.
    const outbox = await db
      .selectFrom('outbox')
      .innerJoin('outbox_consumers as c', (join) => join.on('c.name', '=', 'webhooks'))
      .where((eb) => eb(eb.refTuple('outbox.txid', 'outbox.id'), '>', eb.refTuple('c.position_txid', 'c.position_id')))
      .select((eb) => [eb.fn.countAll().as('undispatched'), eb.fn.min('outbox.created_at').as('oldest')])
      .executeTakeFirstOrThrow();
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .where('state', 'in', ['pending', 'dead'])
      .groupBy('state')
      .select((eb) => ['state', eb.fn.countAll().as('count'), eb.fn.sum(eb.case().when('next_attempt_at', '<=', now).then(1).else(0).end()).as('due')])
      .execute();
    const pending = deliveries.find((row) => row.state === 'pending');
    return {
      undispatched: Number(outbox.undispatched),
      oldestUndispatchedAt: outbox.oldest === null ? null : toIso(outbox.oldest),
      pending: Number(pending?.count ?? 0),
      due: Number(pending?.due ?? 0),
      dead: Number(deliveries.find((row) => row.state === 'dead')?.count ?? 0),
    };
  }
}
