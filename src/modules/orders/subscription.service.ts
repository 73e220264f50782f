import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso, toIsoOrNull } from '../../db/columns.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { SYSTEM_CONTEXT } from '../../kernel/change-context.js';
import { AppError, NotFoundError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { StockService } from '../catalogue/catalogue.module.js';
import type { CustomerService } from '../customers/customers.module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import { addressFromFormB, gramsOf } from './order.input.js';
import type { OrderPlacement, Placement } from './order.placement.js';
import type { RecommendationService } from './recommendation.service.js';
import type { SubscriptionRecord, SubscriptionRepository } from './subscription.repository.js';
import { nextMonthlyRun } from './subscription.rules.js';
import type { SubscriptionInputBody, SubscriptionView } from './subscription.schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

function toView(row: SubscriptionRecord): SubscriptionView {
  return {
    plan: 'cheese_of_the_month',
    status: row.status,
    quantityKg: row.grams / 1000,
    shipping: { method: row.shipping_method, address: { line1: row.ship_street, city: row.ship_city, region: row.ship_state, postalCode: row.ship_zip, country: row.ship_country } },
    dayOfMonth: row.day_of_month,
    nextOrderAt: toIsoOrNull(row.next_order_at),
    lastOrderId: row.last_order_id === null ? null : Number(row.last_order_id),
    lastProblem: row.last_problem,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

/**
 * The cheese-of-the-month subscription. Each month the worker picks the customer's best
 * recommendation (never an allergen) and places a real order for it, through the same
 * placement as any order, in the transaction that claims the month.
 */
export class SubscriptionService {
  constructor(
    private readonly options: {
      db: Kysely<DB>;
      subscriptions: SubscriptionRepository;
      customers: CustomerService;
      recommendations: RecommendationService;
      placement: OrderPlacement;
      stock: StockService;
      outbox: Outbox;
      clock?: Clock;
    },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  async get(username: string, principal: Principal): Promise<SubscriptionView> {
    const { db, customers, subscriptions } = this.options;
    const customer = await customers.require(db, username, principal);
    const row = await subscriptions.ofAccount(db, customer.id);
    if (!row) throw new NotFoundError(`${customer.username} has no subscription.`);
    return toView(row);
  }

  /** PUT: starts or replaces the subscription (active again if it was cancelled). */
  async save(username: string, input: SubscriptionInputBody, principal: Principal, ctx: ChangeContext): Promise<{ view: SubscriptionView; created: boolean }> {
    const grams = gramsOf(input.quantity_kg, 'quantity_kg');
    const address = addressFromFormB(input.shipping.address);
    const { db, customers, subscriptions, outbox } = this.options;
    return db.transaction().execute(async (trx) => {
      const customer = await customers.require(trx, username, principal);
      const now = this.#clock.date();
      const day = input.dayOfMonth ?? 1;
      const outcome = await subscriptions.save(trx, {
        account_id: customer.id,
        status: 'active',
        grams,
        shipping_method: input.shipping.method,
        ship_street: address.street,
        ship_city: address.city,
        ship_state: address.state,
        ship_zip: address.zip,
        ship_country: address.country.toUpperCase(),
        day_of_month: day,
        next_order_at: nextMonthlyRun(now, day).toISOString(),
        last_problem: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      });
      const view = toView((await subscriptions.ofAccount(trx, customer.id))!);
      await outbox.record(trx, [this.#event(customer, outcome === 'created' ? 'started' : 'changed', view)], ctx);
      return { view, created: outcome === 'created' };
    });
  }

  async cancel(username: string, principal: Principal, ctx: ChangeContext): Promise<void> {
    const { db, customers, subscriptions, outbox } = this.options;
    await db.transaction().execute(async (trx) => {
      const customer = await customers.require(trx, username, principal);
      const row = await subscriptions.ofAccount(trx, customer.id);
      if (!row || row.status === 'cancelled') throw new NotFoundError(`${customer.username} has no active subscription.`);
      await subscriptions.update(trx, Number(row.id), { status: 'cancelled', next_order_at: null, updated_at: this.#clock.iso() });
      await outbox.record(trx, [this.#event(customer, 'cancelled', toView((await subscriptions.ofAccount(trx, customer.id))!))], ctx);
    });
  }

  /**
   * The worker's part: every month that is due, one order each, placed once. Returns how many.
   * Who is due and which cheese they get are read without locks, so the payment is authorised
   * outside any transaction (OrderPlacement.authorised); the transaction then claims the
   * subscription (locked, still due) and places the order with that authorisation.
   */
  async placeDue(now: Date): Promise<number> {
    const { db, subscriptions } = this.options;
    let placed = 0;
    for (let i = 0; i < 100; i++) {
      const due = await subscriptions.nextDue(db, now.toISOString());
      if (!due) break;
      try {
        await this.#placeMonth(due, now);
        placed++;
      } catch (error) {
        // Another instance's worker has it: it is placed there (and this authorisation was voided).
        if (error instanceof ClaimedElsewhere) break;
        if (!(error instanceof AppError)) throw error;
        // Nothing suitable in stock: nothing was placed (the transaction rolled back); try again tomorrow.
        await subscriptions.update(db, Number(due.id), { next_order_at: new Date(now.getTime() + 86_400_000).toISOString(), last_problem: error.message.slice(0, 500), updated_at: this.#clock.iso() });
      }
    }
    if (placed > 0) this.options.stock.changed();
    return placed;
  }

  async #placeMonth(due: SubscriptionRecord, now: Date): Promise<void> {
    const { db, recommendations, placement, subscriptions } = this.options;
    const accountId = Number(due.account_id);
    const pick = await recommendations.bestFor(db, accountId);
    if (!pick) throw new NotFoundError('No cheese in the catalogue suits this customer this month.');
    const order: Placement = {
      lines: [{ cheese: pick.cheese.id, grams: due.grams, field: 'items.0', quantityField: 'quantity_kg' }],
      address: { street: due.ship_street, city: due.ship_city, state: due.ship_state, zip: due.ship_zip, country: due.ship_country },
      countryField: 'shipping.address.country',
      method: due.shipping_method,
      notes: `Cheese of the month: ${pick.cheese.name}`,
    };
    const owner = { accountId, actor: 'system' as const };
    await placement.authorised(db, order, owner, (authorization) =>
      db.transaction().execute(async (trx) => {
        const claimed = await subscriptions.claimDue(trx, now.toISOString(), Number(due.id));
        if (!claimed) throw new ClaimedElsewhere();
        const record = await placement.placeIn(trx, order, owner, SYSTEM_CONTEXT, authorization);
        await subscriptions.update(trx, Number(claimed.id), { next_order_at: nextMonthlyRun(now, claimed.day_of_month).toISOString(), last_order_id: Number(record.order.id), last_problem: null, updated_at: this.#clock.iso() });
      }),
    );
  }

  #event(customer: { id: number; username: string }, action: 'started' | 'changed' | 'cancelled', view: SubscriptionView) {
    return {
      type: 'customer.subscription_changed' as const,
      aggregateType: 'customer',
      audience: { accountId: customer.id },
      aggregateId: String(customer.id),
      data: { customer_id: String(customer.id), username: customer.username, action, plan: view.plan, status: view.status, quantity_kg: view.quantityKg, day_of_month: view.dayOfMonth, shipping_method: view.shipping.method, next_order_at: view.nextOrderAt },
    };
  }
}

/** The subscription was claimed by another worker between the read and the claim. */
class ClaimedElsewhere extends Error {}
