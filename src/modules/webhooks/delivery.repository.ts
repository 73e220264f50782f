import type { Kysely, Transaction } from 'kysely';
import { databaseNow } from '../../db/clock.js';
import type { DB } from '../../db/schema.js';
import { claimRows } from '../../db/claim.js';
import { toIso, toIsoOrNull } from '../../db/columns.js';
import { hiddenToFind, pickFairly, type ClaimBounds } from './dispatch.rules.js';
import { dueWindow, hiddenQueues, oldestOf } from './fair-claim.repository.js';
import { deadIn, type WebhookScope } from './attempt-log.repository.js';
import type { AttemptOutcome, DeliveryState, ErrorClass } from './webhook.table.js';
import type { OutboxEventsPort } from './webhooks.ports.js';
import type { EnvelopeFields, EventSelection } from '../outbox/outbox.module.js';

export interface OutboxEvent {
  outboxId: number;
  eventId: string;
  type: string;
  audience: string;
}

export interface SubscriberRow {
  id: number;
  accountId: number;
  events: string;
  scopes: string;
  maxAttempts: number;
}

/** A claimed delivery with what it takes to send it: its event's envelope fields as stored (data and metadata are JSON text). */
export interface ClaimedDelivery extends EnvelopeFields {
  id: number;
  webhookId: number;
  accountId: number;
  url: string;
  attempt: number;
  maxAttempts: number;
  scheduleStart: number;
  leaseUntil: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: string | null;
}

export interface AttemptRecord {
  deliveryId: number;
  webhookId: number;
  eventId: string;
  eventType: string;
  attempt: number;
  outcome: AttemptOutcome;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  nextAttemptAt: string | null;
  /** JSON object of the headers sent. */
  requestHeaders: string | null;
  responseBody: string | null;
  errorClass: ErrorClass | null;
}

/** An attempt made, and where it leaves its delivery; the lease it was made under guards the update. */
export interface Completion {
  attempt: AttemptRecord;
  leaseUntil: string;
  state: DeliveryState;
}

/** What a replay writes: the delivery starts a fresh schedule now. */
const REQUEUE = (now: string) => ({ state: 'pending' as const, attempts: 0, schedule_start: now, next_attempt_at: now, lease_until: null, updated_at: now });

export class DeliveryRepository {
  constructor(
    private readonly db: Kysely<DB>,
    /** The outbox's rows: each delivery's event (its envelope), and the events a replay selects. */
    private readonly events: OutboxEventsPort,
  ) {}

  activeSubscribers(trx: Transaction<DB>): Promise<SubscriberRow[]> {
    return trx.selectFrom('webhooks').select(['id', 'account_id as accountId', 'events', 'scopes', 'max_attempts as maxAttempts']).where('active', '=', true).execute();
  }

  /**
   * One delivery per (webhook, event): a pair that already has one (an event fanned out again
   * after a crash, or by an instance still running the code before the event log) is left as is.
   */
  async insertDeliveries(trx: Transaction<DB>, deliveries: ReadonlyArray<{ webhookId: number; event: OutboxEvent; maxAttempts: number; leaseUntil?: string }>, now: string): Promise<number[]> {
    if (deliveries.length === 0) return [];
    const rows = await trx
      .insertInto('webhook_deliveries')
      .values(
        deliveries.map(({ webhookId, event, maxAttempts, leaseUntil }) => ({
          webhook_id: webhookId,
          outbox_id: event.outboxId,
          event_id: event.eventId,
          event_type: event.type,
          state: 'pending' as const,
          attempts: 0,
          max_attempts: maxAttempts,
          schedule_start: now,
          next_attempt_at: leaseUntil ?? now,
          lease_until: leaseUntil ?? null,
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['webhook_id', 'outbox_id']).doNothing())
      .returning('id')
      .execute();
    return rows.map((row) => Number(row.id));
  }

  /**
   * Claims due deliveries for sending, round-robin between accounts: an account's n-th slot
   * goes before any account's (n+1)-th (counting what is in flight, `bounds`), oldest first
   * within a turn, never past a webhook's or an account's cap. Claiming moves the row's
   * `next_attempt_at` to the end of the lease (a visibility timeout): until then no other
   * instance takes it, and if this one dies mid-attempt the row is simply due again (at least
   * once). So "due" is one indexed range, `state = 'pending' and next_attempt_at <= now`.
   * `lost` counts rows picked here that another instance claimed first.
   */
  async claimDue(callerNow: string, callerLeaseUntil: string, bounds: ClaimBounds): Promise<{ claimed: ClaimedDelivery[]; lost: number }> {
    return this.db.transaction().execute(async (trx) => {
      // "Due" and the lease's end on the database's clock, the one every instance shares (issue 20).
      const now = await databaseNow(trx);
      const leaseUntil = new Date(Date.parse(callerLeaseUntil) + Date.parse(now) - Date.parse(callerNow)).toISOString();
      // A few times the slots, so the caps still fill them when one webhook leads the queue.
      const size = 4 * bounds.limit;
      const window = await dueWindow(trx, now, bounds, size);
      let plan = pickFairly(window, [], bounds);
      const known = hiddenToFind(window, size, plan, bounds);
      const hidden = known ? await hiddenQueues(trx, now, bounds, known) : [];
      if (hidden.length > 0) plan = pickFairly(window, hidden, bounds);
      const picked = [...plan.ids, ...(await oldestOf(trx, now, plan.hidden, hidden))];
      if (picked.length === 0) return { claimed: [], lost: 0 };
      // The reads above lock nothing (locking the window would hide from other instances rows
      // this claim does not take, and PostgreSQL allows no FOR UPDATE beside GROUP BY): the
      // picked rows are locked here and must still be due, so a row another instance claimed
      // meanwhile (committed, or still locked: SKIP LOCKED) is not taken twice.
      const due = trx.selectFrom('webhook_deliveries').select('id').where('id', 'in', picked).where('state', '=', 'pending').where('next_attempt_at', '<=', now);
      const marked = await claimRows(trx, due, (ids) =>
        trx.updateTable('webhook_deliveries').set({ lease_until: leaseUntil, next_attempt_at: leaseUntil }).where('id', 'in', ids).returning('id'),
      );
      const ids = marked.map((row) => Number(row.id));
      return { claimed: await this.#load(trx, ids), lost: picked.length - ids.length };
    });
  }

  /**
   * Loads claimed deliveries (the test endpoint claims its own at insertion), then their events'
   * envelopes from the outbox in the same transaction: two queries per batch, whatever its size.
   */
  async #load(executor: Kysely<DB>, ids: number[]): Promise<ClaimedDelivery[]> {
    if (ids.length === 0) return [];
    const rows = await executor
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select([
        'd.id', 'd.webhook_id', 'd.outbox_id', 'w.account_id', 'w.url', 'd.attempts', 'd.max_attempts', 'd.schedule_start', 'd.lease_until',
        'w.secret_ciphertext', 'w.previous_secret_ciphertext', 'w.previous_secret_expires_at',
      ])
      .where('d.id', 'in', ids)
      .execute();
    const envelopes = await this.events.envelopesOf(executor, rows.map((row) => Number(row.outbox_id)));
    return rows.flatMap((row) => {
      const event = envelopes.get(Number(row.outbox_id));
      if (!event) return [];
      return [{
        id: Number(row.id),
        webhookId: Number(row.webhook_id),
        accountId: Number(row.account_id),
        url: row.url,
        attempt: row.attempts + 1,
        maxAttempts: row.max_attempts,
        scheduleStart: Date.parse(toIso(row.schedule_start)),
        leaseUntil: toIso(row.lease_until!),
        ...event,
        secretCiphertext: row.secret_ciphertext,
        previousSecretCiphertext: row.previous_secret_ciphertext,
        previousSecretExpiresAt: toIsoOrNull(row.previous_secret_expires_at),
      }];
    });
  }

  loadClaimed(trx: Transaction<DB>, ids: number[]): Promise<ClaimedDelivery[]> {
    return this.#load(trx, ids);
  }

  /**
   * Records attempts and moves their deliveries on, in one transaction. A delivery whose
   * lease is no longer ours (it ran past the lease and another instance took it) keeps the
   * newer state; the attempt is still logged, since it happened.
   */
  async complete(results: readonly Completion[], now: string): Promise<void> {
    if (results.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values(
          results.map(({ attempt: a }) => ({
            delivery_id: a.deliveryId,
            webhook_id: a.webhookId,
            event_id: a.eventId,
            event_type: a.eventType,
            attempt: a.attempt,
            outcome: a.outcome,
            status_code: a.statusCode,
            latency_ms: a.latencyMs,
            error: a.error,
            next_attempt_at: a.nextAttemptAt,
            created_at: now,
            request_headers: a.requestHeaders,
            response_body: a.responseBody,
            error_class: a.errorClass,
          })),
        )
        .execute();
      // Deliveries claimed together and settled alike (the usual case: all delivered) move in
      // one statement. The attempt count is the claimed row's plus one: the lease guarantees
      // nobody else moved it since.
      const groups = new Map<string, { state: DeliveryState; next: string; leaseUntil: string; ids: number[] }>();
      for (const { attempt, leaseUntil, state } of results) {
        const next = attempt.nextAttemptAt ?? now;
        const key = `${state} ${next} ${leaseUntil}`;
        const group = groups.get(key) ?? groups.set(key, { state, next, leaseUntil, ids: [] }).get(key)!;
        group.ids.push(attempt.deliveryId);
      }
      for (const { state, next, leaseUntil, ids } of groups.values()) {
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({ state, attempts: eb('attempts', '+', 1), next_attempt_at: next, lease_until: null, updated_at: now }))
          .where('id', 'in', ids)
          .where('lease_until', '=', leaseUntil)
          .execute();
      }
    });
  }

  /** 410 Gone: disables the webhook, saying why, and dead-letters what it still had pending, together. */
  async disableWebhook(webhookId: number, reason: string, now: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('webhooks').set({ active: false, disabled_reason: reason, updated_at: now }).where('id', '=', webhookId).execute();
      await trx.updateTable('webhook_deliveries').set({ state: 'dead', lease_until: null, updated_at: now }).where('webhook_id', '=', webhookId).where('state', '=', 'pending').execute();
    });
  }

  /**
   * The next moment a pending delivery falls due, after `now` (a retry, or the end of a lease),
   * so the dispatcher can sleep until then. What is due already is either being taken, waits
   * for a slot of its endpoint or its account (an attempt ending wakes the dispatcher) or
   * belongs to a paused webhook (resuming wakes it). One step along the (state, next_attempt_at) index.
   */
  async nextDueAt(now: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select('next_attempt_at')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '>', now)
      .orderBy('next_attempt_at')
      .limit(1)
      .executeTakeFirst();
    return row ? Date.parse(toIso(row.next_attempt_at)) : null;
  }

  /**
   * Re-queues with a fresh schedule from now: without a selection, a webhook's dead-lettered
   * events; with one (a range of event times [from, to), chosen events, or both), every
   * settled event (delivered or dead-lettered) among them, for a receiver that lost what it had
   * received. Pending deliveries are left to their schedule. Never another environment's
   * events (a store shared by a development and a sandbox deployment holds both).
   */
  async replay(webhookId: number, selection: EventSelection, now: string): Promise<number> {
    const selected = selection.from !== undefined || selection.to !== undefined || selection.eventIds !== undefined;
    if (selection.eventIds?.length === 0) return 0;
    let query = this.db
      .updateTable('webhook_deliveries')
      .set(REQUEUE(now))
      .where('webhook_id', '=', webhookId)
      .where('state', 'in', selected ? ['dead', 'delivered'] : ['dead']);
    // The outbox's selection (by its unique event_id, or created_at; always this deployment's
    // environment only) inside this one statement, then the (webhook_id, outbox_id) key.
    query = query.where('outbox_id', 'in', this.events.selected(selection));
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Re-queues the dead-lettered deliveries of `scope` (only those of `deliveryIds` when given) with a fresh schedule. */
  async replayDead(scope: WebhookScope, deliveryIds: readonly number[] | null, now: string): Promise<number> {
    if (scope.webhookIds?.length === 0 || deliveryIds?.length === 0) return 0;
    const dead = deadIn(this.db, this.events, scope).select('d.id');
    let query = this.db.updateTable('webhook_deliveries').set(REQUEUE(now)).where('state', '=', 'dead').where('id', 'in', deliveryIds ? dead.where('d.id', 'in', [...deliveryIds]) : dead);
    if (scope.webhookIds) query = query.where('webhook_id', 'in', [...scope.webhookIds]);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Retention: finished deliveries (and their attempts) older than `before` go. Outbox rows are
   * the outbox module's to prune (EVENT_RETENTION_DAYS); it keeps every row from
   * `lowestRetainedOutboxId` on, so a delivery (even dead-lettered, for replay) keeps its event.
   */
  async prune(before: string): Promise<number> {
    const deliveries = await this.db.deleteFrom('webhook_deliveries').where('state', 'in', ['delivered', 'dead']).where('updated_at', '<', before).executeTakeFirst();
    const attempts = await this.db.deleteFrom('webhook_attempts').where('created_at', '<', before).executeTakeFirst();
    return Number(deliveries.numDeletedRows) + Number(attempts.numDeletedRows);
  }
}
