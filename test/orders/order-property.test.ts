import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * The lifecycle through the real service: random sequences of placements, cancellations,
 * staff transitions and sandbox advances, over HTTP. After every step, no order is in a state
 * outside the table, every answer is one the table allows, and no stock is lost: what is in
 * stock, plus what placed and approved orders hold, plus what has shipped, is what there was.
 */
let t: TestApp;
let staff: Record<string, string>;
let customer: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
  customer = bearer(await t.key(['read:orders', 'write:orders'], 'customer'));
});
afterAll(() => t.close());

type Op = { kind: 'place'; kg: number } | { kind: 'cancel'; pick: number } | { kind: 'staff'; pick: number; status: 'approved' | 'shipped' | 'delivered' | 'cancelled' } | { kind: 'advance'; pick: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('place' as const), kg: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(20) }),
  fc.record({ kind: fc.constant('staff' as const), pick: fc.nat(20), status: fc.constantFrom('approved' as const, 'shipped' as const, 'delivered' as const, 'cancelled' as const) }),
  fc.record({ kind: fc.constant('advance' as const), pick: fc.nat(20) }),
);

describe('orders over HTTP, any sequence', () => {
  it('never reach an illegal state and never lose stock', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
        const initialKg = 10;
        const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Property cheese ${++run}`, pricePerKg: 10, stockQuantityKg: initialKg } })).body;
        const ids: number[] = [];
        for (const step of ops) {
          const id = ids.length ? ids[('pick' in step ? step.pick : 0) % ids.length]! : undefined;
          let status: number;
          if (step.kind === 'place') {
            const res = await t.http.post('/v2/orders', { headers: customer, json: { items: [{ cheeseId: cheese.id, quantity_kg: step.kg }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } } });
            status = res.status;
            if (status === 201) ids.push(res.body.id);
            expect([201, 409]).toContain(status);
          } else if (id === undefined) {
            continue;
          } else if (step.kind === 'cancel') {
            status = (await t.http.delete(`/v2/store/order/${id}`, { headers: customer })).status;
            expect([204, 409]).toContain(status);
          } else if (step.kind === 'staff') {
            status = (await t.http.request('PATCH', `/v2/orders/${id}`, { headers: { ...staff, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ status: step.status }) })).status;
            expect([200, 409]).toContain(status);
          } else {
            status = (await t.http.post(`/v2/sandbox/orders/${id}/advance`, { headers: customer })).status;
            expect([200, 409]).toContain(status);
          }
          const orders = await Promise.all(ids.map(async (orderId) => (await t.http.get(`/v2/orders/${orderId}`, { headers: staff })).body as { status: string; items: { quantityKg: number }[] }));
          const kgIn = (statuses: string[]) => orders.filter((o) => statuses.includes(o.status)).reduce((sum, o) => sum + o.items[0]!.quantityKg, 0);
          for (const o of orders) expect(['placed', 'approved', 'shipped', 'delivered', 'cancelled']).toContain(o.status);
          const inStock = (await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: staff })).body.stockQuantityKg as number;
          expect(inStock + kgIn(['placed', 'approved']) + kgIn(['shipped', 'delivered'])).toBe(initialKg);
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
