import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { ConflictError } from '../../kernel/errors.js';
import type { FeatureModule, Job } from '../../kernel/module.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { CheeseDeletionPort, CheeseDirectory, StockService } from '../catalogue/catalogue.module.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import type { AccountDeletionPort, CustomerService, PreferencesService } from '../customers/customers.module.js';
import { SubscriptionRepository } from './subscription.repository.js';
import { subscriptionRoutes } from './subscription.routes.js';
import { SubscriptionService } from './subscription.service.js';
import { recommendationRoutes } from './recommendation.routes.js';
import { RecommendationService } from './recommendation.service.js';
import { SYSTEM_CONTEXT } from '../../kernel/change-context.js';
import { simulatedCourier, simulatedPayments, type Courier, type PaymentGateway } from './order.adapters.js';
import { OrderLifecycle, type CustomerTierPort, type StepDelays } from './order.lifecycle.js';
import { OrderRepository } from './order.repository.js';
import { orderRoutes } from './order.routes.js';
import { OrderService } from './order.service.js';
import { OrderPlacement } from './order.placement.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { PaymentGateway, Courier } from './order.adapters.js';
export type { StepDelays } from './order.lifecycle.js';
export type { OrderService, OrderDetail } from './order.service.js';
export { nextStatus, type PaymentState } from './order.rules.js';
export { orderPlacement } from './order.input.js';
export type { OrderInputBody } from './order.schema.js';
export { SANDBOX_CITY } from './order.repository.js';
export { SHIPPING_METHODS, type OrderStatus, type ShippingMethod } from './order.table.js';

export interface OrdersOptions {
  db: Kysely<DB>;
  environment: CheeseEnv;
  outbox: Outbox;
  stock: StockService;
  cheeses: CheeseDirectory;
  delays: StepDelays;
  /** Signs the order history's cursors. */
  cursors: CursorCodec;
  /** The real providers, when a deployment has them; simulated otherwise. */
  payments?: PaymentGateway;
  courier?: Courier;
  /** Identity's accounts: an order's customer (a username) and staff's filter by one. */
  accounts: AccountDirectory;
  tiers?: CustomerTierPort;
  /** Customers' preference profiles and accounts, for recommendations and subscriptions. */
  preferences?: PreferencesService;
  customers?: CustomerService;
  clock?: Clock;
}

export interface OrdersProvides {
  /** Catalogue asks it before deleting a cheese (decisions.md §4). */
  cheeseDeletion: CheeseDeletionPort;
  /** Customers asks it before closing an account. */
  accountDeletion: AccountDeletionPort;
  orders: OrderService;
}

export type OrdersModule = FeatureModule<OrdersProvides>;

/** How often the lifecycle worker looks for due steps: often enough for the shortest delay, at most every second. */
function pollMs(delays: StepDelays): number {
  const positive = [delays.captureS, delays.shipS, delays.deliverS].filter((s) => s > 0);
  return Math.max(50, Math.min(1000, ...positive.map((s) => (s * 1000) / 4)));
}

/** Orders of both forms, their lifecycle worker, and what deleting a cheese does to them. */
export function createOrdersModule(options: OrdersOptions): OrdersModule {
  const { db, outbox, stock } = options;
  const clock = options.clock ?? systemClock;
  const orders = new OrderRepository(db, options.accounts);
  const payments = options.payments ?? simulatedPayments;
  const lifecycle = new OrderLifecycle({ db, orders, stock, outbox, payments, courier: options.courier ?? simulatedCourier, delays: options.delays, tiers: options.tiers, clock });
  const placement = new OrderPlacement({ orders, lifecycle, stock, cheeses: options.cheeses, payments, clock });
  const service = new OrderService({ db, orders, lifecycle, stock, cheeses: options.cheeses, placement, cursors: options.cursors, accountIdOf: (username) => options.accounts.idOfUsername(db, username), clock });
  const recommendations = options.preferences ? new RecommendationService({ db, orders, cheeses: options.cheeses, preferences: options.preferences }) : undefined;
  const subscriptions =
    options.customers && recommendations
      ? new SubscriptionService({ db, subscriptions: new SubscriptionRepository(), customers: options.customers, recommendations, placement, stock, outbox, clock })
      : undefined;
  // Two jobs at the same pace: one moves orders on (`order-lifecycle`), one places the subscriptions' monthly orders.
  const subscriptionOrders: Job[] = subscriptions ? [{ name: 'subscription-orders', everyMs: pollMs(options.delays), run: (at?: Date) => subscriptions.placeDue(at ?? clock.date()) }] : [];
  const cheeseDeletion: CheeseDeletionPort = {
    // Placed and approved orders holding the cheese are cancelled; a shipped one forbids the deletion.
    async beforeCheeseDeleted(trx, cheeseId, ctx) {
      const open = await orders.openOrdersHolding(trx, cheeseId);
      const shipped = open.filter((order) => order.status === 'shipped');
      if (shipped.length > 0) throw new ConflictError(`The cheese is in shipped orders (${shipped.map((o) => o.id).join(', ')}): it can be deleted once they are delivered.`);
      for (const order of open) await lifecycle.apply(trx, order.id, 'cancel', 'system', ctx, { note: 'cancelled: a cheese of the order was removed from the catalogue' });
    },
  };
  const accountDeletion: AccountDeletionPort = {
    // Orders that have not shipped are cancelled (stock back); all are kept for the books, anonymised.
    async beforeAccountDeleted(trx, accountId) {
      for (const id of await orders.unshippedOf(trx, accountId)) await lifecycle.apply(trx, id, 'cancel', 'system', SYSTEM_CONTEXT, { note: 'cancelled: the customer closed their account' });
      await orders.anonymiseOf(trx, accountId, clock.iso());
    },
  };
  return {
    name: 'orders',
    routes: async (app) => {
      await app.register(orderRoutes, { orders: service, sandbox: options.environment !== 'production' });
      if (recommendations) await app.register(recommendationRoutes, { recommendations });
      if (subscriptions) await app.register(subscriptionRoutes, { subscriptions });
    },
    jobs: [lifecycle.job(pollMs(options.delays)), ...subscriptionOrders, lifecycle.tierJob()],
    provides: { cheeseDeletion, accountDeletion, orders: service },
  };
}
