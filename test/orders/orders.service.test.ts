import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/kernel/errors.js';
import type { Placement } from '../../src/modules/orders/order.placement.js';
import { orderQueryOf } from '../../src/modules/orders/order.query.js';
import { createTestModules, type TestModules } from '../helpers/modules.js';

/**
 * The orders service over a real database, without HTTP (issue 29 §2, the service tier): what
 * an order does to stock and who may see it, with every fixture made through the modules.
 */
let m: TestModules;
let cheeseId: number;

beforeAll(async () => {
  m = await createTestModules({ seed: true });
  cheeseId = (await m.modules.catalogue.provides.cheeses.orderable(m.database.db, 5000, 1))[0]!;
}, 60_000);
afterAll(() => m?.close());

const placement = (grams: number): Placement => ({
  lines: [{ cheese: cheeseId, grams, field: 'items[0].cheeseId', quantityField: 'items[0].quantityKg' }],
  address: { street: '1 Rue du Fromage', city: 'Poligny', state: null, zip: null, country: 'FR' },
  countryField: 'shipping.address.country',
  method: 'standard',
  notes: null,
});
const stockOf = async (id: number) => (await m.database.db.selectFrom('cheeses').select('stock_grams').where('id', '=', id).executeTakeFirstOrThrow()).stock_grams;

describe('the orders service', () => {
  it('places an order, taking its stock, and gives the stock back when it is cancelled', async () => {
    const customer = await m.customer();
    const before = await stockOf(cheeseId);
    const order = await m.modules.orders.provides.orders.place(placement(1500), customer, m.context(customer));
    expect(order.status).toBe('placed');
    expect(order.items).toMatchObject([{ cheeseId, quantityKg: 1.5 }]);
    expect(await stockOf(cheeseId)).toBe(before - 1500);

    await m.modules.orders.provides.orders.cancel(order.id, customer, m.context(customer));
    expect((await m.modules.orders.provides.orders.get(order.id, customer)).status).toBe('cancelled');
    expect(await stockOf(cheeseId)).toBe(before);
  });

  it('shows a customer only their own orders; staff see every one', async () => {
    const owner = await m.customer();
    const stranger = await m.customer();
    const order = await m.modules.orders.provides.orders.place(placement(1000), owner, m.context(owner));
    await expect(m.modules.orders.provides.orders.get(order.id, stranger)).rejects.toBeInstanceOf(NotFoundError);
    expect((await m.modules.orders.provides.orders.list(stranger, orderQueryOf({ limit: 50 }))).items.map((o) => o.id)).not.toContain(order.id);
    expect((await m.modules.orders.provides.orders.get(order.id, await m.admin())).id).toBe(order.id);
  });
});
