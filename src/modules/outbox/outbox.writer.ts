import { randomBytes } from 'node:crypto';
import type { Insertable, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { prepared } from '../../db/prepared.js';
import type { OutboxTable } from './outbox.table.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { carriesRequestIdentifiers } from './event-access.rules.js';
import { audienceText, type EventAudience, type EventType } from './event.types.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export { EVENT_TYPES, audienceText, type EventAudience, type EventType } from './event.types.js';

export interface EventContext {
  requestId: string | null;
  idempotencyKey?: string | null;
  /** The account whose request this is (null: the system, or a request with no principal). */
  actorAccountId?: number | null;
  environment: CheeseEnv;
  apiVersion: string;
  /** Stamps the event id's time (the app's clock; the system's when absent). */
  clock?: Clock;
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

/**
 * `evt_` and a UUIDv7's 32 hex digits (RFC 9562): the first 48 bits are the recording time in
 * milliseconds, so an id the log no longer holds can be told apart as pruned (410) or unknown
 * (404) by its time alone. The rest is random, as before.
 */
export function newEventId(atMs: number): string {
  const random = randomBytes(10);
  random[0] = (random[0]! & 0x0f) | 0x70;
  random[2] = (random[2]! & 0x3f) | 0x80;
  return `evt_${atMs.toString(16).padStart(12, '0')}${random.toString('hex')}`;
}

/** The recording time of an event id made by newEventId; undefined for older (random) ids. */
export function eventIdTime(eventId: string): number | undefined {
  const match = /^evt_([0-9a-f]{12})7[0-9a-f]{3}[89ab][0-9a-f]{15}$/.exec(eventId);
  return match ? Number.parseInt(match[1]!, 16) : undefined;
}

function outboxRow(event: NewEvent, context: EventContext): Insertable<OutboxTable> & { event_id: string } {
  const now = (context.clock ?? systemClock).now();
  // Decided once, here: the webhook body and the event log are these bytes.
  const own = carriesRequestIdentifiers(event.audience, context.actorAccountId ?? null);
  return {
    event_id: newEventId(now),
    type: event.type,
    aggregate_type: event.aggregateType,
    aggregate_id: event.aggregateId,
    data: JSON.stringify(event.data),
    metadata: JSON.stringify({
      api_version: context.apiVersion,
      environment: context.environment,
      request_id: own ? context.requestId : null,
      idempotency_key: own ? (context.idempotencyKey ?? null) : null,
      object_type: event.aggregateType,
      object_id: event.aggregateId,
      ...event.metadata,
    }),
    audience: audienceText(event.audience),
    environment: context.environment,
    created_at: new Date(now).toISOString(),
  };
}

/** The outbox as modules see it: the deployment's metadata fixed once, the change's own context per call. */
export class Outbox {
  constructor(private readonly deployment: { environment: CheeseEnv; apiVersion: string; clock?: Clock }) {}

  #context(ctx: ChangeContext): EventContext {
    return { ...this.deployment, requestId: ctx.requestId, idempotencyKey: ctx.idempotencyKey ?? null, actorAccountId: ctx.principal?.accountId ?? null };
  }

  /** Several events of one change, in order, in its transaction. */
  async record(trx: Transaction<DB>, events: readonly NewEvent[], ctx: ChangeContext): Promise<void> {
    // One statement for all of them. Every instance's webhook dispatcher wakes once (and only
    // if) the transaction commits: the dialect sees the insert (db/commit-signal.ts).
    if (events.length > 0) await insertEvents(trx, events, this.#context(ctx));
  }

  /** One event, with its outbox row id (for a module that acts on the row itself, as webhook tests do). */
  async recordOne(trx: Transaction<DB>, event: NewEvent, ctx: ChangeContext): Promise<{ outboxId: number; eventId: string }> {
    return insertEvent(trx, event, this.#context(ctx));
  }
}
