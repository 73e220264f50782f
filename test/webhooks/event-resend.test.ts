import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../src/kernel/errors.js';
import { newPrincipal, type Principal } from '../../src/kernel/principal.js';
import { ROLE_SCOPES } from '../../src/kernel/scopes.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUpCustomer } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';

/**
 * One event across the webhooks (EventDeliveryService, issue 31's event page): each managed
 * webhook's delivery of it, and Resend to one webhook, in one transaction (a new delivery, a
 * settled one re-queued, a pending one left alone). Both dialects.
 */
let t: TestApp;
let staffKey: string;
beforeAll(async () => {
  t = await createTestApp();
  staffKey = await t.key(['admin']);
}, 60_000);
afterAll(async () => t?.close());

const service = () => t.app.modules.webhooks.provides.eventDeliveries;
const principalOf = (account: { accountId: number; username: string }, role: 'customer' | 'admin' = 'customer'): Principal =>
  newPrincipal({ accountId: account.accountId, username: account.username, role }, ROLE_SCOPES[role], 'development', { kind: 'browser_session', id: 1, expiresAt: null });

let cheeses = 0;
async function customerWithOrder() {
  const account = await signUpCustomer(t);
  const { key } = await t.app.modules.identity.provides.apiKeys.create({ accountId: account.accountId, role: 'customer' }, { scopes: ['read:orders', 'write:orders', 'read:cheeses'] }, null);
  const hook = async (events: string[]) => {
    const res = await t.http.post('/v2/webhooks', { headers: bearer(key), json: { url: 'http://127.0.0.1:9/hook', events } });
    expect(res.status, res.text).toBe(201);
    return Number(res.body.id);
  };
  const placed = await hook(['order.placed']);
  const shipped = await hook(['order.shipped']);
  const cheese = await t.http.post('/v2/cheeses', { headers: bearer(staffKey), json: { name: `Resend Brie ${++cheeses} ${process.pid}`, pricePerKg: 20, stockQuantityKg: 50 } });
  const order = await t.http.post('/v2/orders', { headers: bearer(key), json: { items: [{ cheeseId: cheese.body.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } } } });
  expect(order.status, order.text).toBe(201);
  const event = await t.database.db.selectFrom('outbox').select('event_id').where('aggregate_id', '=', String(order.body.id)).where('type', '=', 'order.placed').executeTakeFirstOrThrow();
  return { principal: principalOf(account), placed, shipped, eventId: event.event_id };
}

describe('EventDeliveryService', () => {
  it('lists the webhooks that receive the event; Resend inserts a delivery, leaves a pending one, re-queues a settled one', async () => {
    const { principal, placed, shipped, eventId } = await customerWithOrder();
    const before = await service().ofEvent(principal, eventId);
    expect(before.map((row) => [row.webhook.id, row.receives, row.delivery])).toEqual([[placed, true, null]]);
    expect(await service().resend(principal, placed, eventId)).toBe('queued');
    const after = await service().ofEvent(principal, eventId);
    expect(after[0]!.delivery).toMatchObject({ webhookId: placed, state: 'pending', attempts: 0 });
    expect(await service().resend(principal, placed, eventId)).toBe('pending');
    await t.database.db.updateTable('webhook_deliveries').set({ state: 'dead', attempts: 6 }).where('webhook_id', '=', placed).execute();
    expect(await service().resend(principal, placed, eventId)).toBe('queued');
    expect(await t.database.db.selectFrom('webhook_deliveries').select(['state', 'attempts']).where('webhook_id', '=', placed).execute()).toEqual([{ state: 'pending', attempts: 0 }]);
    // A webhook that does not receive order.placed: refused, nothing written.
    await expect(service().resend(principal, shipped, eventId)).rejects.toBeInstanceOf(ConflictError);
    expect(await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', shipped).execute()).toEqual([]);
  });

  it('another customer can neither see nor resend to the webhook (404); staff see it', async () => {
    const alice = await customerWithOrder();
    const bob = await signUpCustomer(t);
    await expect(service().resend(principalOf(bob), alice.placed, alice.eventId)).rejects.toBeInstanceOf(NotFoundError);
    expect(await service().ofEvent(principalOf(bob), alice.eventId)).toEqual([]);
    const staff = principalOf({ accountId: 1, username: 'admin' }, 'admin');
    expect((await service().ofEvent(staff, alice.eventId)).map((row) => row.webhook.id)).toEqual([alice.placed]);
    expect(await service().resend(staff, alice.placed, alice.eventId)).toBe('queued');
    expect(await service().ofEvent(alice.principal, 'evt_00000000000000000000000000000000')).toEqual([]);
  });
});
