import type { Kysely, OperandExpression } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { EnvelopeFields } from './outbox.envelope.js';

/** Events by when they were recorded ([from, to), ISO in UTC) and/or by envelope id; every part optional. */
export interface EventSelection {
  from?: string;
  to?: string;
  eventIds?: readonly string[];
  /** The events about one object (`order` 42), over the outbox's object index. */
  object?: { type: string; id: string };
}

/**
 * Rows of the outbox for the modules whose own records point at them (webhooks: a delivery's
 * `outbox_id`), so none of them names the table. Reads take the caller's executor: a webhook
 * test claims a delivery of an event its transaction has just written, not yet committed.
 */
export class OutboxRowRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** The deployment's `CHEESE_ENV`: a selection never reaches another environment's events (a store may hold several). */
    private readonly environment: string,
  ) {}

  /** The envelope's fields of each row, by outbox id, in one query; a row that is gone has no entry. */
  async envelopesOf(executor: Kysely<DB>, outboxIds: readonly number[]): Promise<Map<number, EnvelopeFields>> {
    if (outboxIds.length === 0) return new Map();
    const rows = await executor
      .selectFrom('outbox')
      .select(['id', 'event_id', 'type', 'created_at', 'data', 'metadata'])
      .where('id', 'in', [...new Set(outboxIds)])
      .execute();
    return new Map(rows.map((row) => [Number(row.id), { eventId: row.event_id, eventType: row.type, createdAt: toIso(row.created_at), data: row.data, metadata: row.metadata }]));
  }

  /** One event of this deployment by its envelope id, in the caller's executor: what a delivery of it needs (a resend inserts one). */
  async eventOf(executor: Kysely<DB>, eventId: string): Promise<{ outboxId: number; eventId: string; type: string; audience: string } | undefined> {
    const row = await executor.selectFrom('outbox').select(['id', 'event_id', 'type', 'audience']).where('event_id', '=', eventId).where('environment', '=', this.environment).executeTakeFirst();
    return row && { outboxId: Number(row.id), eventId: row.event_id, type: row.type, audience: row.audience };
  }

  /**
   * The ids of the selected rows, as a subquery for the caller's own statement
   * (`where('outbox_id', 'in', …)`), so a month of events stays one statement and never a list
   * of ids. By the unique `event_id`, or `created_at`; always this deployment's environment
   * only (an empty selection: every event of it), as the event log reads.
   */
  selected(selection: EventSelection): OperandExpression<number> {
    let events = this.db.selectFrom('outbox').select('id').where('environment', '=', this.environment);
    if (selection.from !== undefined) events = events.where('created_at', '>=', selection.from);
    if (selection.to !== undefined) events = events.where('created_at', '<', selection.to);
    if (selection.eventIds !== undefined) events = events.where('event_id', 'in', [...selection.eventIds]);
    if (selection.object !== undefined) events = events.where('aggregate_type', '=', selection.object.type).where('aggregate_id', '=', selection.object.id);
    return events;
  }
}
