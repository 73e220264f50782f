import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
beforeAll(async () => {
  ({ t } = await createAdminTestApp({ seed: true }));
}, 60_000);
afterAll(() => t.close());

const PASSWORD = 'a long enough secret 4 tests';
let seq = 0;
async function customer(preferences: Record<string, unknown>) {
  const username = `subscriber.${++seq}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `subscriber${seq}@example.com`, password: PASSWORD } })).status).toBe(201);
  const token = bearer((await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token);
  expect((await t.http.put(`/v2/customer/${username}/preferences`, { headers: token, json: preferences })).status).toBe(200);
  return { username, token };
}
const subscription = { quantity_kg: 0.5, shipping: { method: 'temperature_controlled', address: { line1: '5 Cheese Row', city: 'Annecy', country: 'fr' } }, dayOfMonth: 5 };
const changes = async (accountId: number) =>
  (await t.database.db.selectFrom('outbox').select('data').where('type', '=', 'customer.subscription_changed').where('aggregate_id', '=', String(accountId)).orderBy('id').execute()).map((row) => JSON.parse(row.data).action);

describe('the cheese-of-the-month subscription', () => {
  it('starts, changes and cancels, with customer.subscription_changed each time; a customer reaches only their own', async () => {
    const { username, token } = await customer({});
    const started = await t.http.put(`/v2/customer/${username}/subscription`, { headers: token, json: subscription });
    expect(started.status).toBe(201);
    const next = new Date(started.body.nextOrderAt);
    expect([next.getUTCDate(), next.getUTCHours()]).toEqual([5, 9]);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(started.body).toMatchObject({ plan: 'cheese_of_the_month', status: 'active', quantityKg: 0.5, shipping: { method: 'temperature_controlled', address: { country: 'FR' } }, lastOrderId: null });
    const changed = await t.http.put(`/v2/customer/${username}/subscription`, { headers: token, json: { ...subscription, quantity_kg: 1 } });
    expect([changed.status, changed.body.quantityKg]).toEqual([200, 1]);
    expect((await t.http.put(`/v2/customer/${username}/subscription`, { headers: token, json: { ...subscription, quantity_kg: 0.33 } })).status).toBe(422);
    const stranger = await customer({});
    expect((await t.http.get(`/v2/customer/${username}/subscription`, { headers: stranger.token })).status).toBe(403);
    expect((await t.http.delete(`/v2/customer/${username}/subscription`, { headers: token })).status).toBe(204);
    expect((await t.http.delete(`/v2/customer/${username}/subscription`, { headers: token })).status).toBe(404);
    expect((await t.http.get(`/v2/customer/${username}/subscription`, { headers: token })).body).toMatchObject({ status: 'cancelled', nextOrderAt: null });
    const accountId = (await t.http.get(`/v2/customer/${username}`, { headers: token })).body.id;
    expect(await changes(accountId)).toEqual(['started', 'changed', 'cancelled']);
  });

  it('places one real order when the month is due (never an allergen), once, and schedules the next month', async () => {
    const { username, token } = await customer({ milkAllergies: ['cow'], favouriteMilks: ['sheep'] });
    const { nextOrderAt } = (await t.http.put(`/v2/customer/${username}/subscription`, { headers: token, json: subscription })).body;
    const due = new Date(Date.parse(nextOrderAt) + 60_000);
    await t.runJob('subscription-orders', due);
    await t.runJob('subscription-orders', due);
    const orders = (await t.http.get('/v2/orders', { headers: token })).body.items;
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ status: 'placed', notes: expect.stringMatching(/^Cheese of the month: /), shipping: { method: 'temperature_controlled' }, items: [expect.objectContaining({ quantityKg: 0.5 })] });
    const milk = (await t.database.db.selectFrom('cheeses').select('milk').where('id', '=', orders[0].items[0].cheeseId).executeTakeFirstOrThrow()).milk;
    expect(milk).not.toBe('cow');
    const after = (await t.http.get(`/v2/customer/${username}/subscription`, { headers: token })).body;
    expect(after.lastOrderId).toBe(orders[0].id);
    expect(new Date(after.nextOrderAt).getUTCMonth()).toBe((new Date(nextOrderAt).getUTCMonth() + 1) % 12);
  });

  it('places nothing when no cheese suits, says why, and tries again the next day', async () => {
    const { username, token } = await customer({ milkAllergies: ['cow', 'goat', 'sheep', 'buffalo', 'mixed'] });
    const { nextOrderAt } = (await t.http.put(`/v2/customer/${username}/subscription`, { headers: token, json: subscription })).body;
    const due = new Date(Date.parse(nextOrderAt) + 60_000);
    await t.runJob('subscription-orders', due);
    expect((await t.http.get('/v2/orders', { headers: token })).body.items).toEqual([]);
    const after = (await t.http.get(`/v2/customer/${username}/subscription`, { headers: token })).body;
    expect(after.lastProblem).toMatch(/suits/);
    expect(Date.parse(after.nextOrderAt)).toBe(due.getTime() + 86_400_000);
  });
});
