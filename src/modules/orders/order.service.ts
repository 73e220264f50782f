import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import { paginate, rowId, type CursorCodec, type Page } from '../../kernel/pagination.js';
import type { Principal } from '../../kernel/principal.js';
import type { CheeseDirectory, StockService } from '../catalogue/catalogue.module.js';
import type { OrderPlacement } from './order.placement.js';
import type { OrderLifecycle } from './order.lifecycle.js';
import { toOrderView } from './order.mapper.js';
import { SANDBOX_CITY, type OrderRecord, type OrderRepository } from './order.repository.js';
import { nextStep, paymentState, triggerFor, triggersTo, type PaymentState } from './order.rules.js';
import { ownerPatchChanges } from './order.input.js';
import type { Placement } from './order.placement.js';
import type { OrderPatchBody, OrderView, TrackingView } from './order.schema.js';
import type { OrderActor, OrderStatus, ShippingMethod } from './order.table.js';
import { toIso } from '../../db/columns.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { Placement, PlacementLine } from './order.placement.js';

/** An order with its status history and payment (the dashboard's order page). */
export interface OrderDetail {
  order: OrderView;
  /** Every status it has had, oldest first, with when and why. */
  timeline: { status: OrderStatus; at: string; note: string | null }[];
  payment: { state: PaymentState; reference: string | null };
}

export interface OrderQuery {
  limit: number;
  cursor?: string;
  statuses?: OrderStatus[];
  from?: string;
  to?: string;
  customer?: string;
}

/** The history's cursors carry the last order's id (the walk is newest first, by id). */
const CURSOR_KIND = 'order';
const isStaff = (principal: Principal) => principal.role === 'admin';
const actorOf = (principal: Principal | null): OrderActor => (principal === null ? 'system' : isStaff(principal) ? 'staff' : 'customer');

export class OrderService {
  constructor(
    private readonly options: {
      db: Kysely<DB>;
      orders: OrderRepository;
      lifecycle: OrderLifecycle;
      stock: StockService;
      cheeses: CheeseDirectory;
      placement: OrderPlacement;
      /** Signs the history's cursors. */
      cursors: CursorCodec;
      /** The account id of a username, for staff filtering by customer. */
      accountIdOf: (username: string) => Promise<number | undefined>;
      clock?: Clock;
    },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /**
   * Places the order: stock reserved, payment authorised, the order, its items, its first
   * status and `order.placed` written in one transaction, or nothing at all (decisions.md §5).
   */
  async place(placement: Placement, principal: Principal, ctx: ChangeContext): Promise<OrderView> {
    const { db, stock } = this.options;
    const owner = { accountId: principal.accountId, actor: actorOf(principal), username: principal.username };
    const placed = await this.options.placement.authorised(db, placement, owner, (authorization) =>
      db.transaction().execute(async (trx) => {
        const placed = await this.options.placement.placeIn(trx, placement, owner, ctx, authorization);
        // With an Idempotency-Key: the order is noted with the key, in its own transaction.
        await ctx.created?.(trx, Number(placed.order.id));
        return placed;
      }),
    );
    stock.changed();
    return toOrderView(placed.order, placed.items);
  }

  async get(id: number, principal: Principal): Promise<OrderView> {
    return this.#view(this.options.db, await this.#visible(this.options.db, id, principal));
  }

  /** The order, its status history and payment, if the principal may see it (another's is a 404). */
  async detail(id: number, principal: Principal): Promise<OrderDetail> {
    const { db, orders } = this.options;
    const record = await this.#visible(db, id, principal);
    const [order, timeline] = await Promise.all([this.#view(db, record), orders.timeline(db, id)]);
    return {
      order,
      timeline: timeline.map((change) => ({ status: change.status, at: toIso(change.at), note: change.note })),
      payment: { state: paymentState(record.status), reference: record.payment_reference },
    };
  }

  async list(principal: Principal, query: OrderQuery): Promise<Page<OrderView>> {
    let accountId: number | undefined = isStaff(principal) ? undefined : principal.accountId;
    if (query.customer !== undefined) {
      if (!isStaff(principal)) throw new ForbiddenError('Only staff filter orders by customer; yours are the only ones you see.');
      accountId = (await this.options.accountIdOf(query.customer)) ?? -1;
    }
    const { cursors } = this.options;
    const beforeId = query.cursor === undefined ? undefined : cursors.decode(CURSOR_KIND, query.cursor, rowId);
    const page = await paginate(
      query.limit,
      (take) => this.options.orders.page({ accountId, statuses: query.statuses, createdFrom: query.from, createdTo: query.to, beforeId, limit: take }),
      (last) => cursors.encode(CURSOR_KIND, Number(last.id)),
    );
    // The customers' usernames (identity's) and the items at once: the page costs two round trips after its own, not three.
    const { db, orders } = this.options;
    const [records, items] = await Promise.all([orders.withCustomers(db, page.items), orders.items(db, page.items.map((r) => Number(r.id)))]);
    return { ...page, items: records.map((record) => toOrderView(record, items.filter((item) => Number(item.order_id) === Number(record.id)))) };
  }

  /** DELETE: placed or approved → cancelled, stock given back; cancelled again is fine (204). */
  async cancel(id: number, principal: Principal, ctx: ChangeContext): Promise<void> {
    const { db, lifecycle, stock } = this.options;
    await db.transaction().execute(async (trx) => {
      const order = await this.#visible(trx, id, principal);
      if (order.status === 'cancelled') return;
      await lifecycle.apply(trx, id, 'cancel', actorOf(principal), ctx);
    });
    stock.changed();
  }

  /**
   * JSON merge patch: the owner (or staff) changes `notes` and the address while the order is
   * `placed`; staff alone drive `status` (with `carrier` and `trackingNumber` when shipping).
   */
  async patch(id: number, body: OrderPatchBody, principal: Principal, ctx: ChangeContext): Promise<OrderView> {
    const { db, orders, lifecycle, stock } = this.options;
    const staffFields = (['status', 'carrier', 'trackingNumber'] as const).filter((name) => body[name] !== undefined);
    /** Who may, and the owner's fields, in the change's transaction: the order locked as `order`. */
    const ownerChanges = async (trx: Transaction<DB>, order: OrderRecord): Promise<OrderRecord> => {
      if (!isStaff(principal) && Number(order.account_id) !== principal.accountId) throw new NotFoundError(`Order ${id} not found.`);
      if (staffFields.length > 0 && !isStaff(principal)) throw new ForbiddenError(`Only staff may set ${staffFields.join(', ')}.`);
      if ((body.carrier !== undefined || body.trackingNumber !== undefined) && body.status !== 'shipped') {
        throw ValidationFailedError.field(body.carrier !== undefined ? 'carrier' : 'trackingNumber', 'is set only when shipping (status "shipped")');
      }
      if (body.notes === undefined && body.shippingAddress === undefined) return order;
      if (order.status !== 'placed') throw new ConflictError(`The order is ${order.status}: notes and the address change only while it is placed.`);
      await orders.update(trx, id, { ...ownerPatchChanges(body), updated_at: this.#clock.iso() });
      return orders.reread(trx, order);
    };
    const seen = await this.#visible(db, id, principal);
    if (staffFields.length > 0 && !isStaff(principal)) throw new ForbiddenError(`Only staff may set ${staffFields.join(', ')}.`);
    const record =
      body.status !== undefined && body.status !== seen.status
        ? // A status change may call the payment provider or the courier: outside the transaction (issue 20).
          await lifecycle.step(id, triggerFor(body.status)!, 'staff', ctx, { carrier: body.carrier, trackingNumber: body.trackingNumber }, async (trx, order) => {
            await ownerChanges(trx, order);
          })
        : await db.transaction().execute(async (trx) => ownerChanges(trx, await this.#visible(trx, id, principal)));
    if (body.status !== undefined) stock.changed();
    return this.#view(db, record);
  }

  async tracking(id: number, principal: Principal): Promise<TrackingView> {
    const { db, orders } = this.options;
    const order = await this.#visible(db, id, principal);
    if (order.carrier === null || order.tracking_number === null || order.estimated_delivery === null) {
      throw new ConflictError(`The order is ${order.status}: tracking starts once it has shipped.`);
    }
    const timeline = await orders.timeline(db, id);
    return {
      orderId: id,
      status: order.status,
      carrier: order.carrier,
      trackingNumber: order.tracking_number,
      estimatedDelivery: toIso(order.estimated_delivery),
      timeline: timeline.map((change) => ({ status: change.status, at: toIso(change.at), note: change.note })),
    };
  }

  /** Sandbox and development: the next automatic step, now (409 when there is none). */
  async advance(id: number, principal: Principal, ctx: ChangeContext): Promise<OrderView> {
    const { db, lifecycle, stock } = this.options;
    const order = await this.#visible(db, id, principal);
    const trigger = nextStep(order.status);
    if (trigger === null) throw new ConflictError(`The order is ${order.status}: it has no next state.`);
    // The step's provider call is made before its transaction; a concurrent change makes it a 409.
    const record = await lifecycle.step(id, trigger, actorOf(principal), ctx);
    stock.changed();
    return this.#view(db, record);
  }

  /**
   * Sandbox and development: orders 1 to 10 for client developers to read and move on (the
   * Form A note), placed by the test customer in a spread of states. Only in a shop without
   * orders, so they get those ids; returns how many were made.
   */
  async seedSandbox(customer: Principal): Promise<number> {
    const { db, lifecycle, cheeses } = this.options;
    if (await this.options.orders.any(db)) return 0;
    const cheeseIds = await cheeses.orderable(db, 5000, 10);
    if (cheeseIds.length === 0) return 0;
    const targets: OrderStatus[] = ['placed', 'placed', 'approved', 'approved', 'shipped', 'shipped', 'delivered', 'delivered', 'cancelled', 'cancelled'];
    const methods: ShippingMethod[] = ['standard', 'temperature_controlled', 'express_chilled'];
    const ctx: ChangeContext = { requestId: null, principal: customer };
    for (const [i, target] of targets.entries()) {
      const order = await this.place(
        {
          lines: [{ cheese: cheeseIds[i % cheeseIds.length]!, grams: 1000 + 250 * (i % 4), field: 'items.0', quantityField: 'items.0.quantity_kg' }],
          address: { street: `${i + 1} Test Street`, city: SANDBOX_CITY, state: null, zip: '00000', country: 'FR' },
          countryField: 'shipping.address.country',
          method: methods[i % methods.length]!,
          notes: `Sandbox order ${i + 1}: ${target}`,
        },
        customer,
        ctx,
      );
      for (const trigger of triggersTo(target)) await lifecycle.step(order.id, trigger, 'system', ctx);
      // Fixtures keep their state: the worker leaves them alone (the sandbox advance moves them on).
      await db.transaction().execute((trx) => this.options.orders.update(trx, order.id, { next_step_at: null }));
    }
    this.options.stock.changed();
    return targets.length;
  }

  /**
   * Removes the development fixtures among the orders (OrderRepository.sandboxOrders): those
   * not shipped are cancelled first (their reserved stock goes back), then all
   * are deleted. `dryRun` only lists them. Returns their ids.
   */
  async removeSandboxOrders(accountId: number | null, before: string, dryRun = false): Promise<number[]> {
    const { db, lifecycle, orders, stock } = this.options;
    const ids = await db.transaction().execute(async (trx) => {
      const found = await orders.sandboxOrders(trx, accountId, before);
      if (dryRun) return found.map((order) => order.id);
      for (const order of found.filter((o) => o.status === 'placed' || o.status === 'approved')) {
        await lifecycle.apply(trx, order.id, 'cancel', 'system', { requestId: null, principal: null }, { note: 'cancelled: a development fixture removed' });
      }
      await orders.delete(trx, found.map((order) => order.id));
      return found.map((order) => order.id);
    });
    if (ids.length > 0 && !dryRun) stock.changed();
    return ids;
  }

  /** The order if the principal may see it: their own, or any for staff. Another's is a 404, so ids cannot be probed. */
  async #visible(executor: Kysely<DB>, id: number, principal: Principal): Promise<OrderRecord> {
    const order = await (executor.isTransaction ? this.options.orders.lock(executor as Transaction<DB>, id) : this.options.orders.find(executor, id));
    if (!order || (!isStaff(principal) && Number(order.account_id) !== principal.accountId)) throw new NotFoundError(`Order ${id} not found.`);
    return order;
  }

  async #view(executor: Kysely<DB>, record: OrderRecord): Promise<OrderView> {
    return (await this.#views(executor, [record]))[0]!;
  }

  async #views(executor: Kysely<DB>, records: readonly OrderRecord[]): Promise<OrderView[]> {
    const items = await this.options.orders.items(executor, records.map((r) => Number(r.id)));
    return records.map((record) => toOrderView(record, items.filter((item) => Number(item.order_id) === Number(record.id))));
  }
}
