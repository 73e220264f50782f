import type { Kysely, Transaction, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { SYSTEM_CONTEXT } from '../../kernel/change-context.js';
import { ConflictError, NotFoundError } from '../../kernel/errors.js';
import type { Job } from '../../kernel/module.js';
import type { StockService } from '../catalogue/catalogue.module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { Courier, PaymentGateway } from './order.adapters.js';
import { orderEventData, toOrderView } from './order.mapper.js';
import type { ItemRecord, OrderRecord, OrderRepository } from './order.repository.js';
import { OrderStepRepository, type ClaimedStep } from './order-step.repository.js';
import { DELIVERY_DAYS, EVENT_OF_STATUS, nextStep, transition, type OrderTrigger } from './order.rules.js';
import type { OrderActor, OrderStatus, OrderTable } from './order.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** Seconds before each automatic step; -1 leaves that step to staff (PATCH) or the sandbox advance. */
export interface StepDelays {
  captureS: number;
  shipS: number;
  deliverS: number;
}

export interface LifecycleOptions {
  db: Kysely<DB>;
  orders: OrderRepository;
  stock: StockService;
  outbox: Outbox;
  payments: PaymentGateway;
  courier: Courier;
  delays: StepDelays;
  /** The customer's tier follows delivered volume (customers implements it). */
  tiers?: CustomerTierPort;
  clock?: Clock;
}

export interface CustomerTierPort {
  /** True when the tier changed. */
  applyTier(trx: Transaction<DB>, accountId: number, deliveredGrams: number, ctx: ChangeContext): Promise<boolean>;
}

const YEAR_MS = 365 * 86_400_000;
/**
 * How long a claimed step is the worker's alone while it calls the provider outside any
 * transaction; an instance that dies mid-call leaves the step to another after this. Longer
 * than a provider call should take; one that takes longer may be made twice (idempotent), and
 * only the first answer is recorded.
 */
const STEP_LEASE_SECONDS = 15;

/** A provider's answer, obtained before the step's transaction (`perform`) and recorded in it (`apply`). */
export interface PerformedCall {
  captured?: boolean;
  dispatched?: { carrier: string; trackingNumber: string; estimatedDelivery: Date };
}

/** What `perform` needs of the order. */
type StepTarget = Pick<ClaimedStep, 'id' | 'paymentReference' | 'totalCents' | 'shippingMethod' | 'shipCountry'>;

/** Staff who ship by hand name the carrier and the tracking number; a system cancellation says why. */
export interface StepDetails {
  carrier?: string;
  trackingNumber?: string;
  note?: string;
}

/**
 * Every status change goes through `apply`: the worker's steps, staff PATCH, cancellation, the
 * sandbox advance and cheese deletion. It checks the transition table, records the step's work
 * (capture, dispatch, stock given back), schedules the next automatic step and records the
 * status change and its event (with `metadata.sequence`), all in the caller's transaction.
 * The payment and courier calls are never made inside a transaction (a network call would hold
 * a connection and the order's lock): `perform` makes them first, idempotently (by payment
 * reference, by order id), and `apply` records their answer; a cancelled order's payment is
 * voided by the worker after the cancellation committed (issue 20).
 */
export class OrderLifecycle {
  readonly #steps: OrderStepRepository;

  constructor(private readonly options: LifecycleOptions) {
    this.#steps = new OrderStepRepository(options.db);
  }

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /** When the step after `status` is due, or null when it is not automatic. */
  dueAfter(status: OrderStatus, now: Date): string | null {
    const delay = this.#delayAfter(status);
    return delay === null ? null : new Date(now.getTime() + delay * 1000).toISOString();
  }

  #delayAfter(status: OrderStatus): number | null {
    const step = nextStep(status);
    const delay = step === 'capture' ? this.options.delays.captureS : step === 'ship' ? this.options.delays.shipS : step === 'deliver' ? this.options.delays.deliverS : -1;
    return delay < 0 ? null : delay;
  }

  /**
   * The provider call a step needs, made outside any transaction: a capture (by the payment
   * reference, which a real provider deduplicates), a courier booking (by order id) unless staff
   * name the carrier and the tracking number. Cancellation calls nothing here (see `job`).
   */
  async perform(order: StepTarget, trigger: OrderTrigger, shipment: StepDetails = {}, now = this.#clock.date()): Promise<PerformedCall> {
    if (trigger === 'capture' && order.paymentReference) {
      await this.options.payments.capture(order.paymentReference, order.totalCents);
      return { captured: true };
    }
    if (trigger === 'ship' && !(shipment.carrier && shipment.trackingNumber)) {
      return { dispatched: await this.options.courier.dispatch({ orderId: order.id, method: order.shippingMethod, country: order.shipCountry }, now) };
    }
    return {};
  }

  /**
   * One step as a request makes it: the order read, the provider called (outside), then the
   * change recorded in its own transaction, where `check` runs first (who may, what else changes).
   */
  async step(orderId: number, trigger: OrderTrigger, actor: OrderActor, ctx: ChangeContext, shipment: StepDetails = {}, check?: (trx: Transaction<DB>, order: OrderRecord) => Promise<void>): Promise<OrderRecord> {
    const { db, orders } = this.options;
    const order = await orders.find(db, orderId);
    if (!order) throw new NotFoundError(`Order ${orderId} not found.`);
    const verdict = transition(order.status, trigger);
    // A step refused now calls nothing; the transaction still runs `check`, whose answer (404, 403) comes first.
    const performed = 'refused' in verdict ? undefined : await this.perform(targetOf(order), trigger, shipment);
    try {
      return await db.transaction().execute(async (trx) => {
        const current = await orders.lock(trx, orderId);
        if (!current) throw new NotFoundError(`Order ${orderId} not found.`);
        if (check) await check(trx, current);
        if ('refused' in verdict || !performed) throw new ConflictError('refused' in verdict ? verdict.refused : `Order ${orderId} cannot move on.`);
        return this.apply(trx, orderId, trigger, actor, ctx, shipment, performed);
      });
    } catch (error) {
      // Captured, then found cancelled meanwhile: its void may have come before our capture.
      if (performed?.captured && order.payment_reference && (await orders.find(db, orderId))?.status === 'cancelled') await this.options.payments.void(order.payment_reference);
      throw error;
    }
  }

  /**
   * Records a status change in the caller's transaction. A capture or a courier booking must
   * have been made first (`perform`, outside the transaction) and its answer passed here.
   */
  async apply(trx: Transaction<DB>, orderId: number, trigger: OrderTrigger, actor: OrderActor, ctx: ChangeContext, shipment: StepDetails = {}, performed: PerformedCall = {}): Promise<OrderRecord> {
    const { orders, stock } = this.options;
    const order = await orders.lock(trx, orderId);
    if (!order) throw new NotFoundError(`Order ${orderId} not found.`);
    const verdict = transition(order.status, trigger);
    if ('refused' in verdict) throw new ConflictError(verdict.refused);
    const now = this.#clock.date();
    const changes: Updateable<OrderTable> = { status: verdict.to, updated_at: now.toISOString(), event_sequence: Number(order.event_sequence) + 1 };
    // A cancelled order with a payment is due at once: the worker voids it once this commits.
    const nextStepIn = trigger === 'cancel' ? (order.payment_reference ? 0 : null) : this.#delayAfter(verdict.to);
    let note: string | null = null;
    switch (trigger) {
      case 'capture': {
        if (order.payment_reference && !performed.captured) throw new Error(`order ${orderId}: capture the payment (perform) before recording it`);
        const shipIn = this.options.delays.shipS;
        changes.ship_date = new Date(now.getTime() + Math.max(0, shipIn) * 1000).toISOString();
        note = 'payment captured';
        break;
      }
      case 'ship': {
        // Staff who ship by hand name the carrier and the number; otherwise the courier adapter books it.
        const dispatched =
          shipment.carrier && shipment.trackingNumber
            ? { carrier: shipment.carrier, trackingNumber: shipment.trackingNumber, estimatedDelivery: new Date(now.getTime() + DELIVERY_DAYS[order.shipping_method] * 86_400_000) }
            : performed.dispatched;
        if (!dispatched) throw new Error(`order ${orderId}: book the courier (perform) before recording the shipment`);
        Object.assign(changes, { carrier: dispatched.carrier, tracking_number: dispatched.trackingNumber, estimated_delivery: dispatched.estimatedDelivery.toISOString(), ship_date: now.toISOString() });
        note = `handed to ${dispatched.carrier}, ${dispatched.trackingNumber}`;
        break;
      }
      case 'deliver':
        note = 'delivered';
        break;
      case 'cancel': {
        const items = await orders.items(trx, [orderId]);
        await stock.release(trx, items.flatMap((item) => (item.cheese_id === null ? [] : [{ cheeseId: Number(item.cheese_id), grams: item.grams }])), ctx);
        note = shipment.note ?? `cancelled by the ${actor}`;
        break;
      }
    }
    await orders.update(trx, orderId, changes);
    await this.#steps.schedule(trx, orderId, nextStepIn);
    await orders.recordStatus(trx, orderId, verdict.to, actor, note, now.toISOString());
    if (verdict.to === 'delivered' && order.account_id !== null) await this.refreshTier(trx, Number(order.account_id), now, ctx);
    const updated = await orders.reread(trx, order);
    await this.recordEvent(trx, updated, ctx);
    return updated;
  }

  /** The account's tier from its deliveries of the last 12 months; true when it changed. */
  async refreshTier(trx: Transaction<DB>, accountId: number, now: Date, ctx: ChangeContext): Promise<boolean> {
    if (!this.options.tiers) return false;
    const grams = await this.options.orders.deliveredGramsSince(trx, accountId, new Date(now.getTime() - YEAR_MS).toISOString());
    return this.options.tiers.applyTier(trx, accountId, grams, ctx);
  }

  /** Hourly: tiers fall as deliveries age out of the 12 months. Counts the customers whose tier changed. */
  tierJob(): Job {
    return {
      name: 'customer-tiers',
      everyMs: 86_400_000 / 24,
      run: async (at?: Date) => {
        const now = at ?? this.#clock.date();
        // Anyone who had a delivery in the last 13 months may have changed tier since.
        const accounts = await this.options.orders.accountsDeliveredSince(this.options.db, new Date(now.getTime() - YEAR_MS - 30 * 86_400_000).toISOString());
        let changed = 0;
        for (const accountId of accounts) if (await this.options.db.transaction().execute((trx) => this.refreshTier(trx, accountId, now, SYSTEM_CONTEXT))) changed++;
        return changed;
      },
    };
  }

  /** The order's current state as its status's event, numbered by `event_sequence`. */
  async recordEvent(trx: Transaction<DB>, order: OrderRecord, ctx: ChangeContext, items?: readonly ItemRecord[]): Promise<void> {
    const view = toOrderView(order, items ?? (await this.options.orders.items(trx, [Number(order.id)])));
    await this.options.outbox.record(
      trx,
      [{ type: EVENT_OF_STATUS[order.status], aggregateType: 'order', aggregateId: String(order.id), audience: order.account_id === null ? 'staff' : { accountId: Number(order.account_id) }, data: orderEventData(view), metadata: { sequence: Number(order.event_sequence), order_id: String(order.id) } }],
      ctx,
    );
  }

  /**
   * The `order-lifecycle` job: claims due steps one at a time, each in a short transaction
   * that leases it (on the database's clock), calls the provider outside any transaction, and
   * records the step in another, if the order is still where it was claimed (a replay after a
   * lost lease finds it moved on and records nothing). A cancelled order's payment is voided the
   * same way. A crash anywhere leaves the step due again when its lease ends; the calls are
   * idempotent, so making one twice is harmless. `at` (tests) stands for "now" in the claim.
   */
  job(everyMs: number, batch = 100): Job {
    return {
      name: 'order-lifecycle',
      everyMs,
      run: async (at?: Date) => {
        let done = 0;
        const seen = new Set<string>();
        while (done < batch) {
          const claimed = await this.#steps.claimDue(at?.toISOString(), STEP_LEASE_SECONDS);
          // With `at` ahead of the database's clock, a leased step not taken would come back at once.
          const key = `${claimed?.id}:${claimed?.status}`;
          if (!claimed || seen.has(key)) break;
          seen.add(key);
          if (await this.#runClaimed(claimed)) done++;
        }
        if (done > 0) this.options.stock.changed();
        return done;
      },
    };
  }

  /** True when the order moved on (a void, or a step found already done, is not a status change). */
  async #runClaimed(claimed: ClaimedStep): Promise<boolean> {
    const { db, orders, payments } = this.options;
    const step = nextStep(claimed.status);
    if (step === null) {
      if (claimed.status === 'cancelled' && claimed.paymentReference) await payments.void(claimed.paymentReference);
      await this.#steps.clear(claimed.id);
      return false;
    }
    const performed = await this.perform(claimed, step);
    const outcome = await db.transaction().execute(async (trx) => {
      const current = await orders.lock(trx, claimed.id);
      if (!current || current.status !== claimed.status) return current?.status ?? 'gone';
      await this.apply(trx, claimed.id, step, 'system', SYSTEM_CONTEXT, {}, performed);
      return 'stepped';
    });
    // Cancelled while we captured: its void may have run before our capture, so void again.
    if (outcome === 'cancelled' && performed.captured && claimed.paymentReference) await payments.void(claimed.paymentReference);
    return outcome === 'stepped';
  }
}

function targetOf(order: OrderRecord): StepTarget {
  return { id: Number(order.id), paymentReference: order.payment_reference, totalCents: Number(order.total_cents), shippingMethod: order.shipping_method, shipCountry: order.ship_country };
}
