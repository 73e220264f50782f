import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, type TestStorage } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';
import { databaseNow } from '../../src/db/clock.js';
import { SYSTEM_CONTEXT } from '../../src/kernel/change-context.js';
import { HeldKeys } from '../../src/modules/idempotency/idempotency.leases.js';

/**
 * Issue 20: a running Idempotency-Key is locked by a short lease (IDEMPOTENCY_LEASE_MS), renewed
 * by its instance while the request runs, released when the instance closes; a dead instance's
 * keys come free within one lease, not REQUEST_TIMEOUT_MS (60 s).
 */
const LEASE_MS = 1500;

let storage: TestStorage;
let t: TestApp;
let staff: Record<string, string>;
let seq = 0;
beforeAll(async () => {
  storage = await createTestStorage();
  t = await createTestApp({ storage, config: { idempotencyLeaseMs: LEASE_MS } });
  staff = bearer(await t.key(['admin']));
});
afterAll(async () => {
  await t.close();
  await storage.dispose();
});

async function cheese(stockQuantityKg = 20) {
  return (await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Leased cheese ${++seq}`, pricePerKg: 20, stockQuantityKg } })).body as { id: number };
}
const order = (cheeseId: number) => ({ items: [{ cheeseId, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } });
const customer = async () => bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
const post = (app: TestApp, headers: Record<string, string>, key: string, json: unknown) => app.http.post('/v2/orders', { headers: { ...headers, 'idempotency-key': key }, json });
const record = (app: TestApp, key: string) => app.database.db.selectFrom('idempotency_keys').select(['id', 'state', 'created_resource']).where('idempotency_key', '=', key).executeTakeFirst();

/** A record claimed as a request would claim it, outside HTTP (its fingerprint matches no request). */
async function claim(app: TestApp, key: string, leaseMs = LEASE_MS): Promise<number> {
  const now = new Date();
  const id = await app.app.modules.idempotency.provides.keys.claim({ scope: 'test:leases', key, fingerprint: 'f', credential: 'anonymous', accountId: null, leaseMs, now: now.toISOString(), expiresAt: new Date(now.getTime() + 3_600_000).toISOString() });
  if (id === undefined) throw new Error(`key ${key} already claimed`);
  return id;
}
const leaseOver = async (app: TestApp, key: string) => (await app.app.modules.idempotency.provides.keys.find('test:leases', key))!.leaseOver;

describe('Idempotency-Key leases (issue 20)', () => {
  it("a key whose instance died mid-request is free for the retry within the lease, not REQUEST_TIMEOUT_MS", async () => {
    const c = await cheese();
    const me = await customer();
    // What an instance that died before its transaction committed leaves: the key claimed as
    // the app claims it (its lease the app's), running, nothing created. The request's
    // fingerprint is taken from a finished twin under another key.
    expect((await post(t, me, 'twin', order(c.id))).status).toBe(201);
    const twin = await t.database.db.selectFrom('idempotency_keys').select(['scope', 'fingerprint', 'credential', 'account_id']).where('idempotency_key', '=', 'twin').executeTakeFirstOrThrow();
    const now = new Date();
    const claimed = await t.app.modules.idempotency.provides.keys.claim({ scope: twin.scope, key: 'died-mid-request', fingerprint: twin.fingerprint, credential: twin.credential!, accountId: twin.account_id, leaseMs: LEASE_MS, now: now.toISOString(), expiresAt: new Date(now.getTime() + 3_600_000).toISOString() });
    expect(claimed).toBeDefined();
    const { locked_until: leaseEnd } = await t.database.db.selectFrom('idempotency_keys').select('locked_until').where('id', '=', claimed!).executeTakeFirstOrThrow();
    const early = await post(t, me, 'died-mid-request', order(c.id));
    expect([early.status, early.headers.get('retry-after')]).toEqual([409, '1']);
    // The client retries as told (every 100 ms here): the key comes free once the lease is over,
    // long before REQUEST_TIMEOUT_MS (60 s), which is the poll's bound.
    let retry = early;
    await expect
      .poll(async () => (retry = await post(t, me, 'died-mid-request', order(c.id))).status, { timeout: LEASE_MS + 5000, interval: 100 })
      .toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    // Not before the lease was over, by the clock the lease is judged on (the database's).
    expect(new Date(await databaseNow(t.database.db)).getTime()).toBeGreaterThanOrEqual(new Date(leaseEnd).getTime());
    // The retry's answer is now the recorded one.
    const replay = await post(t, me, 'died-mid-request', order(c.id));
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.id]).toEqual([201, 'true', retry.body.id]);
  });

  it('a key taken over after the lease still answers with what the first request committed, never creating it twice', async () => {
    const c = await cheese();
    const me = await customer();
    const first = await post(t, me, 'died-after-commit', order(c.id));
    await t.database.db
      .updateTable('idempotency_keys')
      .set({ state: 'running', status_code: null, response_headers: null, response_body: null, locked_until: new Date(Date.now() - 1000).toISOString() })
      .where('idempotency_key', '=', 'died-after-commit')
      .execute();
    const retry = await post(t, me, 'died-after-commit', order(c.id));
    expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body.id]).toEqual([201, 'true', first.body.id]);
    expect((await t.http.get('/v2/orders', { headers: me })).body.items).toHaveLength(1);
  });

  it("a holder whose lease lapsed and whose key a retry claimed again cannot renew, complete, release or note a creation on the retry's record", async () => {
    const keys = t.app.modules.idempotency.provides.keys;
    const lapsed = await claim(t, 'lapsed-holder', 200);
    await expect.poll(() => leaseOver(t, 'lapsed-holder')).toBe(true);
    // The retry: the lapsed record goes, the key is claimed afresh (what begin() does).
    expect(await keys.releaseLapsed(lapsed)).toBe(true);
    expect(await keys.releaseLapsed(lapsed)).toBe(false);
    const retry = await claim(t, 'lapsed-holder');
    expect(retry).not.toBe(lapsed);
    // The first holder, still running somewhere, acts on its old id: nothing of the retry's changes.
    expect(await keys.renew([lapsed], 60_000)).toBe(0);
    await keys.complete(lapsed, { statusCode: 201, headers: {}, body: '{"id":1}', withheld: false });
    await keys.release(lapsed);
    await expect(t.database.db.transaction().execute((trx) => keys.markCreated(trx, lapsed, '/v2/orders/1'))).rejects.toMatchObject({ status: 409 });
    expect(await record(t, 'lapsed-holder')).toEqual({ id: retry, state: 'running', created_resource: null });
    // The retry's own note still lands.
    await t.database.db.transaction().execute((trx) => keys.markCreated(trx, retry, '/v2/orders/2'));
    expect(await record(t, 'lapsed-holder')).toMatchObject({ id: retry, created_resource: '/v2/orders/2' });
  });

  it('the work of a request whose key a retry claimed again rolls back with its transaction', async () => {
    const c = await cheese();
    const keys = t.app.modules.idempotency.provides.keys;
    const lapsed = await claim(t, 'overtaken', 100);
    await expect.poll(() => leaseOver(t, 'overtaken')).toBe(true);
    expect(await keys.releaseLapsed(lapsed)).toBe(true);
    // What a creating service does in its transaction: its writes (an order's stock, taken
    // through the catalogue as placement takes it), then the note on its key.
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        const { problems } = await t.app.modules.catalogue.provides.stock.reserve(trx, [{ cheeseId: c.id, grams: 20_000 }], SYSTEM_CONTEXT);
        expect(problems).toEqual([]);
        await keys.markCreated(trx, lapsed, '/v2/orders/999');
      }),
    ).rejects.toMatchObject({ status: 409, type: 'conflict' });
    expect((await t.http.get(`/v2/cheeses/${c.id}`, { headers: staff })).body.stockQuantityKg).toBe(20);
  });

  it('the instance renews the keys it holds in one statement: a long request keeps its key past the base lease; dropped, it lapses', async () => {
    const keys = t.app.modules.idempotency.provides.keys;
    // The instance's renewals, counted: the test waits for them, not for a length of time.
    let renewals = 0;
    const counted = { renew: (ids: readonly number[], leaseMs: number) => keys.renew(ids, leaseMs).finally(() => renewals++), releaseRunning: (ids: readonly number[]) => keys.releaseRunning(ids) } as unknown as typeof keys;
    const leases = new HeldKeys(counted, 600);
    const held = await claim(t, 'renewed', 600);
    await claim(t, 'not-renewed', 600);
    leases.hold(held);
    try {
      // Nine renewals, one every third of a lease at the soonest: more than three leases have passed.
      await expect.poll(() => renewals, { timeout: 15_000, interval: 50 }).toBeGreaterThanOrEqual(9);
      expect(await leaseOver(t, 'renewed')).toBe(false);
      expect(await leaseOver(t, 'not-renewed')).toBe(true);
      leases.drop(held);
      const dropped = renewals;
      await expect.poll(() => leaseOver(t, 'renewed'), { timeout: 10_000 }).toBe(true);
      // At most the renewal under way when it was dropped.
      expect(renewals - dropped).toBeLessThanOrEqual(1);
    } finally {
      await leases.close();
    }
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))('PostgreSQL: a request held up by a row lock keeps its key for as long as it runs, then answers once', async () => {
    const c = await cheese();
    const me = await customer();
    let unlock!: () => void;
    const unlocked = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another transaction holds the cheese's row: the order's transaction waits for it.
    const holder = t.database.db.transaction().execute(async (trx) => {
      await sql`select id from cheeses where id = ${c.id} for update`.execute(trx);
      locked();
      await unlocked;
    });
    await isLocked;
    const slow = post(t, me, 'slow-request', order(c.id));
    // Wait for a renewal made two leases after the claim (by the database's clock, which sets
    // and judges the lease): its lease ends three leases after the first one began.
    const leaseEnd = async () => {
      const row = await t.database.db.selectFrom('idempotency_keys').select('locked_until').where('idempotency_key', '=', 'slow-request').executeTakeFirst();
      return row ? new Date(row.locked_until).getTime() : undefined;
    };
    await expect.poll(leaseEnd, { timeout: 10_000, interval: 50 }).toBeDefined();
    const firstEnd = (await leaseEnd())!;
    await expect.poll(async () => (await leaseEnd())! - firstEnd, { timeout: LEASE_MS * 2 + 10_000, interval: 50 }).toBeGreaterThanOrEqual(LEASE_MS * 2);
    // Two leases later the first request still runs: its key is still held, not taken over.
    const retry = await post(t, me, 'slow-request', order(c.id));
    expect(retry.status).toBe(409);
    unlock();
    await holder;
    const first = await slow;
    expect(first.status).toBe(201);
    const replay = await post(t, me, 'slow-request', order(c.id));
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.id]).toEqual([201, 'true', first.body.id]);
    expect((await t.http.get('/v2/orders', { headers: me })).body.items).toHaveLength(1);
  });

  it("closing an instance releases the keys its unfinished requests hold, keeping those whose creation committed", async () => {
    const other = await createTestApp({ storage, config: { idempotencyLeaseMs: 60_000 } });
    const { leases, keys } = other.app.modules.idempotency.provides;
    const unfinished = await claim(other, 'cut-off', 60_000);
    const committed = await claim(other, 'cut-off-after-commit', 60_000);
    await other.database.db.transaction().execute((trx) => keys.markCreated(trx, committed, '/v2/orders/1'));
    leases.hold(unfinished);
    leases.hold(committed);
    await other.close();
    expect(await record(t, 'cut-off')).toBeUndefined();
    expect(await record(t, 'cut-off-after-commit')).toMatchObject({ state: 'running', created_resource: '/v2/orders/1' });
  });
});
