import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { isPostgres } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { DB } from '../../db/schema.js';
import { columnsExcept } from '../../db/table-columns.js';
import type { AccountDirectory } from '../identity/identity.module.js';
import { ORDER_COLUMNS, type OrderActor, type OrderItemTable, type OrderStatus, type OrderStatusChangeTable, type OrderTable } from './order.table.js';

/** The city of the sandbox orders' addresses (OrderService.seedSandbox): it outlives their account's anonymisation. */
export const SANDBOX_CITY = 'Sandbox City';

const ORDER_COLUMN_NAMES = columnsExcept(ORDER_COLUMNS, []);
const ORDER_SELECT = ORDER_COLUMN_NAMES.map((column) => `o.${column}` as const);

function selectOrders(db: Kysely<DB>) {
  return db.selectFrom('orders as o').select(ORDER_SELECT);
}

/** An order as stored, without its customer (see withCustomers). */
export type OrderRow = Awaited<ReturnType<ReturnType<typeof selectOrders>['executeTakeFirstOrThrow']>>;

/** An order as stored, with `customer`: its account's username (identity's), null once that account is deleted. */
export type OrderRecord = OrderRow & { customer: string | null };

/** An order line as stored: the cheese's name, slug and price at placement. */
export type ItemRecord = Omit<Selectable<OrderItemTable>, 'id'>;

export interface OrderFilter {
  /** Only this account's orders (a customer's own history); all when undefined (staff). */
  accountId?: number;
  statuses?: OrderStatus[];
  createdFrom?: string;
  createdTo?: string;
  /** Keyset: orders with a smaller id (newest first). */
  beforeId?: number;
  limit: number;
}

const insertOrder = prepared((db, order: Insertable<OrderTable>) => db.insertInto('orders').values(order).returning(ORDER_COLUMN_NAMES));

const insertStatusChange = prepared((db, change: Insertable<OrderStatusChangeTable>) => db.insertInto('order_status_changes').values(change));

/**
 * A placed order as one flat set of values (prepared queries take values, not nested rows):
 * the order's columns, its first status change's (`change_`), and its lines, one array per
 * column (`item_`).
 */
type PlacedValues = Insertable<OrderTable> & {
  change_status: OrderStatus;
  change_actor: OrderActor;
  change_note: string | null;
  change_at: string;
  item_positions: number[];
  item_cheese_ids: (number | null)[];
  item_slugs: (string | null)[];
  item_names: string[];
  item_grams: number[];
  item_prices: number[];
};

/**
 * PostgreSQL: the order, its lines and its first status change in one statement (data-modifying
 * CTEs; the lines and the change take the new id from `o`), returning the order as stored.
 */
const insertPlacedOrder = prepared((db, values: PlacedValues) => {
  const { change_status, change_actor, change_note, change_at, item_positions, item_cheese_ids, item_slugs, item_names, item_grams, item_prices, ...order } = values;
  return db
    .with('o', (qb) => qb.insertInto('orders').values(order).returning(ORDER_COLUMN_NAMES))
    .with('i', (qb) =>
      qb.insertInto('order_items').values(
        item_positions.map((position, i) => ({
          order_id: qb.selectFrom('o').select('o.id'),
          position,
          cheese_id: item_cheese_ids[i]!,
          cheese_slug: item_slugs[i]!,
          cheese_name: item_names[i]!,
          grams: item_grams[i]!,
          price_cents: item_prices[i]!,
        })),
      ),
    )
    .with('s', (qb) => qb.insertInto('order_status_changes').values({ order_id: qb.selectFrom('o').select('o.id'), status: change_status, actor: change_actor, note: change_note, at: change_at }))
    .selectFrom('o')
    .select(ORDER_COLUMN_NAMES.map((column) => `o.${column}` as const));
});

/**
 * Orders' SQL names only orders' tables: the customer's username comes from identity's
 * AccountDirectory, one query per read (a page included) in the caller's transaction.
 */
export class OrderRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly accounts: AccountDirectory,
  ) {}

  /** The rows with their customers' usernames: one lookup for all of them. */
  async withCustomers(executor: Kysely<DB>, rows: readonly OrderRow[]): Promise<OrderRecord[]> {
    const ids = rows.flatMap((row) => (row.account_id === null ? [] : [Number(row.account_id)]));
    const usernames = await this.accounts.usernamesOf(executor, ids);
    return rows.map((row) => ({ ...row, customer: row.account_id === null ? null : (usernames.get(Number(row.account_id)) ?? null) }));
  }

  /** The customer of a new order: the one the caller knows (the principal placing it), else asked. */
  async #customerOf(executor: Kysely<DB>, accountId: number | null | undefined, known: string | undefined): Promise<string | null> {
    if (accountId === null || accountId === undefined) return null;
    return known ?? (await this.accounts.usernamesOf(executor, [accountId])).get(accountId) ?? null;
  }

  /** The order and its items, written; returns them as stored (no read back). `customer`: the owner's username when the caller knows it. */
  async insert(trx: Transaction<DB>, order: Insertable<OrderTable>, items: Omit<ItemRecord, 'order_id'>[], customer?: string): Promise<{ order: OrderRecord; items: ItemRecord[] }> {
    const row = (await insertOrder(trx, order))[0]!;
    const orderId = Number(row.id);
    const stored = items.map((item) => ({ ...item, order_id: orderId }));
    await trx.insertInto('order_items').values(stored).execute();
    return { order: { ...row, customer: await this.#customerOf(trx, row.account_id, customer) }, items: stored };
  }

  /**
   * A new order with its items and first status change: one round trip on PostgreSQL, three
   * local statements on SQLite (no data-modifying CTEs there). Returns them as stored.
   * `customer`: the owner's username when the caller knows it (else one more query asks identity).
   */
  async insertPlaced(
    trx: Transaction<DB>,
    order: Insertable<OrderTable>,
    items: Omit<ItemRecord, 'order_id'>[],
    change: Omit<Insertable<OrderStatusChangeTable>, 'order_id'>,
    customer?: string,
  ): Promise<{ order: OrderRecord; items: ItemRecord[] }> {
    if (!isPostgres(trx)) {
      const placed = await this.insert(trx, order, items, customer);
      await insertStatusChange(trx, { ...change, order_id: Number(placed.order.id) });
      return placed;
    }
    const [record] = await insertPlacedOrder(trx, {
      ...order,
      change_status: change.status,
      change_actor: change.actor,
      change_note: change.note ?? null,
      change_at: change.at,
      item_positions: items.map((item) => item.position),
      item_cheese_ids: items.map((item) => item.cheese_id),
      item_slugs: items.map((item) => item.cheese_slug),
      item_names: items.map((item) => item.cheese_name),
      item_grams: items.map((item) => item.grams),
      item_prices: items.map((item) => item.price_cents),
    });
    const orderId = Number(record!.id);
    return { order: { ...record!, customer: await this.#customerOf(trx, record!.account_id, customer) }, items: items.map((item) => ({ ...item, order_id: orderId })) };
  }

  async recordStatus(trx: Transaction<DB>, orderId: number, status: OrderStatus, actor: OrderActor, note: string | null, at: string): Promise<void> {
    await insertStatusChange(trx, { order_id: orderId, status, actor, note, at });
  }

  async find(executor: Kysely<DB>, id: number): Promise<OrderRecord | undefined> {
    const row = await selectOrders(executor).where('o.id', '=', id).executeTakeFirst();
    return row && (await this.withCustomers(executor, [row]))[0];
  }

  /**
   * The order read again after a change of its own row, keeping `previous`'s customer: no
   * change of an order moves it to another account, so identity is not asked twice.
   */
  async reread(executor: Kysely<DB>, previous: OrderRecord): Promise<OrderRecord> {
    const row = await selectOrders(executor).where('o.id', '=', Number(previous.id)).executeTakeFirstOrThrow();
    return { ...row, customer: row.account_id === previous.account_id ? previous.customer : (await this.withCustomers(executor, [row]))[0]!.customer };
  }

  /** The order, locked until the transaction ends on PostgreSQL (SQLite: one writer at a time). */
  async lock(trx: Transaction<DB>, id: number): Promise<OrderRecord | undefined> {
    const query = selectOrders(trx).where('o.id', '=', id);
    const row = await (isPostgres(trx) ? query.forUpdate('o') : query).executeTakeFirst();
    return row && (await this.withCustomers(trx, [row]))[0];
  }

  async update(trx: Transaction<DB>, id: number, changes: Updateable<OrderTable>): Promise<void> {
    await trx.updateTable('orders').set(changes).where('id', '=', id).execute();
  }

  async items(executor: Kysely<DB>, orderIds: readonly number[]): Promise<ItemRecord[]> {
    if (orderIds.length === 0) return [];
    return executor
      .selectFrom('order_items')
      .select(['order_id', 'position', 'cheese_id', 'cheese_slug', 'cheese_name', 'grams', 'price_cents'])
      .where('order_id', 'in', [...orderIds])
      .orderBy('order_id')
      .orderBy('position')
      .execute();
  }

  /** A page of rows; the caller asks withCustomers for the ones it keeps (beside their items, at once). */
  async page(filter: OrderFilter): Promise<OrderRow[]> {
    let query = selectOrders(this.db);
    if (filter.accountId !== undefined) query = query.where('o.account_id', '=', filter.accountId);
    if (filter.statuses?.length) query = query.where('o.status', 'in', filter.statuses);
    if (filter.createdFrom) query = query.where('o.created_at', '>=', filter.createdFrom);
    if (filter.createdTo) query = query.where('o.created_at', '<', filter.createdTo);
    if (filter.beforeId !== undefined) query = query.where('o.id', '<', filter.beforeId);
    return query.orderBy('o.id', 'desc').limit(filter.limit).execute();
  }

  async timeline(executor: Kysely<DB>, orderId: number): Promise<{ status: OrderStatus; at: Date | string; note: string | null }[]> {
    return executor.selectFrom('order_status_changes').select(['status', 'at', 'note']).where('order_id', '=', orderId).orderBy('id').execute();
  }

  /** Kilograms (as grams) of the account's orders delivered since `since`: what its tier follows. */
  async deliveredGramsSince(executor: Kysely<DB>, accountId: number, since: string): Promise<number> {
    const row = await executor
      .selectFrom('orders as o')
      .innerJoin('order_items as i', 'i.order_id', 'o.id')
      .innerJoin('order_status_changes as s', (join) => join.onRef('s.order_id', '=', 'o.id').on('s.status', '=', 'delivered'))
      .select(({ fn }) => fn.sum<number | string | null>('i.grams').as('grams'))
      .where('o.account_id', '=', accountId)
      .where('o.status', '=', 'delivered')
      .where('s.at', '>=', since)
      .executeTakeFirst();
    return Number(row?.grams ?? 0);
  }

  /** Accounts with a delivery since `since`: whose tier may change as deliveries age out of the 12 months. */
  async accountsDeliveredSince(executor: Kysely<DB>, since: string): Promise<number[]> {
    const rows = await executor
      .selectFrom('orders as o')
      .innerJoin('order_status_changes as s', (join) => join.onRef('s.order_id', '=', 'o.id').on('s.status', '=', 'delivered'))
      .select('o.account_id')
      .distinct()
      .where('o.account_id', 'is not', null)
      .where('s.at', '>=', since)
      .execute();
    return rows.map((row) => Number(row.account_id));
  }

  /** The cheeses of the account's orders that were not cancelled: its history, for recommendations. */
  async cheesesBoughtBy(executor: Kysely<DB>, accountId: number): Promise<Set<number>> {
    const rows = await executor
      .selectFrom('order_items as i')
      .innerJoin('orders as o', 'o.id', 'i.order_id')
      .select('i.cheese_id')
      .distinct()
      .where('o.account_id', '=', accountId)
      .where('o.status', '!=', 'cancelled')
      .where('i.cheese_id', 'is not', null)
      .execute();
    return new Set(rows.map((row) => Number(row.cheese_id)));
  }

  /** The account's orders that have not shipped yet, locked. */
  async unshippedOf(trx: Transaction<DB>, accountId: number): Promise<number[]> {
    const query = trx.selectFrom('orders').select('id').where('account_id', '=', accountId).where('status', 'in', ['placed', 'approved']).orderBy('id');
    return (await (isPostgres(trx) ? query.forUpdate() : query).execute()).map((row) => Number(row.id));
  }

  /** Keeps the account's orders for the books without who and where: street, postcode and notes go. */
  async anonymiseOf(trx: Transaction<DB>, accountId: number, now: string): Promise<void> {
    await trx.updateTable('orders').set({ ship_street: '(removed)', ship_zip: null, notes: null, updated_at: now }).where('account_id', '=', accountId).execute();
  }

  /**
   * Development fixtures (src/fixtures.ts): orders made before `before` by the sandbox's test
   * customer (`accountId`), or left without an account (its account closed, the orders
   * anonymised) at the sandbox orders' address. Locked, oldest first.
   */
  async sandboxOrders(trx: Transaction<DB>, accountId: number | null, before: string): Promise<{ id: number; status: OrderStatus }[]> {
    const query = trx
      .selectFrom('orders')
      .select(['id', 'status'])
      .where('created_at', '<', before)
      .where((eb) => eb.or([...(accountId === null ? [] : [eb('account_id', '=', accountId)]), eb.and([eb('account_id', 'is', null), eb('ship_city', '=', SANDBOX_CITY)])]))
      .orderBy('id');
    return (await (isPostgres(trx) ? query.forUpdate() : query).execute()).map((row) => ({ id: Number(row.id), status: row.status }));
  }

  /** Deletes the orders with their items and status history (ON DELETE CASCADE). */
  async delete(trx: Transaction<DB>, ids: readonly number[]): Promise<void> {
    if (ids.length > 0) await trx.deleteFrom('orders').where('id', 'in', ids).execute();
  }

  /** Whether any order exists (the sandbox's orders 1 to 10 are made only in an empty shop). */
  async any(executor: Kysely<DB>): Promise<boolean> {
    return (await executor.selectFrom('orders').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** Open orders (not delivered, not cancelled) holding the cheese, locked. */
  async openOrdersHolding(trx: Transaction<DB>, cheeseId: number): Promise<{ id: number; status: OrderStatus }[]> {
    const query = trx
      .selectFrom('orders')
      .select(['id', 'status'])
      .where('status', 'in', ['placed', 'approved', 'shipped'])
      .where(({ exists, selectFrom }) => exists(selectFrom('order_items').select('order_items.id').whereRef('order_items.order_id', '=', 'orders.id').where('order_items.cheese_id', '=', cheeseId)))
      .orderBy('id');
    return (isPostgres(trx) ? query.forUpdate() : query).execute().then((rows) => rows.map((r) => ({ id: Number(r.id), status: r.status })));
  }
}
