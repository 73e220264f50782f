import type { OperandExpression } from 'kysely';

/**
 * What the event log asks the module that delivers events (webhooks implements it; the
 * composition root plugs it in): how each event's deliveries stand, counting only `accountId`'s
 * webhooks (null: every account's, for staff).
 */
export interface DeliveryStatusPort {
  /** Per outbox row id, its deliveries not delivered yet (pending or dead-lettered); absent: none. */
  undeliveredCounts(outboxIds: readonly number[], accountId: number | null): Promise<Map<number, number>>;
  /**
   * The outbox row ids with a delivery not delivered yet, as a subquery the log's page filters
   * by (`LogQuery.outboxIdsIn`): any number of them, in the page's one statement.
   */
  undeliveredOutboxIds(accountId: number | null): OperandExpression<number>;
}
