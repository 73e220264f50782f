import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { defaultAccountConcurrency, hiddenToFind, pickFairly, Slots, type ClaimBounds, type DueRow, type HiddenQueue } from '../../src/modules/webhooks/dispatch.rules.js';

const caps = { concurrency: 8, endpointConcurrency: 4, accountConcurrency: 2 };

describe('delivery slots (dispatch.rules.ts)', () => {
  it('a webhook or an account at its cap is left out of the next claim; the others are not', () => {
    const slots = new Slots();
    slots.take(1, 100);
    slots.take(2, 100);
    slots.take(3, 200);
    expect(slots.total).toBe(3);
    const bounds = slots.bounds(caps)!;
    expect(bounds).toMatchObject({ limit: 5, endpointCap: 2, accountCap: 2, fullWebhooks: [], fullAccounts: [100] });
    expect([...bounds.accountLoad]).toEqual([[100, 2], [200, 1]]);
    expect([...bounds.webhookLoad]).toEqual([[1, 1], [2, 1], [3, 1]]);
  });

  it('a webhook is never allowed more than its account: the per-webhook cap is the lower of the two', () => {
    const slots = new Slots();
    slots.take(1, 100);
    slots.take(1, 100);
    expect(slots.bounds({ concurrency: 8, endpointConcurrency: 4, accountConcurrency: 2 })).toMatchObject({ endpointCap: 2, fullWebhooks: [1], fullAccounts: [100] });
    expect(slots.bounds({ concurrency: 8, endpointConcurrency: 2, accountConcurrency: 4 })).toMatchObject({ endpointCap: 2, fullWebhooks: [1], fullAccounts: [] });
  });

  it('released slots are free again and forgotten; no claim at all when every slot is taken', () => {
    const slots = new Slots();
    for (let i = 0; i < 8; i++) slots.take(i, i % 4);
    expect(slots.bounds(caps)).toBeNull();
    for (let i = 0; i < 8; i++) slots.release(i, i % 4);
    expect(slots.total).toBe(0);
    expect(slots.bounds(caps)).toMatchObject({ limit: 8, fullWebhooks: [], fullAccounts: [] });
    expect(slots.bounds(caps)!.accountLoad.size).toBe(0);
    expect(slots.bounds(caps)!.webhookLoad.size).toBe(0);
  });

  it('the default per-account cap is a quarter of the slots, at least one', () => {
    expect(defaultAccountConcurrency(64)).toBe(16);
    expect(defaultAccountConcurrency(8)).toBe(2);
    expect(defaultAccountConcurrency(6)).toBe(2);
    expect(defaultAccountConcurrency(1)).toBe(1);
  });
});

/** Webhook w belongs to account floor(w / 10); times are seconds past a fixed instant. */
const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const row = (id: number, webhookId: number, second: number): DueRow => ({ id, webhookId, accountId: Math.floor(webhookId / 10), dueAt: at(second) });
const bounds = (over: Partial<ClaimBounds> = {}): ClaimBounds => ({ limit: 8, endpointCap: 4, accountCap: 4, webhookLoad: new Map(), accountLoad: new Map(), fullWebhooks: [], fullAccounts: [], ...over });

describe('the round-robin pick (pickFairly)', () => {
  it("gives every account its first slot before anyone's second, however old the first account's queue", () => {
    // Account 1 (webhooks 10, 11) has six old deliveries; accounts 2 and 3 one newer each.
    const window = [row(1, 10, 0), row(2, 11, 0), row(3, 10, 1), row(4, 11, 1), row(5, 10, 2), row(6, 11, 2), row(7, 20, 5), row(8, 30, 6)];
    expect(pickFairly(window, [], bounds({ limit: 3 })).ids).toEqual([1, 7, 8]);
    expect(pickFairly(window, [], bounds({ limit: 5 }))).toMatchObject({ ids: [1, 7, 8, 2, 3], taken: 5, topTurn: 3 });
  });

  it('counts what is in flight: a busy account waits for the idle ones, and none passes its caps', () => {
    const window = [row(1, 10, 0), row(2, 10, 1), row(3, 11, 2), row(4, 20, 3), row(5, 20, 4)];
    // Account 1 has three in flight (cap 4): account 2 gets two slots before account 1 gets one.
    expect(pickFairly(window, [], bounds({ limit: 3, accountLoad: new Map([[1, 3]]) })).ids).toEqual([4, 5, 1]);
    // Webhook 10 is at its cap of 2: account 1's next comes from webhook 11.
    expect(pickFairly(window, [], bounds({ endpointCap: 2, webhookLoad: new Map([[10, 2]]), accountLoad: new Map([[1, 2]]) })).ids).toEqual([4, 5, 3]);
    expect(pickFairly(window, [], bounds({ accountCap: 1 })).ids).toEqual([1, 4]);
  });

  it('hidden accounts take their turns like the others; their deliveries are counted, to be read afterwards', () => {
    const window = [row(1, 10, 0), row(2, 10, 1), row(3, 10, 2), row(4, 10, 3)];
    const hidden: HiddenQueue[] = [{ webhookId: 20, accountId: 2, count: 5, oldest: at(9) }, { webhookId: 30, accountId: 3, count: 1, oldest: at(8) }];
    const plan = pickFairly(window, hidden, bounds({ limit: 5, accountLoad: new Map([[1, 1]]) }));
    // Turns: account 3 (1, older), account 2 (1), then 1 and 2 (2), then 1 again (3).
    expect(plan).toMatchObject({ ids: [1, 2], taken: 5, topTurn: 3 });
    expect([...plan.hidden]).toEqual([[30, 1], [20, 2]]);
  });

  it('never passes a cap, never gives a turn while an earlier one waits, and leaves a slot free only when nothing more may go', () => {
    const arbitrary = fc.record({
      rows: fc.array(fc.record({ webhookId: fc.constantFrom(10, 11, 20, 21, 30, 40), second: fc.nat(30) }), { maxLength: 40 }),
      limit: fc.integer({ min: 1, max: 12 }),
      endpointCap: fc.integer({ min: 1, max: 4 }),
      accountCap: fc.integer({ min: 1, max: 6 }),
      loads: fc.array(fc.tuple(fc.constantFrom(10, 11, 20, 21, 30, 40), fc.nat(3)), { maxLength: 6 }),
    });
    fc.assert(
      fc.property(arbitrary, ({ rows, limit, endpointCap, accountCap, loads }) => {
        const window = rows.map((r, i) => row(i + 1, r.webhookId, r.second)).sort((a, b) => a.dueAt.localeCompare(b.dueAt) || a.id - b.id);
        const webhookLoad = new Map<number, number>();
        const accountLoad = new Map<number, number>();
        for (const [webhookId, n] of loads) {
          webhookLoad.set(webhookId, (webhookLoad.get(webhookId) ?? 0) + n);
          accountLoad.set(Math.floor(webhookId / 10), (accountLoad.get(Math.floor(webhookId / 10)) ?? 0) + n);
        }
        const b = bounds({ limit, endpointCap, accountCap, webhookLoad, accountLoad });
        const plan = pickFairly(window, [], b);
        const picked = new Set(plan.ids);
        expect(plan.ids.length).toBe(picked.size);
        expect(plan.taken).toBeLessThanOrEqual(limit);
        const count = (of: (r: DueRow) => number, id: number) => window.filter((r) => picked.has(r.id) && of(r) === id).length;
        const webhookNow = (w: number) => (webhookLoad.get(w) ?? 0) + count((r) => r.webhookId, w);
        const accountNow = (a: number) => (accountLoad.get(a) ?? 0) + count((r) => r.accountId, a);
        // Caps: nothing new goes to a webhook or account beyond them.
        for (const r of window.filter((x) => picked.has(x.id))) {
          expect(webhookNow(r.webhookId)).toBeLessThanOrEqual(Math.max(endpointCap, webhookLoad.get(r.webhookId) ?? 0));
          expect(accountNow(r.accountId)).toBeLessThanOrEqual(Math.max(accountCap, accountLoad.get(r.accountId) ?? 0));
        }
        // Whoever could still take a slot would do so at a turn no earlier than any given.
        const waiting = window.filter((r) => !picked.has(r.id) && webhookNow(r.webhookId) < endpointCap && accountNow(r.accountId) < accountCap);
        for (const r of waiting) expect(accountNow(r.accountId) + 1).toBeGreaterThanOrEqual(plan.topTurn);
        if (plan.taken < limit) expect(waiting).toEqual([]);
      }),
    );
  });
});

describe('looking past the window (hiddenToFind)', () => {
  const full = [row(1, 10, 0), row(2, 10, 1), row(3, 20, 2), row(4, 10, 3)];

  it('not when the window held every due delivery, nor when every slot went to a first turn', () => {
    expect(hiddenToFind(full.slice(0, 3), 4, pickFairly(full.slice(0, 3), [], bounds()), bounds())).toBeNull();
    expect(hiddenToFind(full, 4, pickFairly(full, [], bounds({ limit: 2 })), bounds({ limit: 2 }))).toBeNull();
  });

  it('when a second turn was given or a slot is left: the window\'s accounts are known; with every slot given, so are those that would come later', () => {
    expect(hiddenToFind(full, 4, pickFairly(full, [], bounds()), bounds())).toEqual([1, 2]);
    const busy = bounds({ limit: 2, accountLoad: new Map([[1, 1], [5, 2], [6, 1]]) });
    // The plan gives account 1 its second turn: account 5 (next turn 3) cannot come first; account 6 (2) can, on age.
    expect(hiddenToFind(full, 4, pickFairly(full, [], busy), busy)).toEqual([1, 2, 5]);
  });
});

describe('WEBHOOK_ACCOUNT_CONCURRENCY', () => {
  const base = { APP_SECRET: 'x'.repeat(32) };

  it('defaults to a quarter of WEBHOOK_CONCURRENCY, and may be set up to it', () => {
    expect(loadConfig(base).webhooks).toMatchObject({ concurrency: 64, accountConcurrency: 16 });
    expect(loadConfig({ ...base, WEBHOOK_CONCURRENCY: '10' }).webhooks.accountConcurrency).toBe(3);
    expect(loadConfig({ ...base, WEBHOOK_ACCOUNT_CONCURRENCY: '64' }).webhooks.accountConcurrency).toBe(64);
    expect(loadConfig({ ...base, WEBHOOK_CONCURRENCY: '8', WEBHOOK_ACCOUNT_CONCURRENCY: '2' }).webhooks).toMatchObject({ concurrency: 8, accountConcurrency: 2 });
  });

  it('is refused above WEBHOOK_CONCURRENCY, or when not a positive whole number', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_CONCURRENCY: '8', WEBHOOK_ACCOUNT_CONCURRENCY: '9' })).toThrow(/WEBHOOK_ACCOUNT_CONCURRENCY \(9\) must not exceed WEBHOOK_CONCURRENCY \(8\)/);
    for (const value of ['0', '-1', '2.5', 'many']) {
      expect(() => loadConfig({ ...base, WEBHOOK_ACCOUNT_CONCURRENCY: value }), value).toThrow(ConfigError);
    }
  });
});
