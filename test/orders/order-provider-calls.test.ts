import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Courier, PaymentGateway } from '../../src/modules/orders/order.adapters.js';
import { simulatedCourier } from '../../src/modules/orders/order.adapters.js';
import { OrderLifecycle } from '../../src/modules/orders/order.lifecycle.js';
import { OrderRepository } from '../../src/modules/orders/order.repository.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * Issue 20: the lifecycle worker calls the payment provider and the courier outside any
 * database transaction: it claims a step (a lease on the database's clock), calls, and records
 * the answer in another transaction. The providers here are slow stand-ins that hold each call
 * until the test lets it go; everything else is the real app on both dialects.
 */
let t: TestApp;
let staff: Record<string, string>;

/** Provider calls, each held until `release()` while `holding`. */
class HeldCalls {
  readonly calls: string[] = [];
  holding = true;
  #waiting: (() => void)[] = [];
  #started: (() => void)[] = [];

  async hold(name: string): Promise<void> {
    this.calls.push(name);
    for (const started of this.#started.splice(0)) started();
    if (this.holding) await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  started(): Promise<void> {
    return new Promise((resolve) => this.#started.push(resolve));
  }

  release(): void {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

let held: HeldCalls;
const payments: PaymentGateway = {
  authorize: async () => ({ reference: 'unused' }),
  capture: (reference) => held.hold(`capture ${reference}`),
  void: async (reference) => void held.calls.push(`void ${reference}`),
};
const courier: Courier = {
  dispatch: async (order, now) => {
    await held.hold(`dispatch ${order.orderId}`);
    return simulatedCourier.dispatch(order, now);
  },
};

/** A lifecycle worker as the app builds it, with the held providers; `shipS` -1 stops it after the capture. */
function worker(shipS = 0): OrderLifecycle {
  const { db } = t.database;
  return new OrderLifecycle({ db, orders: new OrderRepository(db, t.app.modules.identity.provides.directory), stock: t.app.modules.catalogue.provides.stock, outbox: t.app.modules.outbox.provides.outbox, payments, courier, delays: { captureS: 0, shipS, deliverS: -1 } });
}

beforeAll(async () => {
  // Placed orders are due for capture at once; nothing runs the app's own worker here.
  ({ t, auth: staff } = await createAdminTestApp({ config: { orderDelays: { captureS: 0, shipS: 0, deliverS: -1 } } }));
});
afterAll(() => t?.close());

const address = { line1: '1 Rue', city: 'Poligny', country: 'FR' };
async function placed(): Promise<{ id: number; me: Record<string, string>; reference: string }> {
  const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Held cheese ${Math.random()}`, pricePerKg: 10, stockQuantityKg: 10 } })).body;
  const me = bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
  const order = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address } } });
  expect(order.status).toBe(201);
  const row = await t.database.db.selectFrom('orders').select('payment_reference').where('id', '=', order.body.id).executeTakeFirstOrThrow();
  return { id: order.body.id, me, reference: row.payment_reference! };
}
/** Only this order is due: earlier tests' orders wait, so the worker takes this one. */
const onlyDue = (id: number) => t.database.db.updateTable('orders').set({ next_step_at: null }).where('id', '!=', id).execute();
const statusesOf = async (id: number) => (await t.database.db.selectFrom('order_status_changes').select('status').where('order_id', '=', id).orderBy('id').execute()).map((row) => row.status);

describe('provider calls outside transactions', () => {
  it('captures while the order stays writable, leases the step on the database clock, and records it once', async () => {
    held = new HeldCalls();
    const { id, me, reference } = await placed();
    await onlyDue(id);
    const started = held.started();
    const running = worker(-1).job(1000).run();
    await started;
    // The call is in flight: the order is neither locked nor behind an open transaction.
    const patched = await t.http.patch(`/v2/orders/${id}`, { headers: { ...me, 'content-type': 'application/merge-patch+json' }, json: { notes: 'leave it with the neighbour' } });
    expect(patched.status).toBe(200);
    // Its step is leased for a while on the database's clock: a second worker finds nothing due.
    const lease = await t.database.db.selectFrom('orders').select('next_step_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(new Date(lease.next_step_at!).getTime()).toBeGreaterThan(Date.now() + 5_000);
    expect(await worker(-1).job(1000).run()).toBe(0);
    held.release();
    expect(await running).toBe(1);
    expect(held.calls.filter((call) => call === `capture ${reference}`)).toHaveLength(1);
    const order = (await t.http.get(`/v2/orders/${id}`, { headers: me })).body;
    expect(order).toMatchObject({ status: 'approved', notes: 'leave it with the neighbour' });
    expect(await statusesOf(id)).toEqual(['placed', 'approved']);
  });

  it('books the courier outside the transaction too, and records the tracking number it gave', async () => {
    held = new HeldCalls();
    const { id, me } = await placed();
    expect((await t.http.post(`/v2/sandbox/orders/${id}/advance`, { headers: staff })).status).toBe(200);
    await onlyDue(id);
    const started = held.started();
    const running = worker().job(1000).run();
    await started;
    expect(held.calls).toEqual([`dispatch ${id}`]);
    // Staff can still read and write the order meanwhile.
    expect((await t.http.get(`/v2/orders/${id}`, { headers: staff })).body.status).toBe('approved');
    held.release();
    await running;
    const order = (await t.http.get(`/v2/orders/${id}`, { headers: me })).body;
    expect(order.status).toBe('shipped');
    expect(order.tracking).toMatchObject({ trackingNumber: expect.stringMatching(/^FRX-/) });
  });

  it('records nothing when the order was cancelled during the capture, and voids the payment', async () => {
    held = new HeldCalls();
    const { id, me, reference } = await placed();
    await onlyDue(id);
    const started = held.started();
    const running = worker().job(1000).run();
    await started;
    expect((await t.http.delete(`/v2/store/order/${id}`, { headers: me })).status).toBeLessThan(300);
    held.release();
    await running;
    expect(held.calls).toContain(`void ${reference}`);
    expect(await statusesOf(id)).toEqual(['placed', 'cancelled']);
    expect((await t.http.get(`/v2/orders/${id}`, { headers: me })).body.status).toBe('cancelled');
  });

  it('voids a cancelled order\'s payment after the cancellation committed, once', async () => {
    held = new HeldCalls();
    const { id, me, reference } = await placed();
    expect((await t.http.delete(`/v2/store/order/${id}`, { headers: me })).status).toBeLessThan(300);
    // The cancellation's own transaction called nothing.
    expect(held.calls).toEqual([]);
    await onlyDue(id);
    held.holding = false;
    expect(await worker().job(1000).run()).toBe(0); // a void is no status change
    expect(await worker().job(1000).run()).toBe(0);
    expect(held.calls.filter((call) => call === `void ${reference}`)).toHaveLength(1);
    const row = await t.database.db.selectFrom('orders').select('next_step_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.next_step_at).toBeNull();
  });
});
