import { randomUUID } from 'node:crypto';
import type { Insertable, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { nowIso } from '../../db/columns.js';
import { prepared } from '../../db/prepared.js';
import type { OutboxTable } from './outbox.table.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import type { CheeseEnv } from '../../kernel/environment.js';

export const EVENT_TYPES = [
  'order.placed',
  'order.confirmed',
  'order.shipped',
  'order.delivered',
  'order.cancelled',
  'cheese.back_in_stock',
  'cheese.low_stock',
  'cheese.out_of_stock',
  'cheese.new_arrival',
  'customer.created',
  'customer.updated',
  'customer.subscription_changed',
  'webhook.test',
  'api_key.expiring',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventContext {
  requestId: string | null;
  environment: CheeseEnv;
  apiVersion: string;
}

/**
 * Who may receive an event by webhook: everyone (`public`: the catalogue), one account and
 * staff (`{ accountId }`: its orders, profile, keys), or staff only.
 */
export type EventAudience = 'public' | 'staff' | { accountId: number };

export function audienceText(audience: EventAudience): string {
  return typeof audience === 'string' ? audience : `account:${audience.accountId}`;
}

export interface NewEvent {
  type: EventType;
  audience: EventAudience;
  aggregateType: string;
  aggregateId: string;
  /** The envelope's `data`, already snake_case; ids as strings (decisions.md §2, §8). */
  data: Record<string, unknown>;
  metadata?: Record<string, string | number>;
}

/**
 * The only way to emit an event. It takes a Transaction, not a Kysely: the compiler refuses
 * a call outside one, so an event is committed exactly when the change causing it is.
 */
export async function recordEvent(trx: Transaction<DB>, event: NewEvent, context: EventContext): Promise<string> {
  return (await insertEvent(trx, event, context)).eventId;
}

const insertOutboxRow = prepared((db, row: Insertable<OutboxTable>) => db.insertInto('outbox').values(row).returning('id'));

async function insertEvent(trx: Transaction<DB>, event: NewEvent, context: EventContext): Promise<{ outboxId: number; eventId: string }> {
  const row = outboxRow(event, context);
  const [inserted] = await insertOutboxRow(trx, row);
  return { outboxId: Number(inserted!.id), eventId: row.event_id };
}

/** Several events as one multi-row insert (one round trip), ids in order. */
async function insertEvents(trx: Transaction<DB>, events: readonly NewEvent[], context: EventContext): Promise<void> {
  if (events.length === 1) await insertEvent(trx, events[0]!, context);
  else await trx.insertInto('outbox').values(events.map((event) => outboxRow(event, context))).execute();
}

function outboxRow(event: NewEvent, context: EventContext): Insertable<OutboxTable> & { event_id: string } {
  return {
    event_id: `evt_${randomUUID().replaceAll('-', '')}`,
    type: event.type,
    aggregate_type: event.aggregateType,
    aggregate_id: event.aggregateId,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify({
      api_version: context.apiVersion,
      environment: context.environment,
      request_id: context.requestId,
      ...event.metadata,
    }),
    audience: audienceText(event.audience),
    created_at: nowIso(),
  };
}

/** The outbox as modules see it: the deployment's metadata fixed once, the change's own context per call. */
export class Outbox {
  constructor(private readonly deployment: { environment: CheeseEnv; apiVersion: string }) {}

  /** Several events of one change, in order, in its transaction. */
  async record(trx: Transaction<DB>, events: readonly NewEvent[], ctx: ChangeContext): Promise<void> {
    // One statement for all of them. Every instance's webhook dispatcher wakes once (and only
    // if) the transaction commits: the dialect sees the insert (db/commit-signal.ts).
    if (events.length > 0) await insertEvents(trx, events, { ...this.deployment, requestId: ctx.requestId });
  }

  /** One event, with its outbox row id (for a module that acts on the row itself, as webhook tests do). */
  async recordOne(trx: Transaction<DB>, event: NewEvent, ctx: ChangeContext): Promise<{ outboxId: number; eventId: string }> {
    return insertEvent(trx, event, { ...this.deployment, requestId: ctx.requestId });
  }
}
