import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Fromagerie, FromagerieConnectionError, FromagerieError } from '../../packages/sdk/src/index.js';
import { backoffMs, parseRetryAfter } from '../../packages/sdk/src/transport.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { EdgeProxy } from './edge-proxy.js';

let t: TestApp;
let staff: Record<string, string>;
let edge: EdgeProxy;
let customerKey: string;
let cheeseSlug: string;
const address = { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' };

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ seed: true }));
  edge = await new EdgeProxy(t.http.baseUrl).start();
  customerKey = await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer');
  const made = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'SDK test tomme', pricePerKg: 20, stockQuantityKg: 500, status: 'available' } });
  expect(made.status).toBe(201);
  cheeseSlug = made.body.slug;
});
afterAll(async () => {
  await edge.close();
  await t.close();
});
beforeEach(() => edge.reset());

const client = (options: Partial<ConstructorParameters<typeof Fromagerie>[0]> = {}) => new Fromagerie({ apiKey: customerKey, baseUrl: edge.url, ...options } as ConstructorParameters<typeof Fromagerie>[0]);
const orderBody = () => ({ items: [{ cheeseId: cheeseSlug, quantity_kg: 0.5 }], shipping: { method: 'standard' as const, address } });
/** The FromagerieError a call fails with (the test fails if it succeeds). */
const failure = (pending: Promise<unknown>): Promise<FromagerieError> =>
  pending.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => (error instanceof FromagerieError ? error : expect.fail(`not a FromagerieError: ${String(error)}`)),
  );
const ordersInDatabase = async () => Number((await t.database.db.selectFrom('orders').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('credentials', () => {
  it('sends exactly one credential header, Authorization: Bearer, on every request', async () => {
    const sdk = client();
    await sdk.cheeses.list({ limit: 2 });
    await sdk.cheeses.get(cheeseSlug);
    await sdk.orders.create(orderBody());
    await expect(sdk.cheeses.get('no-such-cheese')).rejects.toBeInstanceOf(FromagerieError);
    expect(edge.seen).toHaveLength(4);
    for (const request of edge.seen) {
      const credentials = request.names.filter((name) => name === 'authorization' || name === 'x-api-key' || name === 'cookie');
      expect(credentials).toEqual(['authorization']);
      expect(request.headers.authorization).toBe(`Bearer ${customerKey}`);
    }
  });

  it('an access token goes in the same one header; both, or neither, is refused before any request', async () => {
    const sdk = new Fromagerie({ accessToken: 'oat_not-a-real-token', baseUrl: edge.url });
    const error = await sdk.cheeses.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FromagerieError);
    expect(error).toMatchObject({ status: 401, type: 'unauthorized' });
    expect(edge.seen.map((r) => r.names.filter((n) => n === 'authorization' || n === 'x-api-key'))).toEqual([['authorization']]);
    expect(edge.seen[0]!.headers.authorization).toBe('Bearer oat_not-a-real-token');
    expect(() => new Fromagerie({ apiKey: 'sk_a', accessToken: 'oat_b', baseUrl: edge.url } as never)).toThrow(/exactly one/);
    expect(() => new Fromagerie({ baseUrl: edge.url } as never)).toThrow(/exactly one/);
    expect(edge.seen).toHaveLength(1);
  });
});

describe('errors', () => {
  it('FromagerieError carries status, the typed type, the message, the request id and the field errors', async () => {
    const sdk = client();
    const missing = await failure(sdk.cheeses.get('no-such-cheese'));
    expect(missing).toMatchObject({ status: 404, type: 'not_found', errors: [] });
    expect(missing.message).toMatch(/not found/i);
    expect(missing.requestId).toMatch(/\S+/);
    const invalid = await failure(sdk.orders.create({ items: [{ cheeseId: cheeseSlug, quantity_kg: 0.33 }], shipping: { method: 'standard', address } }));
    expect(invalid).toMatchObject({ status: 422, type: 'validation_failed' });
    expect(invalid.errors.map((e) => e.field)).toContain('items.0.quantity_kg');
  });
});

describe('retries', () => {
  it('a creating POST whose answers are lost or refused is retried with one Idempotency-Key and makes exactly one order', async () => {
    const before = await ordersInDatabase();
    // First attempt: the order is made but the answer never arrives; second: the edge answers 503; third: through.
    edge.fault = (n) => (n === 1 ? 'drop-answer' : n === 2 ? { status: 503, headers: { 'retry-after': '0' } } : 'forward');
    const order = await client().orders.create(orderBody());
    expect(order).toMatchObject({ status: 'placed', items: [expect.objectContaining({ cheeseSlug, quantityKg: 0.5 })] });
    expect(edge.seen).toHaveLength(3);
    const keys = edge.seen.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(await ordersInDatabase()).toBe(before + 1);
    // The next call is a new request with a new key.
    await client().orders.create(orderBody());
    expect(edge.seen[3]!.headers['idempotency-key']).not.toBe(keys[0]);
    expect(await ordersInDatabase()).toBe(before + 2);
  });

  it('reads are retried on 429 and 5xx, up to maxRetries, then the last answer is thrown', async () => {
    edge.fault = () => ({ status: 503, headers: { 'retry-after': '0' } });
    const error = await client({ maxRetries: 3 }).cheeses.list().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, type: 'service_unavailable' });
    expect(edge.seen).toHaveLength(4);
    edge.reset();
    edge.fault = (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '0' } } : 'forward');
    expect((await client().cheeses.list({ limit: 1 })).items).toHaveLength(1);
    expect(edge.seen).toHaveLength(2);
  });

  it('never retries a 4xx other than 408 and 429, nor a POST that takes no Idempotency-Key', async () => {
    await expect(client().orders.create({ items: [], shipping: { method: 'standard', address } })).rejects.toMatchObject({ status: 422 });
    expect(edge.seen).toHaveLength(1);
    edge.reset();
    edge.fault = () => ({ status: 503, headers: { 'retry-after': '0' } });
    await expect(client().webhooks.test(1)).rejects.toMatchObject({ status: 503 });
    expect(edge.seen).toHaveLength(1);
    expect(edge.seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('a Retry-After beyond a minute is not waited out: the 429 is handed back at once', async () => {
    edge.fault = () => ({ status: 429, headers: { 'retry-after': '3600' } });
    await expect(client().cheeses.list()).rejects.toMatchObject({ status: 429, type: 'rate_limited' });
    expect(edge.seen).toHaveLength(1);
  });

  it('connection failures are retried, then FromagerieConnectionError; a hung answer times out', async () => {
    edge.fault = () => 'reset';
    const error = await client({ maxRetries: 1 }).cheeses.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FromagerieConnectionError);
    expect((error as Error).message).toMatch(/after 2 attempts/);
    expect(edge.seen).toHaveLength(2);
    edge.reset();
    edge.fault = () => 'hang';
    const late = await client({ maxRetries: 0, timeoutMs: 300 }).cheeses.list().catch((e: unknown) => e);
    expect(late).toBeInstanceOf(FromagerieConnectionError);
    expect((late as Error).message).toMatch(/no answer within 300 ms/);
    expect(edge.seen).toHaveLength(1);
  });

  it('Retry-After is read as seconds or an HTTP date; backoff grows with jitter inside its bounds', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
    expect([backoffMs(0, () => 0), backoffMs(0, () => 1), backoffMs(2, () => 0), backoffMs(10, () => 1)]).toEqual([250, 500, 1000, 8000]);
  });
});

describe('pagination', () => {
  it('listAll walks every page along nextCursor and yields each cheese once', async () => {
    const first = await client().cheeses.list({ limit: 40 });
    const ids: number[] = [];
    for await (const cheese of client().cheeses.listAll({ limit: 40 })) ids.push(cheese.id!);
    expect(ids.length).toBe(first.total);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(200);
    expect(edge.seen.filter((r) => r.path.startsWith('/v2/cheeses')).length).toBe(1 + Math.ceil(ids.length / 40));
  });
});
