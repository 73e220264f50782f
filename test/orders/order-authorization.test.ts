import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_CONTEXT } from '../../src/kernel/change-context.js';
import type { PaymentGateway } from '../../src/modules/orders/order.adapters.js';
import { simulatedCourier } from '../../src/modules/orders/order.adapters.js';
import { OrderLifecycle } from '../../src/modules/orders/order.lifecycle.js';
import { OrderPlacement, type Placement } from '../../src/modules/orders/order.placement.js';
import { OrderRepository } from '../../src/modules/orders/order.repository.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * Issue 20: an order's payment is authorised before its transaction, never inside it, so a
 * slow provider holds no stock lock. The provider is a stand-in (the external edge); the
 * placement, repositories, stock and database are the app's own, on both dialects.
 */
let t: TestApp;
let staff: Record<string, string>;
let ownerId: number;

interface Call {
  kind: 'authorize' | 'void';
  reference: string;
  totalCents?: number;
}

/** A payment provider that records its calls; `beforeAnswer` runs inside an authorisation, before it answers. */
function provider(beforeAnswer: (call: number) => Promise<void> = async () => undefined): { payments: PaymentGateway; calls: Call[] } {
  const calls: Call[] = [];
  let n = 0;
  const payments: PaymentGateway = {
    authorize: async ({ totalCents }) => {
      const reference = `pay_test_${++n}`;
      await beforeAnswer(n);
      calls.push({ kind: 'authorize', reference, totalCents });
      return { reference };
    },
    capture: async () => undefined,
    void: async (reference) => void calls.push({ kind: 'void', reference }),
  };
  return { payments, calls };
}

function placementWith(payments: PaymentGateway): OrderPlacement {
  const { db } = t.database;
  const { stock, cheeses } = t.app.modules.catalogue.provides;
  const orders = new OrderRepository(db, t.app.modules.identity.provides.directory);
  const lifecycle = new OrderLifecycle({ db, orders, stock, outbox: t.app.modules.outbox.provides.outbox, payments, courier: simulatedCourier, delays: { captureS: -1, shipS: -1, deliverS: -1 } });
  return new OrderPlacement({ orders, lifecycle, stock, cheeses, payments });
}

const order = (cheeseId: number, grams: number): Placement => ({
  lines: [{ cheese: cheeseId, grams, field: 'items.0', quantityField: 'items.0.quantity_kg' }],
  address: { street: '1 Rue du Fromage', city: 'Poligny', state: null, zip: null, country: 'FR' },
  countryField: 'shipping.address.country',
  method: 'standard',
  notes: null,
});

/** Places as the order service does: authorised first, then one transaction. */
function place(placement: OrderPlacement, request: Placement) {
  const { db } = t.database;
  const owner = { accountId: ownerId, actor: 'customer' as const };
  return placement.authorised(db, request, owner, (authorization) => db.transaction().execute((trx) => placement.placeIn(trx, request, owner, SYSTEM_CONTEXT, authorization)));
}

async function newCheese(pricePerKg: number, stockKg: number): Promise<number> {
  const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Authorised cheese ${Math.random()}`, pricePerKg, stockQuantityKg: stockKg } });
  expect(created.status).toBe(201);
  return created.body.id as number;
}

/** Another admin's edit of the price, through the API (PUT the cheese as read, a new price). */
async function reprice(cheeseId: number, pricePerKg: number): Promise<void> {
  const { body } = await t.http.get(`/v2/cheeses/${cheeseId}`, { headers: staff });
  const replaced = await t.http.put('/v2/cheeses', { headers: staff, json: { ...body, pricePerKg } });
  expect(replaced.status, replaced.text).toBe(200);
}

const ordersOf = (cheeseId: number) => t.database.db.selectFrom('order_items').innerJoin('orders', 'orders.id', 'order_items.order_id').select(['orders.id', 'orders.total_cents', 'orders.payment_reference']).where('order_items.cheese_id', '=', cheeseId).execute();

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
  ownerId = Number((await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow()).id);
});
afterAll(() => t?.close());

describe('payment authorisation outside the order transaction', () => {
  it('another order of the same cheese is placed while an authorisation is held', async () => {
    const cheeseId = await newCheese(10, 10);
    let release!: () => void;
    let started!: () => void;
    const authorising = new Promise<void>((resolve) => (started = resolve));
    const { payments, calls } = provider(async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
    });
    const held = place(placementWith(payments), order(cheeseId, 1000));
    await authorising;
    // Were the authorisation inside a transaction holding the cheese's row (PostgreSQL) or the
    // database (SQLite), this order would wait for it.
    const me = bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
    const other = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId, quantity_kg: 2 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } } });
    expect(other.status).toBe(201);
    release();
    const placed = await held;
    expect(placed.order.payment_reference).toBe('pay_test_1');
    expect(calls).toEqual([{ kind: 'authorize', reference: 'pay_test_1', totalCents: 1000 + placed.order.shipping_fee_cents }]);
    const stock = await t.http.get(`/v2/cheeses/${cheeseId}`, { headers: staff });
    expect(stock.body.stockQuantityKg).toBe(7);
  });

  it('a price changed between the quote and the lock: the first authorisation is voided, the new total authorised and charged', async () => {
    const cheeseId = await newCheese(10, 10);
    // The price changes while the first authorisation is in flight (another admin's edit).
    const { payments, calls } = provider(async (n) => {
      if (n === 1) await reprice(cheeseId, 12);
    });
    const placed = await place(placementWith(payments), order(cheeseId, 1000));
    const fee = placed.order.shipping_fee_cents;
    expect(calls).toEqual([
      { kind: 'authorize', reference: 'pay_test_1', totalCents: 1000 + fee },
      { kind: 'void', reference: 'pay_test_1' },
      { kind: 'authorize', reference: 'pay_test_2', totalCents: 1200 + fee },
    ]);
    const [row] = await ordersOf(cheeseId);
    expect(row).toMatchObject({ total_cents: 1200 + fee, payment_reference: 'pay_test_2' });
  });

  it('prices that change during every one of 3 authorisations: 409, each authorisation voided, no order, stock untouched', async () => {
    const cheeseId = await newCheese(10, 10);
    // Another admin edits the price while each authorisation is in flight: the locked total never matches.
    const { payments, calls } = provider(async (n) => {
      await reprice(cheeseId, 10 + n);
    });
    await expect(place(placementWith(payments), order(cheeseId, 1000))).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/Prices changed while the order was being placed/) });
    expect(calls.map((call) => call.kind)).toEqual(['authorize', 'void', 'authorize', 'void', 'authorize', 'void']);
    // Each round authorised the total it had quoted: the price the previous round found under lock.
    expect(calls.filter((call) => call.kind === 'authorize').map((call) => call.totalCents! - calls[0]!.totalCents!)).toEqual([0, 100, 200]);
    expect(calls.filter((call) => call.kind === 'void').map((call) => call.reference)).toEqual(['pay_test_1', 'pay_test_2', 'pay_test_3']);
    expect(await ordersOf(cheeseId)).toEqual([]);
    const stock = await t.http.get(`/v2/cheeses/${cheeseId}`, { headers: staff });
    expect(stock.body.stockQuantityKg).toBe(10);
  });

  it('an order refused after its authorisation (not enough stock) voids it and writes nothing', async () => {
    const cheeseId = await newCheese(10, 1);
    const { payments, calls } = provider();
    await expect(place(placementWith(payments), order(cheeseId, 2000))).rejects.toMatchObject({ status: 409 });
    expect(calls.map((call) => call.kind)).toEqual(['authorize', 'void']);
    expect(calls[1]!.reference).toBe(calls[0]!.reference);
    expect(await ordersOf(cheeseId)).toEqual([]);
  });

  it('an unknown cheese is refused before any authorisation', async () => {
    const { payments, calls } = provider();
    await expect(place(placementWith(payments), order(987_654_321, 1000))).rejects.toMatchObject({ status: 422 });
    expect(calls).toEqual([]);
  });
});
