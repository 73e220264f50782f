import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer, HttpClient } from '../helpers/http.js';

/**
 * decisions.md §5: concurrent orders never oversell. 200 orders of 1 kg at once, over real
 * HTTP, against 10 kg: exactly 10 are placed. On PostgreSQL, the orders go to two app
 * instances on one database as well.
 */
let t: TestApp;
let staff: Record<string, string>;
let second: { app: FastifyInstance; database: Database; http: HttpClient } | undefined;

beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
  if (t.config.databaseUrl) {
    const database = openDatabase({ ...t.config, poolSize: 4 });
    const app = await buildApp(t.config, { database, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    second = { app, database, http: new HttpClient(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`) };
  }
}, 60_000);
afterAll(async () => {
  await second?.app.close();
  await second?.database.close();
  await t.close();
});

describe('concurrent orders', () => {
  it('200 orders of 1 kg against 10 kg: 10 placed (201), 190 refused (409), stock 0, inventory and orders agree', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Contested Comté', pricePerKg: 30, stockQuantityKg: 10 } })).body;
    const customers = await Promise.all(Array.from({ length: 20 }, () => t.key(['write:orders', 'read:orders'], 'customer')));
    const instances = second ? [t.http, second.http] : [t.http];
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        instances[i % instances.length]!.post('/v2/orders', {
          headers: bearer(customers[i % customers.length]!),
          json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } },
        }).then((res) => res.status),
      ),
    );
    const count = (status: number) => statuses.filter((s) => s === status).length;
    expect({ placed: count(201), refused: count(409), other: statuses.length - count(201) - count(409) }).toEqual({ placed: 10, refused: 190, other: 0 });
    const after = (await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: staff })).body;
    expect(after).toMatchObject({ stockQuantityKg: 0, status: 'sold', inStock: false });
    const orderRows = await t.database.db.selectFrom('order_items').select(({ fn }) => fn.sum<number>('grams').as('grams')).where('cheese_id', '=', cheese.id).executeTakeFirstOrThrow();
    expect(Number(orderRows.grams)).toBe(10_000);
    const inventory = (await t.http.get('/v2/store/inventory', { headers: staff })).body;
    expect(inventory.sold).toBeGreaterThanOrEqual(1);
    const outOfStock = await t.database.db.selectFrom('outbox').select('id').where('type', '=', 'cheese.out_of_stock').where('aggregate_id', '=', String(cheese.id)).execute();
    expect(outOfStock).toHaveLength(1);
  }, 120_000);
});
