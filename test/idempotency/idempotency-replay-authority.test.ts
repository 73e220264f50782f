import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * Issue 16 §2: a replayed request is authorized like a new one, a reply holding a secret is
 * never stored nor replayed, and stored replies go with the account whose data they hold.
 * §6: the fingerprint does not depend on JSON key order.
 */
let t: TestApp;
let admin: string;
let readOnly: string;
const PASSWORD = 'replay authority password';

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
  // A weaker key of the same staff account: the probe's replaying credential.
  readOnly = (await t.http.post('/v2/api-keys', { headers: bearer(admin), json: { scopes: ['read:cheeses'] } })).body.key;
});
afterAll(() => t.close());

const keyed = (credential: string, key: string) => ({ ...bearer(credential), 'idempotency-key': key });
async function storedReplies(): Promise<string> {
  const rows = await t.database.db.selectFrom('idempotency_keys').select(['response_body', 'response_headers']).execute();
  return JSON.stringify(rows);
}

describe('a replay is authorized like a new request', () => {
  it('another credential of the account never gets the first answer (POST /api-keys)', async () => {
    const first = await t.http.post('/v2/api-keys', { headers: keyed(admin, 'mint-admin-key'), json: { scopes: ['admin'] } });
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^sk_test_/);
    const replay = await t.http.post('/v2/api-keys', { headers: keyed(readOnly, 'mint-admin-key'), json: { scopes: ['admin'] } });
    expect(replay.status).toBe(409);
    expect(replay.body.type).toBe('conflict');
    expect(replay.text).not.toContain('sk_test_');
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
  });

  it('an order replayed by another credential of the customer is 409 with its Location; the same credential gets the replay', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: 'Replay tomme', pricePerKg: 20, stockQuantityKg: 10 } })).body;
    const customerKey = await t.key(['read:orders', 'write:orders'], 'customer');
    const body = { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } };
    const first = await t.http.post('/v2/orders', { headers: keyed(customerKey, 'order-by-key-1'), json: body });
    expect(first.status).toBe(201);
    const same = await t.http.post('/v2/orders', { headers: keyed(customerKey, 'order-by-key-1'), json: body });
    expect(same.status).toBe(201);
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    const otherKey = (await t.http.post('/v2/api-keys', { headers: bearer(customerKey), json: { scopes: ['read:orders', 'write:orders'] } })).body.key;
    const other = await t.http.post('/v2/orders', { headers: keyed(otherKey, 'order-by-key-1'), json: body });
    expect(other.status).toBe(409);
    expect(other.headers.get('location')).toBe(first.headers.get('location'));
    expect((await t.http.get('/v2/orders', { headers: bearer(customerKey) })).body.items).toHaveLength(1);
  });
});

describe('a reply holding a secret is never stored nor replayed', () => {
  it('POST /api-keys, POST /webhooks and POST /oauth-clients: the retry is 409 with Location, and no secret is in the database', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['/v2/api-keys', { scopes: ['read:cheeses'] }, /sk_test_/],
      ['/v2/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['cheese.*'] }, /whsec_/],
      ['/v2/oauth-clients', { name: 'Replay app', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses'] }, /clientSecret/],
    ];
    const owner = await t.key(['admin']);
    for (const [path, json, secret] of cases) {
      const first = await t.http.post(path, { headers: keyed(owner, `secret-${path}`), json });
      expect(first.status, path).toBe(201);
      expect(first.text, path).toMatch(secret);
      const retry = await t.http.post(path, { headers: keyed(owner, `secret-${path}`), json });
      expect(retry.status, path).toBe(409);
      expect(retry.text, path).not.toMatch(secret);
      expect(retry.body.message, path).toMatch(/shown once/);
      expect(retry.headers.get('location'), path).toBe(first.headers.get('location'));
    }
    const stored = await storedReplies();
    expect(stored).not.toMatch(/sk_(test|live)_|whsec_|clientSecret/);
  });

  it('a refused request is still replayed as refused (no secret in it)', async () => {
    const first = await t.http.post('/v2/api-keys', { headers: keyed(admin, 'refused-key'), json: { scopes: ['no:such'] } });
    expect(first.status).toBeGreaterThanOrEqual(400);
    const again = await t.http.post('/v2/api-keys', { headers: keyed(admin, 'refused-key'), json: { scopes: ['no:such'] } });
    expect(again.status).toBe(first.status);
  });
});

describe('stored replies go with the account whose data they hold', () => {
  it('deleting the account deletes its stored sign-up, address and order replies', async () => {
    const username = `erased.${Date.now()}`;
    const signUp = await t.http.post('/v2/customer', { headers: { 'idempotency-key': `signup-${username}` }, json: { username, email: `${username}@example.com`, password: PASSWORD, firstName: 'Erika' } });
    expect(signUp.status).toBe(201);
    const token = (await t.http.post('/v2/customer/login', { json: { username, password: PASSWORD } })).body.token;
    const address = await t.http.post(`/v2/customer/${username}/addresses`, { headers: keyed(token, 'address-1'), json: { line1: '7 Secret Lane', city: 'Annecy', country: 'FR' } });
    expect(address.status).toBe(201);
    const cheese = (await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: `Erased comté ${username}`, pricePerKg: 20, stockQuantityKg: 10 } })).body;
    const order = await t.http.post('/v2/orders', { headers: keyed(token, 'order-1'), json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], notes: 'Ring twice, Erika', shipping: { method: 'standard', address: { line1: '7 Secret Lane', city: 'Annecy', country: 'FR' } } } });
    expect(order.status).toBe(201);
    expect(await storedReplies()).toContain('Secret Lane');

    const deleted = await t.http.delete(`/v2/customer/${username}`, { headers: { ...bearer(token), 'x-confirm-delete': 'true' } });
    expect(deleted.status).toBe(204);
    const stored = await storedReplies();
    expect(stored).not.toContain('Secret Lane');
    expect(stored).not.toContain('Ring twice');
    expect(stored).not.toContain(username);
  });
});

describe('the fingerprint is of the request, not of its JSON spelling', () => {
  it('the same body with its keys reordered is a replay, not 422', async () => {
    const first = await t.http.post('/v2/cheeses', { headers: { ...keyed(admin, 'reordered-cheese'), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Reordered brie', pricePerKg: 21, stockQuantityKg: 4 }) });
    expect(first.status).toBe(201);
    const reordered = await t.http.post('/v2/cheeses', { headers: { ...keyed(admin, 'reordered-cheese'), 'content-type': 'application/json' }, body: JSON.stringify({ stockQuantityKg: 4, pricePerKg: 21, name: 'Reordered brie' }) });
    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect(reordered.body.id).toBe(first.body.id);
    const changed = await t.http.post('/v2/cheeses', { headers: { ...keyed(admin, 'reordered-cheese'), 'content-type': 'application/json' }, body: JSON.stringify({ stockQuantityKg: 5, pricePerKg: 21, name: 'Reordered brie' }) });
    expect(changed.status).toBe(422);
  });
});
