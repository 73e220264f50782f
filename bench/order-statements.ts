/**
 * Statements per order on PostgreSQL (`npx tsx bench/order-statements.ts postgres://…`): the
 * real app in-process on a fresh schema, every query the pg driver sends counted, 20 orders
 * placed one at a time (bearer key, then again with an Idempotency-Key), and the SQL of the
 * last order printed. Round trips, not CPU, bound placement on PostgreSQL: this is the count
 * docs/performance.md quotes.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

const url = process.argv[2] ?? process.env.TEST_DATABASE_URL;
if (!url) {
  console.error('usage: tsx bench/order-statements.ts postgres://…');
  process.exit(2);
}
process.env.TEST_DATABASE_URL = url;

const seen: string[] = [];
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : first?.text;
  if (text !== undefined) seen.push(text.replace(/\s+/g, ' ').slice(0, 160));
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const { createAdminTestApp } = await import('../test/helpers/app.js');
const { bearer } = await import('../test/helpers/http.js');
const { t, auth } = await createAdminTestApp();
try {
  const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Counted Comté', pricePerKg: 30, stockQuantityKg: 10_000 } })).body as { id: number };
  const customer = bearer(await t.key(['write:orders', 'read:orders'], 'customer'));
  const body = { items: [{ cheeseId: cheese.id, quantity_kg: 0.5 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Lyon', country: 'FR' } } };
  for (const keyed of [false, true]) {
    let last: string[] = [];
    const before = seen.length;
    for (let i = 0; i < 20; i++) {
      const start = seen.length;
      const headers = keyed ? { ...customer, 'idempotency-key': randomUUID() } : customer;
      const res = await t.http.post('/v2/orders', { headers, json: body });
      if (res.status !== 201) throw new Error(`order refused: ${res.status} ${JSON.stringify(res.body)}`);
      last = seen.slice(start);
    }
    console.log(`\n${keyed ? 'With an Idempotency-Key' : 'Without a key'}: ${((seen.length - before) / 20).toFixed(1)} statements per order; the last order's:`);
    for (const text of last) console.log(`  ${text}`);
  }
} finally {
  await t.close();
}
