import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimBounds } from '../../src/modules/webhooks/dispatch.rules.js';
import { DeliveryRepository } from '../../src/modules/webhooks/delivery.repository.js';
import { createAdminTestApp, createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Issue 16 §5: one account cannot take the delivery capacity of the others. Account A has
 * five webhooks whose receivers never answer and a backlog of its own order events; alone, at
 * four slots per webhook, it could hold every one of the instance's eight. Asserted as
 * behaviour, not milliseconds (issue 29): A's attempts hang longer than the test runs, so had A
 * taken every slot, none of B's events could arrive before them; B's all arrive, and A's
 * receivers see exactly its share of attempts. Delivery latency is a figure of
 * `npm run bench:webhooks` (commit to receipt), not a bound here (a loaded CI machine saw B's
 * p50 at 1 s on PostgreSQL).
 */
const HANG_MS = 30_000;
const SETTINGS = { retryScheduleS: [0, 60], timeoutMs: HANG_MS, retentionDays: 30, concurrency: 8, endpointConcurrency: 4, accountConcurrency: 2, pollMs: 200 };
const A_WEBHOOKS = 5;
const A_ORDERS = 12;
const B_ORDERS = 10;
const B_EVERY_MS = 350;
/** How long B's events may take before they count as not delivered: well inside HANG_MS, so none can arrive through a slot A let go. */
const B_PATIENCE_MS = 15_000;

let t: TestApp;
let staff: Record<string, string>;
let receiver: Receiver;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp({ workers: true, config: { webhooks: SETTINGS } }));
  receiver = await new Receiver().start();
});
afterAll(async () => {
  // The receiver first: its hanging connections end, so the dispatcher's attempts end with them.
  await receiver.close();
  await t.close();
});

const customer = async (app = t) => bearer(await app.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
const address = { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' };

async function order(headers: Record<string, string>, cheeseId: number, app = t): Promise<string> {
  const res = await app.http.post('/v2/orders', { headers, json: { items: [{ cheeseId: String(cheeseId), quantity_kg: 1 }], shipping: { method: 'standard', address } } });
  expect(res.status, res.text).toBe(201);
  return String(res.body.id);
}

async function register(headers: Record<string, string>, path: string, app = t): Promise<number> {
  const res = await app.http.post('/v2/webhooks', { headers, json: { url: receiver.url(path), events: ['order.placed'] } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('delivery slots are shared fairly between accounts', () => {
  it("an account whose receivers hang holds its share and no more; another account's events all arrive meanwhile", async () => {
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Fairness Tomme', pricePerKg: 20, stockQuantityKg: 1000, status: 'available' } });
    expect(cheese.status).toBe(201);
    const a = await customer();
    const b = await customer();
    for (let i = 0; i < A_WEBHOOKS; i++) {
      receiver.on(`/a/${i}`, () => ({ status: 200, hang: true }));
      await register(a, `/a/${i}`);
    }
    await register(b, '/b');

    for (let i = 0; i < A_ORDERS; i++) await order(a, cheese.body.id);
    const aPaths = (path: string) => path.startsWith('/a/');
    // A's attempts are under way and hanging before B produces anything.
    await expect.poll(() => receiver.received.filter((r) => aPaths(r.path)).length, { timeout: 5000 }).toBeGreaterThanOrEqual(SETTINGS.accountConcurrency);

    const sentAt = new Map<string, number>();
    for (let i = 0; i < B_ORDERS; i++) {
      const started = Date.now();
      sentAt.set(await order(b, cheese.body.id), started);
      await new Promise((resolve) => setTimeout(resolve, B_EVERY_MS));
    }
    const lastSent = Math.max(...sentAt.values());
    while (receiver.at('/b').length < B_ORDERS && Date.now() < lastSent + B_PATIENCE_MS) await new Promise((resolve) => setTimeout(resolve, 20));

    const arrivals = new Map(receiver.at('/b').map((r) => [String((JSON.parse(r.raw) as { data: { order_id: string } }).data.order_id), r.at]));
    const latencies = [...sentAt].map(([id, at]) => (arrivals.has(id) ? arrivals.get(id)! - at : Infinity)).sort((x, y) => x - y);
    const p95 = percentile(latencies, 95);
    const aRequests = receiver.received.filter((r) => aPaths(r.path)).length;
    const summary = `B: ${arrivals.size} of ${B_ORDERS} delivered, p50 ${percentile(latencies, 50)} ms, p95 ${p95} ms, max ${latencies.at(-1)} ms; A's receivers got ${aRequests} requests`;
    // Every one of B's events arrived while all of A's attempts still hung: B never waited for A's slots.
    expect(arrivals.size, summary).toBe(B_ORDERS);
    expect(Number.isFinite(p95), summary).toBe(true);
    // A kept to its share: none of its attempts has ended, and no more than its two are under way.
    expect(aRequests, summary).toBe(SETTINGS.accountConcurrency);
  }, 45_000);
});

describe('the claim serves accounts round-robin, on this database', () => {
  // No workers: the test claims by hand, as a dispatcher with the given slots in flight would.
  let quiet: TestApp;
  beforeAll(async () => {
    quiet = await createTestApp();
  });
  afterAll(() => quiet.close());

  it("an account's n-th slot goes before anyone's (n+1)-th, however old the other's backlog; caps hold; two claimers never share a row", async () => {
    const staffKey = bearer(await quiet.key(['admin']));
    const cheese = await quiet.http.post('/v2/cheeses', { headers: staffKey, json: { name: 'Round-robin Comté', pricePerKg: 20, stockQuantityKg: 1000, status: 'available' } });
    const [c, d, e] = [await customer(quiet), await customer(quiet), await customer(quiet)];
    const owner = new Map<number, string>();
    for (let i = 0; i < 3; i++) owner.set(await register(c, `/rr/c/${i}`, quiet), 'C');
    owner.set(await register(d, '/rr/d', quiet), 'D');
    owner.set(await register(e, '/rr/e', quiet), 'E');
    const accountOf = new Map<string, number>();
    for (const row of await quiet.database.db.selectFrom('webhooks').select(['id', 'account_id']).execute()) accountOf.set(owner.get(Number(row.id))!, Number(row.account_id));
    const { dispatcher } = quiet.app.modules.webhooks.provides;
    // C's backlog is queued first: twelve deliveries older than anything of D's or E's.
    // On PostgreSQL an event is taken only once every transaction older than it has ended,
    // other test files' too: fan out until each account's deliveries are all there.
    const fannedOut = async (count: number) => {
      await expect
        .poll(async () => {
          await dispatcher.fanOut();
          const row = await quiet.database.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
          return Number(row.n);
        }, { timeout: 10_000, interval: 50 })
        .toBe(count);
    };
    for (let i = 0; i < 4; i++) await order(c, cheese.body.id, quiet);
    await fannedOut(12);
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 3; i++) await order(d, cheese.body.id, quiet);
    await order(e, cheese.body.id, quiet);
    await fannedOut(16);

    const deliveries = new DeliveryRepository(quiet.database.db, quiet.app.modules.outbox.provides.rows);
    const lease = new Date(Date.now() + 3_600_000).toISOString();
    const load = (counts: Record<string, number>) => new Map(Object.entries(counts).map(([who, n]) => [accountOf.get(who)!, n]));
    const bounds = (over: Partial<ClaimBounds>): ClaimBounds => ({ limit: 8, endpointCap: 4, accountCap: 4, webhookLoad: new Map(), accountLoad: new Map(), fullWebhooks: [], fullAccounts: [], ...over });
    const claim = async (over: Partial<ClaimBounds>) => (await deliveries.claimDue(new Date().toISOString(), lease, bounds(over))).claimed.map((row) => owner.get(row.webhookId)!).sort().join('');

    // Three slots: one each, though C's rows are all older.
    expect(await claim({ limit: 3 })).toBe('CDE');
    // One each in flight: the second turn is C's and D's (E has nothing left), C's first (older).
    expect(await claim({ limit: 3, accountLoad: load({ C: 1, D: 1, E: 1 }) })).toBe('CCD');
    // C has three in flight, D two: D's third slot goes before C's fourth.
    expect(await claim({ limit: 1, accountLoad: load({ C: 3, D: 2, E: 1 }) })).toBe('D');
    // C at its cap (left out by the dispatcher, and by the ranking too): nothing is claimed.
    expect(await claim({ accountLoad: load({ C: 4, D: 3, E: 1 }), fullAccounts: [accountOf.get('C')!] })).toBe('');
    expect(await claim({ accountLoad: load({ C: 4, D: 3, E: 1 }) })).toBe('');
    // C's attempts ended; at one per webhook, its three webhooks take one slot each.
    const perWebhook = await deliveries.claimDue(new Date().toISOString(), lease, bounds({ endpointCap: 1 }));
    expect(new Set(perWebhook.claimed.map((row) => row.webhookId)).size).toBe(3);
    expect(perWebhook.claimed).toHaveLength(3);

    // Two instances claiming at once: each row goes to one of them (C has six rows left).
    const [one, two] = await Promise.all([deliveries.claimDue(new Date().toISOString(), lease, bounds({})), deliveries.claimDue(new Date().toISOString(), lease, bounds({}))]);
    const ids = [...one.claimed, ...two.claimed].map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeLessThanOrEqual(6);
    const left = await quiet.database.db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'pending').where('next_attempt_at', '<=', new Date().toISOString()).execute();
    expect(left.length + ids.length).toBe(6);
  });
});
