import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import { isPostgres } from '../../db/dialect.js';
import { ENVIRONMENTS } from '../../kernel/environment.js';
import { beyond, settled, type LogPosition } from './outbox-position.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** One event as a consumer takes it: enough to decide who gets it, and where it sits in the log. */
export interface ConsumedEvent {
  outboxId: number;
  eventId: string;
  type: string;
  audience: string;
  position: LogPosition;
}

/** The start of the log: a consumer seen for the first time reads every row still kept. */
const START: LogPosition = { txid: 0, id: 0 };

/**
 * Consumers of the outbox (the webhook fan-out today), each with its own position in
 * `outbox_consumers`. A consumer reads forward from its position through the settled prefix
 * (outbox-position.ts) and moves its position in the same transaction as what it does with
 * the rows, so a crash repeats a batch at most, never skips one. Instances consuming under
 * one name take turns on the consumer's row (a row lock on PostgreSQL; SQLite has one writer).
 *
 * A consumer reads only its deployment's environment's rows, with a position of its own per
 * environment (`webhooks@sandbox`): a sandbox deployment started on a store a development one
 * uses never fans out development events, and neither moves the other's position.
 */
export class OutboxConsumerRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly environment: string,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The row of `consumer` for this deployment's environment. */
  #row(consumer: string, environment = this.environment): string {
    return `${consumer}@${environment}`;
  }

  /**
   * Locks the consumer's position and answers the next `limit` settled rows past it, in log
   * order; `waiting`: rows past it exist that are not settled yet (a transaction that began
   * writing before them is still open, maybe elsewhere on the server), so ask again shortly.
   */
  async consume(trx: Transaction<DB>, consumer: string, limit: number): Promise<{ events: ConsumedEvent[]; waiting: boolean }> {
    const position = await this.#lock(trx, consumer);
    const postgres = isPostgres(trx);
    const rows = await trx
      .selectFrom('outbox')
      .select(['id', 'txid', 'event_id', 'type', 'audience'])
      .where('environment', '=', this.environment)
      .where((eb) => eb.and([beyond(eb, '>', position), settled(eb, postgres)]))
      .orderBy('txid')
      .orderBy('id')
      .limit(limit)
      .execute();
    const events = rows.map((row) => ({ outboxId: Number(row.id), eventId: row.event_id, type: row.type, audience: row.audience, position: { txid: Number(row.txid), id: Number(row.id) } }));
    if (!postgres || events.length === limit) return { events, waiting: false };
    const from = events.at(-1)?.position ?? position;
    const unsettled = await trx
      .selectFrom('outbox')
      .select('id')
      .where('environment', '=', this.environment)
      .where((eb) => eb.and([beyond(eb, '>', from), eb.not(settled(eb, postgres))]))
      .limit(1)
      .executeTakeFirst();
    return { events, waiting: unsettled !== undefined };
  }

  /**
   * How far a consumer is behind (the metrics' outbox lag): the rows past its position and
   * when the oldest of them was recorded, along the (txid, id) index; none for a consumer
   * that has no position yet. In the caller's executor: the metrics read it under their
   * statement timeout.
   */
  async behind(executor: Kysely<DB>, consumer: string): Promise<{ count: number; oldestAt: string | null }> {
    // This environment's position; until the consumer first ran here, the shared one of before 2.6 it will start from.
    const held = await executor.selectFrom('outbox_consumers').select('name').where('name', 'in', [this.#row(consumer), consumer]).orderBy('name', 'desc').limit(1).executeTakeFirst();
    if (!held) return { count: 0, oldestAt: null };
    const row = await executor
      .selectFrom('outbox')
      .innerJoin('outbox_consumers as c', (join) => join.on('c.name', '=', held.name))
      .where('outbox.environment', '=', this.environment)
      .where((eb) => eb(eb.refTuple('outbox.txid', 'outbox.id'), '>', eb.refTuple('c.position_txid', 'c.position_id')))
      .select((eb) => [eb.fn.countAll().as('count'), eb.fn.min('outbox.created_at').as('oldest')])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), oldestAt: row.oldest === null ? null : toIso(row.oldest) };
  }

  /** Moves the consumer past `last` (a row `consume` answered, in the same transaction). */
  async advance(trx: Transaction<DB>, consumer: string, last: LogPosition, now: string): Promise<void> {
    await trx.updateTable('outbox_consumers').set({ position_txid: last.txid, position_id: last.id, updated_at: now }).where('name', '=', this.#row(consumer)).execute();
  }

  async #lock(trx: Transaction<DB>, consumer: string): Promise<LogPosition> {
    const name = this.#row(consumer);
    // SQLite: a write first, so the transaction holds the one write lock before it reads (a
    // deferred transaction that read first would fail to write once another instance moved on).
    if (!isPostgres(trx)) await trx.updateTable('outbox_consumers').set({ updated_at: this.clock.iso() }).where('name', '=', name).execute();
    const select = (of: string) => {
      const query = trx.selectFrom('outbox_consumers').select(['position_txid', 'position_id']).where('name', '=', of);
      return (isPostgres(trx) ? query.forUpdate() : query).executeTakeFirst();
    };
    let row = await select(name);
    if (!row) {
      // A store of before 2.6 holds one position for every environment (`webhooks`): each
      // environment starts from it (nothing fanned out again), and it goes, so pruning is not held.
      const shared = await select(consumer);
      const start = shared ? { txid: Number(shared.position_txid), id: Number(shared.position_id) } : START;
      await trx
        .insertInto('outbox_consumers')
        .values((shared ? ENVIRONMENTS : [this.environment]).map((environment) => ({ name: this.#row(consumer, environment), position_txid: start.txid, position_id: start.id, updated_at: this.clock.iso() })))
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      if (shared) await trx.deleteFrom('outbox_consumers').where('name', '=', consumer).execute();
      row = await select(name);
    }
    return { txid: Number(row!.position_txid), id: Number(row!.position_id) };
  }

  /**
   * Deletes, in batches, rows recorded before `before` that every consumer of their environment
   * (and any consumer of the shared, pre-2.6 kind) has passed and whose
   * id is below `keepFrom` (the lowest id a consumer's own records still point at), so no
   * consumer ever finds a row gone that it has not finished with. Answers how many went.
   */
  async prune(before: string, keepFrom: number | null, batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const doomed = this.db
        .selectFrom('outbox')
        .select('id')
        .where('created_at', '<', before)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('outbox_consumers as c')
                .select('c.name')
                .where(sql<boolean>`(c.name like ('%@' || outbox.environment) or c.name not like '%@%')`)
                .where((inner) => inner(inner.refTuple('outbox.txid', 'outbox.id'), '>', inner.refTuple('c.position_txid', 'c.position_id'))),
            ),
          ),
        )
        .$if(keepFrom !== null, (query) => query.where('id', '<', keepFrom!))
        .limit(batch);
      const result = await this.db.deleteFrom('outbox').where('id', 'in', doomed).executeTakeFirst();
      const deleted = Number(result.numDeletedRows);
      total += deleted;
      if (deleted < batch) return total;
    }
  }
}

