import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer, type HttpResponse } from '../helpers/http.js';
import { EVENT_TYPES, type EventType } from '../../src/modules/outbox/outbox.writer.js';
import { EVENT_DATA_SCHEMAS, Metadata } from '../../src/modules/outbox/event-data.schema.js';
import { ENVIRONMENTS } from '../../src/kernel/environment.js';
import { CUSTOMER_TIERS } from '../../src/modules/customers/customer.table.js';
import { SHIPPING_METHODS, ORDER_STATUSES } from '../../src/modules/orders/order.table.js';
import { EVENT_OF_STATUS } from '../../src/modules/orders/order.rules.js';

/**
 * docs/events.md promises each event's `data` (src/modules/outbox/event-data.schema.ts): real
 * operations over HTTP (and the background jobs, run by hand) record every kind but
 * `webhook.test`, and every outbox row must match its kind's schema exactly.
 */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const PASSWORD = 'a long enough secret 4 tests';
const DAY = 86_400_000;
const address = { line1: '12 rue des Fromagers', city: 'Lyon', postalCode: '69002', country: 'FR' };
const expectStatus = <T>(res: HttpResponse<T>, status: number): T => {
  expect(res.status, `${res.status} ${res.text}`).toBe(status);
  return res.body;
};
const newCheese = async (json: Record<string, unknown>) => expectStatus(await t.http.post('/v2/cheeses', { headers: staff, json }), 201) as { id: number; name: string };
const stockOf = async (id: number) => (await t.http.get(`/v2/cheeses/${id}`, { headers: staff })).body.stockQuantityKg as number;
async function signedUp(username: string) {
  expectStatus(await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password: PASSWORD, firstName: 'Marie', lastName: 'Dupont' } }), 201);
  const login = expectStatus(await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } }), 200);
  return bearer(login.token);
}
const placeB = async (me: Record<string, string>, cheeseId: number, kg: number, method = 'express_chilled') =>
  expectStatus(await t.http.post('/v2/orders', { headers: me, json: { items: [{ cheeseId, quantity_kg: kg }], shipping: { method, address } } }), 201).id as number;
const patchOrder = async (id: number, json: unknown) =>
  expectStatus(await t.http.request('PATCH', `/v2/orders/${id}`, { headers: { ...staff, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(json) }), 200);
const advance = async (me: Record<string, string>, id: number) => expectStatus(await t.http.post(`/v2/sandbox/orders/${id}/advance`, { headers: me }), 200);

const outbox = async () =>
  (await t.database.db.selectFrom('outbox').select(['id', 'type', 'aggregate_type', 'data', 'metadata']).orderBy('id').execute()).map((row) => ({
    ...row,
    data: JSON.parse(row.data) as Record<string, unknown>,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  }));

describe('event payloads match docs/events.md', () => {
  it('every schema\'s examples match it, and its enums are the code\'s', () => {
    for (const type of EVENT_TYPES) {
      const schema = EVENT_DATA_SCHEMAS[type] as { examples?: unknown[] };
      expect(schema.examples?.length, type).toBeGreaterThan(0);
      for (const example of schema.examples!) expect([type, [...Value.Errors(EVENT_DATA_SCHEMAS[type], example)]]).toEqual([type, []]);
    }
    for (const example of (Metadata as { examples?: unknown[] }).examples!) expect([...Value.Errors(Metadata, example)]).toEqual([]);
    const property = (type: EventType, name: string) => (EVENT_DATA_SCHEMAS[type] as unknown as { properties: Record<string, { enum?: unknown[]; const?: unknown }> }).properties[name]!;
    expect(Metadata.properties.environment.enum).toEqual([...ENVIRONMENTS]);
    expect(property('customer.updated', 'customer_status').enum).toEqual([...CUSTOMER_TIERS]);
    expect(property('order.placed', 'shipping_method').enum).toEqual([...SHIPPING_METHODS]);
    expect(property('customer.subscription_changed', 'shipping_method').enum).toEqual([...SHIPPING_METHODS]);
    for (const status of ORDER_STATUSES) expect(property(EVENT_OF_STATUS[status], 'status').const).toBe(status);
  });

  it('real operations record every kind but webhook.test, each row matching its schema', async () => {
    // The catalogue: new arrivals (one without a price), a bulk create and update, a restock by PUT.
    const comte = await newCheese({ name: 'Payload Comté', milk: 'cow', pricePerKg: 20, stockQuantityKg: 20 });
    const brie = await newCheese({ name: 'Payload Brie', pricePerKg: 15, stockQuantityKg: 30 });
    const reblochon = await newCheese({ name: 'Payload Reblochon', pricePerKg: 25, stockQuantityKg: 10 });
    await newCheese({ name: 'Payload Unpriced', stockQuantityKg: 2 });
    const bulk = expectStatus(await t.http.post('/v2/cheeses/bulk', { headers: staff, json: { operations: [{ op: 'create', cheese: { name: 'Payload Bulk', pricePerKg: 30, stockQuantityKg: 6 } }] } }), 200);
    expect(bulk.results[0], JSON.stringify(bulk)).toMatchObject({ status: 201, cheese: { id: expect.any(Number) } });
    const bulkId = bulk.results[0].cheese.id as number;
    const emptied = expectStatus(await t.http.post('/v2/cheeses/bulk', { headers: staff, json: { operations: [{ op: 'update', id: bulkId, cheese: { stockQuantityKg: 0 } }] } }), 200);
    expect(emptied.results[0], JSON.stringify(emptied)).toMatchObject({ status: 200 });
    expectStatus(await t.http.put('/v2/cheeses', { headers: staff, json: { id: bulkId, name: 'Payload Bulk', status: 'available', pricePerKg: 30, stockQuantityKg: 8 } }), 200);

    // A customer: sign-up, profile, address, preferences, a subscription whose first month the worker places.
    const marie = await signedUp('payload.marie');
    expectStatus(await t.http.put('/v2/customer/payload.marie', { headers: marie, json: { username: 'payload.marie', email: 'payload.marie@example.com', password: PASSWORD, firstName: 'Marie', lastName: 'Dupont', phone: '+33 4 78 00 00 00' } }), 200);
    expectStatus(await t.http.post('/v2/customer/payload.marie/addresses', { headers: marie, json: { label: 'Home', ...address } }), 201);
    expectStatus(await t.http.put('/v2/customer/payload.marie/preferences', { headers: marie, json: { favouriteMilks: ['cow'] } }), 200);
    const subscription = { quantity_kg: 0.5, shipping: { method: 'temperature_controlled', address }, dayOfMonth: 5 };
    expectStatus(await t.http.put('/v2/customer/payload.marie/subscription', { headers: marie, json: subscription }), 201);
    const { nextOrderAt } = expectStatus(await t.http.put('/v2/customer/payload.marie/subscription', { headers: marie, json: { ...subscription, quantity_kg: 1 } }), 200);
    expect(await t.runJob('subscription-orders', new Date(Date.parse(nextOrderAt) + 60_000))).toBeGreaterThanOrEqual(1);
    expectStatus(await t.http.delete('/v2/customer/payload.marie/subscription', { headers: marie }), 204);

    // Orders: below the low-stock threshold, delivered through the sandbox advance (Marie turns silver).
    const big = await placeB(marie, comte.id, (await stockOf(comte.id)) - 4);
    for (let step = 0; step < 3; step++) await advance(marie, big);
    // The rest of the Comté sells it out; cancelling gives it back.
    const rest = await placeB(marie, comte.id, await stockOf(comte.id), 'standard');
    expect(await stockOf(comte.id)).toBe(0);
    expectStatus(await t.http.delete(`/v2/store/order/${rest}`, { headers: marie }), 204);
    // Form A, moved on by staff, shipped by hand with a carrier and a tracking number.
    const formA = expectStatus(await t.http.post('/v2/store/order', { headers: marie, json: { items: [{ cheeseId: brie.id, quantity: 2 }], shippingAddress: { street: '1 Main St', city: 'Springfield', state: 'IL', zipCode: '62701', country: 'us' } } }), 201).id as number;
    await patchOrder(formA, { status: 'approved' });
    await patchOrder(formA, { status: 'shipped', carrier: 'La Poste', trackingNumber: 'LP-123456789' });
    await patchOrder(formA, { status: 'delivered' });
    // Deleting a cheese cancels the open order holding it.
    const held = await placeB(marie, reblochon.id, 1);
    expectStatus(await t.http.delete(`/v2/cheeses/${reblochon.id}`, { headers: { ...staff, 'x-confirm-delete': 'true' } }), 204);

    // A customer who closes their account: the open order is cancelled, the shipped one delivered anonymised.
    const paul = await signedUp('payload.paul');
    const shipped = await placeB(paul, brie.id, 1);
    await patchOrder(shipped, { status: 'approved' });
    await patchOrder(shipped, { status: 'shipped' });
    const open = await placeB(paul, brie.id, 1.5);
    expectStatus(await t.http.delete('/v2/customer/payload.paul', { headers: paul }), 204);
    await patchOrder(shipped, { status: 'delivered' });

    // The hourly jobs: a season opening on an empty shelf, API keys entering their last 7 days.
    await newCheese({ name: 'Payload Vacherin', seasonal: true, availableMonths: [9, 10, 11, 12, 1, 2, 3, 4], stockQuantityKg: 0 });
    expect(await t.runJob('cheese.season_opened', new Date('2026-09-01T00:00:00Z'))).toBe(1);
    const soon = new Date(Date.now() + 3 * DAY).toISOString();
    expectStatus(await t.http.post('/v2/api-keys', { headers: staff, json: { name: 'storefront', scopes: ['read:cheeses'], expiresAt: soon } }), 201);
    expectStatus(await t.http.post('/v2/api-keys', { headers: staff, json: { scopes: ['read:cheeses'], expiresAt: soon } }), 201);
    expect(await t.runJob('api_key.expiring')).toBe(2);

    const rows = await outbox();
    const problems = rows.flatMap((row) => {
      const schema = EVENT_DATA_SCHEMAS[row.type as EventType];
      if (!schema) return [`${row.id} ${row.type}: not an event type`];
      const errors = [...Value.Errors(schema, row.data), ...Value.Errors(Metadata, row.metadata)];
      const isOrder = row.type.startsWith('order.');
      const ordered = isOrder === (typeof row.metadata.sequence === 'number' && row.metadata.order_id === row.data.order_id);
      return [...errors.map((e) => `${row.id} ${row.type} ${e.instancePath || '/'} ${e.message}: ${JSON.stringify(row.data)}`), ...(ordered ? [] : [`${row.id} ${row.type}: metadata.sequence/order_id ${JSON.stringify(row.metadata)}`])];
    });
    expect(problems).toEqual([]);

    const seen = new Set(rows.map((row) => row.type));
    expect(EVENT_TYPES.filter((type) => type !== 'webhook.test' && !seen.has(type))).toEqual([]);
    // Each shape and each nullable field was met at least once.
    const of = (type: EventType) => rows.filter((row) => row.type === type).map((row) => row.data);
    expect(of('cheese.back_in_stock').map((data) => data.reason ?? 'restock').sort()).toEqual(['restock', 'restock', 'season_opened']);
    expect(of('cheese.back_in_stock').find((data) => data.reason)).toMatchObject({ in_stock: false });
    expect(of('cheese.new_arrival').some((data) => data.price_per_kg === null)).toBe(true);
    expect(of('customer.updated').map((data) => data.changed)).toEqual(expect.arrayContaining([['phone'], ['addresses'], ['preferences'], ['customerStatus']]));
    expect(of('customer.subscription_changed').map((data) => data.action)).toEqual(['started', 'changed', 'cancelled']);
    expect(of('order.delivered').map((data) => data.customer)).toEqual(['payload.marie', 'payload.marie', null]);
    expect(of('order.shipped').map((data) => data.carrier)).toContain('La Poste');
    expect(of('order.cancelled').map((data) => data.order_id)).toEqual([String(rest), String(held), String(open)]);
    expect(of('api_key.expiring').map((data) => data.name).sort()).toEqual([null, 'storefront'].sort());
    const requestIds = rows.filter((row) => row.type === 'order.placed').map((row) => row.metadata.request_id);
    expect(requestIds.filter((id) => id === null)).toHaveLength(1); // the subscription's month, placed by the worker
  });
});
