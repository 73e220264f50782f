import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Fromagerie, WebhookVerificationError, type WebhookEvent } from '../../packages/sdk/src/index.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { Receiver, type Received } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;
let sdk: Fromagerie;
let secret: string;
let webhookId: number;
let delivery: Received;

beforeAll(async () => {
  const { t: app, auth: staff } = await createAdminTestApp({ workers: true });
  t = app;
  receiver = await new Receiver().start();
  sdk = new Fromagerie({ apiKey: await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'), baseUrl: t.http.baseUrl });
  const created = await sdk.webhooks.create({ url: receiver.url('/hook'), events: ['order.*'] });
  secret = created.secret;
  webhookId = created.id;
  const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Verified brie', pricePerKg: 30, stockQuantityKg: 50, status: 'available' } });
  await sdk.orders.create({ items: [{ cheeseId: cheese.body.slug, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 quai', city: 'Lyon', country: 'FR' } } });
  delivery = (await receiver.waitFor('/hook', 1))[0]!;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});
afterEach(() => vi.useRealTimers());

/** The Node request headers of the delivery, less those named. */
const headersWithout = (...names: string[]) => Object.fromEntries(Object.entries(delivery.headers).filter(([name]) => !names.includes(name)));

describe('webhooks.verify', () => {
  it('accepts a real delivery and returns its event, which narrows on type', () => {
    const event: WebhookEvent = sdk.webhooks.verify(delivery.raw, delivery.headers, secret);
    expect(event.type).toBe('order.placed');
    if (event.type !== 'order.placed') throw new Error('unreachable');
    expect(event.data.order_id).toMatch(/^\d+$/);
    expect(event.id).toBe(delivery.headers['webhook-id']);
    // The same delivery as Fetch API Headers and as bytes.
    expect(sdk.webhooks.verify(Buffer.from(delivery.raw), new Headers(delivery.headers as Record<string, string>), secret).id).toBe(event.id);
  });

  it('refuses a body with one byte changed, under either scheme', () => {
    const changed = delivery.raw.replace('"order.placed"', '"order.placeD"');
    expect(changed).not.toBe(delivery.raw);
    expect(() => sdk.webhooks.verify(changed, delivery.headers, secret)).toThrow(WebhookVerificationError);
    expect(() => sdk.webhooks.verify(changed, headersWithout('webhook-signature'), secret)).toThrow(/X-Cheese-Signature does not verify/);
    expect(() => sdk.webhooks.verify(delivery.raw, delivery.headers, `whsec_${Buffer.from('another secret, 32 bytes long...').toString('base64')}`)).toThrow(WebhookVerificationError);
  });

  it('refuses a delivery more than 5 minutes old, and a replay that only moves webhook-timestamp', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 6 * 60_000);
    expect(() => sdk.webhooks.verify(delivery.raw, delivery.headers, secret)).toThrow(/too old/);
    expect(() => sdk.webhooks.verify(delivery.raw, headersWithout('webhook-signature'), secret)).toThrow(/5 minutes/);
    const now = String(Math.floor(Date.now() / 1000));
    expect(() => sdk.webhooks.verify(delivery.raw, { ...delivery.headers, 'webhook-timestamp': now }, secret)).toThrow(/No matching signature/);
    vi.setSystemTime(Date.now() - 6 * 60_000 + 4 * 60_000);
    expect(sdk.webhooks.verify(delivery.raw, delivery.headers, secret).type).toBe('order.placed');
  });

  it('X-Cheese-Signature alone verifies; no signature at all is refused', () => {
    expect(sdk.webhooks.verify(delivery.raw, headersWithout('webhook-signature'), secret).type).toBe('order.placed');
    expect(() => sdk.webhooks.verify(delivery.raw, headersWithout('webhook-signature', 'x-cheese-signature'), secret)).toThrow(/no signature/);
    // The scheme is what the spec says: sha256= and the hex HMAC of the raw body, keyed by the whole secret.
    expect(delivery.headers['x-cheese-signature']).toBe(`sha256=${createHmac('sha256', secret).update(delivery.raw).digest('hex')}`);
  });

  it('during a rotation, deliveries signed by both secrets verify with either', async () => {
    const rotated = await sdk.webhooks.rotateSecret(webhookId);
    const test = await sdk.webhooks.test(webhookId);
    expect(test.outcome).toBe('delivered');
    const last = receiver.at('/hook').find((r) => r.headers['webhook-id'] === test.eventId)!;
    expect(last.headers['webhook-signature']).toContain(' ');
    for (const keys of [secret, rotated.secret, [rotated.secret, secret]]) expect(sdk.webhooks.verify(last.raw, last.headers, keys).type).toBe('webhook.test');
    expect(sdk.webhooks.verify(last.raw, { ...last.headers, 'webhook-signature': undefined }, [rotated.secret]).type).toBe('webhook.test');
  });
});
