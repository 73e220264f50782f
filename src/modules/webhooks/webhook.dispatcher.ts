import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from '../../db/schema.js';
import type { Scope } from '../../kernel/scopes.js';
import type { WebhookSettings } from './webhook.settings.js';
import type { ClaimedDelivery, Completion, DeliveryRepository, OutboxEvent } from './delivery.repository.js';
import { Batch } from './batch.js';
import { Slots } from './dispatch.rules.js';
import { noTracing, type Tracing } from '../../kernel/tracing.js';
import { outgoingHeaders, type WebhookSender, type SendResult } from './webhook.sender.js';
import { envelopeOf, type OutboxConsumers } from '../outbox/outbox.module.js';
import type { SecretBox } from '../../kernel/secret-box.js';
import { signatureHeaders } from './webhook.secrets.js';
import { nextAttemptAt, receives } from './webhook.rules.js';
import type { DeliveryState } from './webhook.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const FAN_OUT_BATCH = 500;
/** The fan-out's name among the outbox's consumers (migration 0021 started it past every row already fanned out). */
export const FAN_OUT_CONSUMER = 'webhooks';
const INSERT_CHUNK = 200;
const REFILL_MS = 10;
/** The first look again at events held back by an open transaction; doubling up to the poll. */
const SETTLE_FIRST_MS = 10;
/**
 * Cycles start at most this often. The first wake after a quiet spell runs at once; under load
 * (an order placed every millisecond) the commits of a few milliseconds share one fan-out
 * transaction, one claim and one look at the next due time instead of paying for each.
 */
const MIN_CYCLE_GAP_MS = 4;
/**
 * After a failed cycle (the database gone, say), no cycle for this long, whatever wakes the
 * dispatcher meanwhile (attempts finishing, the listener reconnecting): it retries, never spins.
 */
const FAILURE_PAUSE_MS = 1000;
/** Opened secrets kept, by ciphertext: far more than the webhooks one cycle sends to. */
const MAX_OPEN_SECRETS = 1000;

export interface DispatcherOptions {
  db: Kysely<DB>;
  deliveries: DeliveryRepository;
  /** The outbox's consumers: the fan-out reads forward from its own position, 'webhooks'. */
  consumers: OutboxConsumers;
  sender: WebhookSender;
  secrets: SecretBox;
  settings: WebhookSettings;
  log: (message: string, details: Record<string, unknown>) => void;
  clock?: Clock;
  tracer?: Tracing | undefined;
}

/**
 * Moves events from the outbox to receivers. A wake (a commit of outbox rows, here or on
 * another instance; an attempt finishing; the next retry falling due; the poll) runs one
 * cycle: fan new events out into deliveries, then claim due deliveries up to the free slots
 * and send them. Everything it decides is in the database, so a restart loses nothing.
 */
export class WebhookDispatcher {
  readonly #slots = new Slots();
  #refillTimer: NodeJS.Timeout | undefined;
  #settleTimer: NodeJS.Timeout | undefined;
  #settleDelayMs = 0;
  #refillDue = false;
  #running: Promise<void> | undefined;
  #again = false;
  #lastCycleAt = 0;
  #pausedUntil = 0;
  #gapTimer: NodeJS.Timeout | undefined;
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  /** Whether the outbox may hold rows not fanned out yet: set by commits, the poll and a full batch. */
  #outboxPending = true;
  /** No ttl: a ciphertext always opens to the same secret; a rotation stores a new ciphertext. */
  readonly #secretCache = new LRUCache<string, string>({ max: MAX_OPEN_SECRETS });
  readonly #completions = new Batch<Completion>((batch) => this.options.deliveries.complete(batch, this.#clock.iso()));

  constructor(private readonly options: DispatcherOptions) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  start(): void {
    this.#stopped = false;
    this.outboxCommitted();
  }

  /** An outbox row committed (here, or on another instance): fan it out, then send. */
  outboxCommitted(): void {
    this.#outboxPending = true;
    this.wake();
  }

  /** Runs a cycle now, or right after the one running. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#gapTimer) return;
    // Pacing of real timers: the system's clock, as setTimeout's is (a test's clock may stand still or jump).
    const wait = Math.max(this.#lastCycleAt + MIN_CYCLE_GAP_MS, this.#pausedUntil) - systemClock.now();
    if (wait > 0) {
      this.#gapTimer = setTimeout(() => {
        this.#gapTimer = undefined;
        this.wake();
      }, wait);
      return;
    }
    this.#lastCycleAt = systemClock.now();
    this.#running = this.#cycle()
      .catch((err: unknown) => {
        this.options.log(`webhook dispatch failed; retrying in ${FAILURE_PAUSE_MS} ms`, { err });
        // The retry looks at the outbox again (the failure may have been its fan-out).
        this.#outboxPending = true;
        this.#pausedUntil = systemClock.now() + FAILURE_PAUSE_MS;
        this.#again = true;
      })
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        } else void this.#scheduleNext();
      });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#refillTimer);
    clearTimeout(this.#settleTimer);
    this.#settleTimer = undefined;
    clearTimeout(this.#gapTimer);
    this.#refillTimer = undefined;
    this.#gapTimer = undefined;
    await this.#running;
  }

  /** A trace of its own, whatever woke it (a request's commit among others): its fan-out and claims grouped. */
  #cycle(): Promise<void> {
    return (this.options.tracer ?? noTracing).inRootSpan('webhook.dispatch', {}, () => this.#cycleNow());
  }

  async #cycleNow(): Promise<void> {
    for (;;) {
      let backlog = false;
      if (this.#outboxPending) {
        // Cleared first: a commit during the fan-out sets it again (and asks for another cycle).
        this.#outboxPending = false;
        if ((await this.fanOut()) === FAN_OUT_BATCH) backlog = this.#outboxPending = true;
      }
      const started = await this.#claimAndSend();
      if (!backlog && !started.full) return;
    }
  }

  /** Sleeps until the next delivery falls due, or the poll, whichever is first. */
  async #scheduleNext(): Promise<void> {
    clearTimeout(this.#timer);
    if (this.#stopped) return;
    const { pollMs } = this.options.settings;
    const next = await this.options.deliveries.nextDueAt(this.#clock.iso()).catch(() => null);
    const untilDue = next === null ? Infinity : Math.max(5, next - this.#clock.now());
    if (this.#stopped) return;
    // The poll is the safety net for a lost commit signal: it looks at the outbox too.
    this.#timer = untilDue < pollMs ? setTimeout(() => this.wake(), untilDue) : setTimeout(() => this.outboxCommitted(), pollMs);
    this.#timer.unref();
  }

  /**
   * One batch of the log past the 'webhooks' position into deliveries, and the position moved
   * past it, in one transaction: instances take turns on the position (outbox consumers), a
   * crash repeats the batch (one delivery per webhook and event holds), and nothing is skipped.
   * Returns the events taken.
   */
  async fanOut(): Promise<number> {
    return this.options.db.transaction().execute(async (trx) => {
      const now = this.#clock.iso();
      const { events, waiting } = await this.options.consumers.consume(trx, FAN_OUT_CONSUMER, FAN_OUT_BATCH);
      this.#settleLater(waiting);
      if (events.length === 0) return 0;
      const subscribers = (await this.options.deliveries.activeSubscribers(trx)).map((row) => ({
        ...row,
        subscriber: { accountId: Number(row.accountId), scopes: new Set(row.scopes.split(' ') as Scope[]), events: JSON.parse(row.events) as string[] },
      }));
      const rows: Array<{ webhookId: number; event: OutboxEvent; maxAttempts: number }> = [];
      for (const event of events) {
        for (const webhook of subscribers) if (receives(webhook.subscriber, event)) rows.push({ webhookId: Number(webhook.id), event, maxAttempts: webhook.maxAttempts });
      }
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) await this.options.deliveries.insertDeliveries(trx, rows.slice(i, i + INSERT_CHUNK), now);
      await this.options.consumers.advance(trx, FAN_OUT_CONSUMER, events.at(-1)!.position, now);
      return events.length;
    });
  }

  async #claimAndSend(): Promise<{ full: boolean }> {
    const { settings } = this.options;
    const total = this.#slots.total;
    const free = settings.concurrency - total;
    if (free <= 0) return { full: false };
    // Under load, slots are refilled in batches (one claim costs about as much for one row as
    // for sixteen), and at most REFILL_MS later, so slots held by slow receivers never keep
    // the others waiting.
    if (total > 0 && free < Math.ceil(settings.concurrency / 4) && !this.#refillDue) {
      this.#refillSoon();
      return { full: false };
    }
    this.#refillDue = false;
    const bounds = this.#slots.bounds(settings);
    if (!bounds) return { full: false };
    // Long enough for the attempt and a wait for a slot of its endpoint (see #run).
    const lease = new Date(this.#clock.now() + 2 * settings.timeoutMs + 5000).toISOString();
    const { claimed, lost } = await this.options.deliveries.claimDue(this.#clock.iso(), lease, bounds);
    for (const delivery of claimed) this.#run(delivery);
    // Rows another instance took between our read and our lock: others may be due, so look
    // again shortly (not at once: its transaction may still hold them).
    if (lost > 0) this.#refillSoon();
    return { full: claimed.length === free };
  }

  /**
   * Committed events wait behind a transaction still open (PostgreSQL: outbox-position.ts): no
   * commit signal will come when it ends if it writes no event, so look again soon, backing off
   * to the poll.
   */
  #settleLater(waiting: boolean): void {
    if (!waiting) {
      this.#settleDelayMs = 0;
      return;
    }
    if (this.#stopped || this.#settleTimer) return;
    this.#settleDelayMs = Math.min(this.options.settings.pollMs, Math.max(SETTLE_FIRST_MS, this.#settleDelayMs * 2));
    this.#settleTimer = setTimeout(() => {
      this.#settleTimer = undefined;
      this.outboxCommitted();
    }, this.#settleDelayMs);
    this.#settleTimer.unref();
  }

  #refillSoon(): void {
    if (this.#stopped) return;
    this.#refillTimer ??= setTimeout(() => {
      this.#refillTimer = undefined;
      this.#refillDue = true;
      this.wake();
    }, REFILL_MS);
  }

  #run(delivery: ClaimedDelivery): void {
    this.#slots.take(delivery.webhookId, delivery.accountId);
    void this.attempt(delivery)
      .catch((err: unknown) => this.options.log('webhook attempt could not be recorded; it will be retried when its lease ends', { err, deliveryId: delivery.id }))
      .finally(() => {
        this.#slots.release(delivery.webhookId, delivery.accountId);
        this.wake();
      });
  }

  /** Sends one claimed delivery and records the attempt; returns what happened. */
  attempt(delivery: ClaimedDelivery): Promise<SendResult & { outcome: 'delivered' | 'failed' | 'dead_lettered'; nextAttemptAt: string | null }> {
    // A trace of its own, whatever woke the dispatcher: the send and its database work grouped.
    const attributes = { 'fromagerie.webhook.id': delivery.webhookId, 'fromagerie.event.id': delivery.eventId, 'fromagerie.event.type': delivery.eventType, 'fromagerie.delivery.attempt': delivery.attempt };
    return (this.options.tracer ?? noTracing).inRootSpan('webhook.deliver', attributes, () => this.#attempt(delivery));
  }

  async #attempt(delivery: ClaimedDelivery): Promise<SendResult & { outcome: 'delivered' | 'failed' | 'dead_lettered'; nextAttemptAt: string | null }> {
    const body = envelopeOf(delivery);
    const headers = {
      ...signatureHeaders(this.#secretsOf(delivery), delivery.eventId, body, Math.floor(this.#clock.now() / 1000)),
      'x-cheese-event-id': delivery.eventId,
      'x-cheese-event-type': delivery.eventType,
      'x-cheese-delivery-attempt': String(delivery.attempt),
    };
    const result = await this.options.sender.send(delivery.url, headers, body);
    const next = nextAttemptAt(this.options.settings.retryScheduleS, delivery.scheduleStart, delivery.maxAttempts, { attempt: delivery.attempt, ok: result.ok, retryAfterMs: result.retryAfterMs }, this.#clock.now());
    const gone = result.statusCode === 410;
    const outcome = result.ok ? 'delivered' : next === null || gone ? 'dead_lettered' : 'failed';
    const state: DeliveryState = result.ok ? 'delivered' : outcome === 'dead_lettered' ? 'dead' : 'pending';
    const nextIso = outcome === 'failed' && next !== null ? new Date(next).toISOString() : null;
    await this.#completions.add({
      attempt: {
        deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.eventId, eventType: delivery.eventType, attempt: delivery.attempt, outcome,
        statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error, nextAttemptAt: nextIso,
        // What was sent, for the attempt's detail: the signatures, never the secrets.
        requestHeaders: JSON.stringify(outgoingHeaders(headers, body)), responseBody: result.responseBody, errorClass: result.errorClass,
      },
      leaseUntil: delivery.leaseUntil,
      state,
    });
    if (gone) await this.#disable(delivery.webhookId);
    return { ...result, outcome, nextAttemptAt: nextIso };
  }

  /** 410 Gone: the receiver says it will never want these again. */
  async #disable(webhookId: number): Promise<void> {
    const now = this.#clock.iso();
    await this.options.deliveries.disableWebhook(webhookId, `The receiver answered 410 Gone at ${now}; its pending events were dead-lettered.`, now);
    this.options.log('webhook disabled: its receiver answered 410 Gone', { webhookId });
  }


  #secretsOf(delivery: ClaimedDelivery): string[] {
    const secrets = [this.#open(delivery.secretCiphertext)];
    if (delivery.previousSecretCiphertext && delivery.previousSecretExpiresAt && Date.parse(delivery.previousSecretExpiresAt) > this.#clock.now()) {
      secrets.push(this.#open(delivery.previousSecretCiphertext));
    }
    return secrets;
  }

  #open(ciphertext: string): string {
    let secret = this.#secretCache.get(ciphertext);
    if (secret === undefined) {
      secret = this.options.secrets.open(ciphertext);
      this.#secretCache.set(ciphertext, secret);
    }
    return secret;
  }
}
