import type { Kysely, OperandExpression } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EnvelopeFields, EventSelection } from '../outbox/outbox.module.js';

/**
 * What webhooks asks the outbox about the events its deliveries point at (`outbox_id`): the
 * `outbox` table is the outbox module's (test/architecture/table-ownership.test.ts). The
 * composition root plugs in the outbox's `rows`.
 */
export interface OutboxEventsPort {
  /** The envelope's fields per outbox id, in one query in the caller's executor; a row that is gone has no entry. */
  envelopesOf(executor: Kysely<DB>, outboxIds: readonly number[]): Promise<Map<number, EnvelopeFields>>;
  /** One event of this deployment by its envelope id (type and audience: who may receive it); undefined when there is none. */
  eventOf(executor: Kysely<DB>, eventId: string): Promise<{ outboxId: number; eventId: string; type: string; audience: string } | undefined>;
  /**
   * The outbox ids of a selection, as a subquery the caller's statement filters by (one
   * statement, never a list of ids): only this deployment's environment's events, so a
   * replay or a list through it never reaches another environment sharing the store.
   */
  selected(selection: EventSelection): OperandExpression<number>;
}
