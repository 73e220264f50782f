import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/kernel/clock.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { apiKey } from '../helpers/http.js';

/**
 * Every row a repository stamps (created_at, updated_at) takes the app's clock (issue 29 §1):
 * with a clock set a year ahead, what the API answers carries that time, not the machine's.
 */
const clock = new ManualClock('2031-03-14T15:09:26.000Z');
let t: TestApp;
let staff: Record<string, string>;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ config: { clock } }));
});
afterAll(() => t.close());

describe("rows are stamped on the app's clock", () => {
  it('cheeses, customers, addresses, webhooks, OAuth clients, API keys', async () => {
    const at = clock.iso();
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Clockwork Cantal', pricePerKg: 20, stockQuantityKg: 10 } });
    expect(cheese.status).toBe(201);
    expect(cheese.body).toMatchObject({ createdAt: at, updatedAt: at });
    clock.advance(60_000);
    const later = clock.iso();
    const updated = await t.http.put('/v2/cheeses', { headers: staff, json: { ...cheese.body, pricePerKg: 21 } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ createdAt: at, updatedAt: later });

    const customer = await t.http.post('/v2/customer', { json: { username: 'clock.keeper', email: 'clock@example.com', password: 'correct horse battery staple 42' } });
    expect(customer.status, customer.text).toBe(201);
    expect(customer.body.createdAt).toBe(later);

    const key = await t.http.post('/v2/api-keys', { headers: staff, json: { name: 'clocked', scopes: ['read:cheeses'] } });
    expect(key.body.createdAt).toBe(later);
    const hook = await t.http.post('/v2/webhooks', { headers: staff, json: { url: 'http://127.0.0.1:9/hook', events: ['order.placed'] } });
    expect(hook.body.createdAt).toBe(later);
    const client = await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Clock app', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'], redirectUris: [] } });
    expect(client.status, client.text).toBe(201);
    expect(client.body.createdAt).toBe(later);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key.body.key) })).status).toBe(200);
  });
});
