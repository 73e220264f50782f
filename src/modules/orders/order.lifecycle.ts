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
import { DELIVERY_DAYS, EVENT_OF_STATUS, nextStep, transition, type OrderTrigger } from './order.rules.js';
import type { OrderActor, OrderStatus, OrderTable } from './order.table.js';

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
}

export interface CustomerTierPort {
  /** True when the tier changed. */
  applyTier(trx: Transaction<DB>, accountId: number, deliveredGrams: number, ctx: ChangeContext): Promise<boolean>;
}

const YEAR_MS = 365 * 86_400_000;

/** Staff who ship by hand name the carrier and the tracking number; a system cancellation says why. */
export interface StepDetails {
  carrier?: string;
  trackingNumber?: string;
  note?: string;
}

/**
 * Every status change goes through `apply`: the worker's steps, staff PATCH, cancellation, the
 * sandbox advance and cheese deletion. It checks the transition table, does the step's work
 * (capture, dispatch, stock given back), schedules the next automatic step and records the
 * status change and its event (with `metadata.sequence`), all in the caller's transaction.
 */
export class OrderLifecycle {
  constructor(private readonly options: LifecycleOptions) {}

  /** When the step after `status` is due, or null when it is not automatic. */
  dueAfter(status: OrderStatus, now: Date): string | null {
    const step = nextStep(status);
    const delay = step === 'capture' ? this.options.delays.captureS : step === 'ship' ? this.options.delays.shipS : step === 'deliver' ? this.options.delays.deliverS : -1;
    return delay < 0 ? null : new Date(now.getTime() + delay * 1000).toISOString();
  }

  async apply(trx: Transaction<DB>, orderId: number, trigger: OrderTrigger, actor: OrderActor, ctx: ChangeContext, shipment: StepDetails = {}): Promise<OrderRecord> {
    const { orders, stock, payments, courier } = this.options;
    const order = await orders.lock(trx, orderId);
    if (!order) throw new NotFoundError(`Order ${orderId} not found.`);
    const verdict = transition(order.status, trigger);
    if ('refused' in verdict) throw new ConflictError(verdict.refused);
    const now = new Date();
    const changes: Updateable<OrderTable> = { status: verdict.to, updated_at: now.toISOString(), next_step_at: this.dueAfter(verdict.to, now), event_sequence: Number(order.event_sequence) + 1 };
    let note: string | null = null;
    switch (trigger) {
      case 'capture': {
        if (order.payment_reference) await payments.capture(order.payment_reference, Number(order.total_cents));
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
            : await courier.dispatch({ orderId, method: order.shipping_method, country: order.ship_country }, now);
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
        if (order.payment_reference) await payments.void(order.payment_reference);
        note = shipment.note ?? `cancelled by the ${actor}`;
        break;
      }
    }
    await orders.update(trx, orderId, changes);
    await orders.recordStatus(trx, orderId, verdict.to, actor, note, now.toISOString());
    if (verdict.to === 'delivered' && order.account_id !== null) await this.refreshTier(trx, Number(order.account_id), now, ctx);
    const updated = (await orders.find(trx, orderId))!;
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
        const now = at ?? new Date();
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
   * The `order-lifecycle` job: takes due orders one at a time, each in its own transaction with its claim,
   * so a crash before the commit leaves the step due (it runs again) and a committed step is
   * never due again. On PostgreSQL, instances skip each other's locked orders.
   */
  job(everyMs: number, batch = 100): Job {
    return {
      name: 'order-lifecycle',
      everyMs,
      run: async (at?: Date) => {
        let done = 0;
        while (done < batch) {
          const now = (at ?? new Date()).toISOString();
          const stepped = await this.options.db.transaction().execute(async (trx) => {
            const orderId = await this.options.orders.claimDue(trx, now);
            if (orderId === undefined) return false;
            const order = (await this.options.orders.lock(trx, orderId))!;
            const step = nextStep(order.status);
            if (step === null) await this.options.orders.update(trx, orderId, { next_step_at: null });
            else await this.apply(trx, orderId, step, 'system', SYSTEM_CONTEXT);
            return true;
          });
          if (!stepped) break;
          done++;
        }
        if (done > 0) this.options.stock.changed();
        return done;
      },
    };
  }
}
