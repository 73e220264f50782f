import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

// Services report the id of what they create; each route says where it is read. A retry after
// a crash is answered from the path noted here, so it must be the Location the route answers.
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const keyed = (headers: Record<string, string>, key: string) => ({ ...headers, 'idempotency-key': key });
const noted = async (key: string) =>
  (await t.database.db.selectFrom('idempotency_keys').select(['created_resource', 'account_id']).where('idempotency_key', '=', key).executeTakeFirstOrThrow());

describe('what a creating request notes with its Idempotency-Key', () => {
  it('is the Location it answers, for every creating route', async () => {
    const cheese = await t.http.post('/v2/cheeses', { headers: keyed(staff, 'paths-cheese'), json: { name: 'Noted tomme', pricePerKg: 18, stockQuantityKg: 10 } });
    expect(cheese.status).toBe(201);
    expect(cheese.headers.get('location')).toBe(`/v2/cheeses/${cheese.body.id}`);
    expect((await noted('paths-cheese')).created_resource).toBe(cheese.headers.get('location'));

    const username = `noted.${Date.now()}`;
    const password = 'a long enough secret for paths';
    const signUp = await t.http.post('/v2/customer', { headers: { 'idempotency-key': 'paths-signup' }, json: { username, email: `${username}@example.com`, password } });
    expect(signUp.status).toBe(201);
    const signedUp = await noted('paths-signup');
    expect(signedUp.created_resource).toBe(`/v2/customer/${username}`);
    expect(signedUp.created_resource).toBe(signUp.headers.get('location'));
    // The sign-up's answer holds the new customer's data: it is theirs.
    expect(Number(signedUp.account_id)).toBe(signUp.body.id);

    const login = bearer((await t.http.post('/v2/customer/login', { json: { username, password } })).body.token);
    const address = await t.http.post(`/v2/customer/${username}/addresses`, { headers: keyed(login, 'paths-address'), json: { line1: '3 Noted Row', city: 'Dijon', country: 'FR' } });
    expect(address.status).toBe(201);
    expect(address.headers.get('location')).toBe(`/v2/customer/${username}/addresses/${address.body.id}`);
    expect((await noted('paths-address')).created_resource).toBe(address.headers.get('location'));

    const buyer = bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
    const formB = await t.http.post('/v2/orders', { headers: keyed(buyer, 'paths-order-b'), json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
    expect(formB.status).toBe(201);
    expect(formB.headers.get('location')).toBe(`/v2/orders/${formB.body.id}`);
    expect((await noted('paths-order-b')).created_resource).toBe(formB.headers.get('location'));

    const formA = await t.http.post('/v2/store/order', { headers: keyed(buyer, 'paths-order-a'), json: { items: [{ cheeseId: cheese.body.id, quantity: 1 }], shippingAddress: { street: '1 Main St', city: 'Springfield', country: 'us' } } });
    expect(formA.status).toBe(201);
    expect(formA.headers.get('location')).toBe(`/v2/orders/${formA.body.id}`);
    expect((await noted('paths-order-a')).created_resource).toBe(formA.headers.get('location'));
  });
});
