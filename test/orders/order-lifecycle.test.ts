import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
let staff: Record<string, string>;
let seq = 0;
const HOUR = 3_600_000;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ config: { orderDelays: { captureS: 5, shipS: 60, deliverS: 300 } } }));
});
afterAll(() => t.close());

const address = { line1: '3 Cheddar Lane', city: 'Wells', country: 'GB' };
const customer = async () => bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
async function placed(me: Record<string, string>, kg = 1): Promise<{ id: number; cheeseId: number }> {
  const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Lifecycle cheese ${++seq}`, pricePerKg: 10, stockQuantityKg: 10 } })).body;
  const order = await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId: cheese.id, quantity_kg: kg }], shipping: { method: 'express_chilled', address } } });
  expect(order.status).toBe(201);
  return { id: order.body.id, cheeseId: cheese.id };
}
const order = async (id: number) => (await t.http.get(`/v2/orders/${id}`, { headers: staff })).body;
const stockOf = async (id: number) => (await t.http.get(`/v2/cheeses/${id}`, { headers: staff })).body.stockQuantityKg as number;
const orderEvents = async (id: number) =>
  (await t.database.db.selectFrom('outbox').select(['type', 'metadata', 'data']).where('aggregate_type', '=', 'order').where('aggregate_id', '=', String(id)).orderBy('id').execute()).map((row) => ({ type: row.type, sequence: JSON.parse(row.metadata).sequence as number, data: JSON.parse(row.data) }));
const patch = (id: number, headers: Record<string, string>, json: unknown, type = 'application/merge-patch+json') =>
  t.http.request('PATCH', `/v2/orders/${id}`, { headers: { ...headers, 'content-type': type }, body: JSON.stringify(json) });

describe('the lifecycle worker', () => {
  it('captures, ships and delivers when each step is due, each once, with its event in sequence', async () => {
    const me = await customer();
    const { id } = await placed(me);
    const now = Date.now();
    expect(await t.runJob('order-lifecycle', new Date(now + 1000))).toBe(0);
    expect((await t.http.get(`/v2/orders/${id}/tracking`, { headers: me })).status).toBe(409);
    expect(await t.runJob('order-lifecycle', new Date(now + 6000))).toBeGreaterThanOrEqual(1);
    expect(await order(id)).toMatchObject({ status: 'approved', shipDate: expect.any(String), tracking: null });
    await t.runJob('order-lifecycle', new Date(now + HOUR));
    const delivered = await order(id);
    expect(delivered).toMatchObject({ status: 'delivered', tracking: { carrier: expect.any(String), trackingNumber: expect.stringMatching(/^FRX-/) } });
    expect(await t.runJob('order-lifecycle', new Date(now + 2 * HOUR))).toBe(0);
    const events = await orderEvents(id);
    expect(events.map((e) => [e.type, e.sequence])).toEqual([['order.placed', 1], ['order.confirmed', 2], ['order.shipped', 3], ['order.delivered', 4]]);
    expect(events[2]!.data).toMatchObject({ order_id: String(id), tracking_number: delivered.tracking.trackingNumber, carrier: delivered.tracking.carrier, estimated_delivery: delivered.tracking.estimatedDelivery });
    const tracking = (await t.http.get(`/v2/orders/${id}/tracking`, { headers: me })).body;
    expect(tracking.timeline.map((s: { status: string }) => s.status)).toEqual(['placed', 'approved', 'shipped', 'delivered']);
  });
});

describe('cancelling', () => {
  it('placed or approved: cancelled, stock back, order.cancelled once; again: 204 and nothing new; shipped: 409', async () => {
    const me = await customer();
    const first = await placed(me, 2.5);
    expect(await stockOf(first.cheeseId)).toBe(7.5);
    expect((await t.http.delete(`/v2/store/order/${first.id}`, { headers: me })).status).toBe(204);
    expect((await t.http.delete(`/v2/store/order/${first.id}`, { headers: me })).status).toBe(204);
    expect(await stockOf(first.cheeseId)).toBe(10);
    expect((await orderEvents(first.id)).map((e) => e.type)).toEqual(['order.placed', 'order.cancelled']);

    const second = await placed(me);
    await patch(second.id, staff, { status: 'approved' });
    expect((await t.http.delete(`/v2/store/order/${second.id}`, { headers: me })).status).toBe(204);
    const third = await placed(me);
    await patch(third.id, staff, { status: 'approved' });
    await patch(third.id, staff, { status: 'shipped', carrier: 'La Poste', trackingNumber: 'LP-123456' });
    const refused = await t.http.delete(`/v2/store/order/${third.id}`, { headers: me });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('shipped');
    expect(await stockOf(third.cheeseId)).toBe(9);
  });
});

describe('PATCH /orders/{id}', () => {
  it('the owner changes notes and address while placed; staff drive the status; illegal moves are 409 naming the status', async () => {
    const me = await customer();
    const { id } = await placed(me);
    const changed = await patch(id, me, { notes: 'Back door', shippingAddress: { city: 'Glastonbury' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ notes: 'Back door', shippingAddress: { city: 'Glastonbury', street: '3 Cheddar Lane' } });
    expect((await patch(id, me, { status: 'cancelled' })).status).toBe(403);
    const skip = await patch(id, staff, { status: 'delivered' });
    expect(skip.status).toBe(409);
    expect(skip.body.message).toContain('placed');
    expect((await patch(id, staff, { status: 'approved' }, 'application/json')).body.status).toBe('approved');
    expect((await patch(id, me, { notes: 'too late' })).status).toBe(409);
    const shipped = await patch(id, staff, { status: 'shipped', carrier: 'Royal Mail', trackingNumber: 'RM-0042-GB' });
    expect(shipped.body.tracking).toMatchObject({ carrier: 'Royal Mail', trackingNumber: 'RM-0042-GB' });
    expect((await patch(id, staff, { carrier: 'DHL' })).status).toBe(422);
    expect((await t.http.request('PATCH', `/v2/orders/${id}`, { headers: { ...staff, 'content-type': 'text/plain' }, body: '{}' })).status).toBe(415);
    expect((await t.http.request('POST', '/v2/cheeses', { headers: { ...staff, 'content-type': 'application/merge-patch+json' }, body: '{"name":"x"}' })).status).toBe(415);
  });
});

describe('the sandbox advance', () => {
  it('moves an order on at once in development, and does not exist in production', async () => {
    const me = await customer();
    const { id } = await placed(me);
    for (const status of ['approved', 'shipped', 'delivered']) {
      const res = await t.http.post(`/v2/sandbox/orders/${id}/advance`, { headers: me });
      expect([res.status, res.body.status]).toEqual([200, status]);
    }
    expect((await t.http.post(`/v2/sandbox/orders/${id}/advance`, { headers: me })).status).toBe(409);
    const production = await createTestApp({ env: 'production' });
    try {
      expect((await production.http.post('/v2/sandbox/orders/1/advance', { headers: bearer(await production.key(['admin'])) })).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});

describe('deleting a cheese held by orders (decisions.md §4)', () => {
  it('cancels its placed and approved orders; a shipped one makes it 409 and nothing changes', async () => {
    const me = await customer();
    const open = await placed(me);
    const del = (id: number) => t.http.delete(`/v2/cheeses/${id}`, { headers: { ...staff, 'x-confirm-delete': 'true' } });
    expect((await del(open.cheeseId)).status).toBe(204);
    expect(await order(open.id)).toMatchObject({ status: 'cancelled', items: [expect.objectContaining({ cheeseId: null, cheeseName: expect.stringMatching(/^Lifecycle cheese/) })] });

    const shipped = await placed(me);
    await patch(shipped.id, staff, { status: 'approved' });
    await patch(shipped.id, staff, { status: 'shipped' });
    expect((await del(shipped.cheeseId)).status).toBe(409);
    expect((await order(shipped.id)).status).toBe('shipped');
    expect(await stockOf(shipped.cheeseId)).toBe(9);
  });
});
