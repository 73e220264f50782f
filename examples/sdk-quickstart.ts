// The SDK quick-start of the README: list cheeses, place an order, read its events.
// Run it with FROMAGERIE_API_KEY (a key with read:cheeses, write:orders and read:orders)
// and optionally FROMAGERIE_BASE_URL (default http://127.0.0.1:8080/v2).
import { Fromagerie, FromagerieError } from '@fromagerie/sdk';

const sdk = new Fromagerie({
  apiKey: process.env.FROMAGERIE_API_KEY ?? '',
  baseUrl: process.env.FROMAGERIE_BASE_URL ?? 'http://127.0.0.1:8080/v2',
});

// 1. Browse: the first page, then every hard cheese across pages.
const page = await sdk.cheeses.list({ limit: 5, inStock: true });
console.log(`${page.total} cheeses; first: ${page.items.map((c) => c.name).join(', ')}`);
let hard = 0;
for await (const cheese of sdk.cheeses.listAll({ texture: 'hard', limit: 100 })) if (cheese.status === 'available') hard++;
console.log(`${hard} hard cheeses available`);

// 2. Order half a kilo of the first one in stock (retried safely: one Idempotency-Key per call).
const first = page.items[0];
if (!first?.slug) throw new Error('nothing in stock');
try {
  const order = await sdk.orders.create({
    items: [{ cheeseId: first.slug, quantity_kg: 0.5 }],
    shipping: { method: 'temperature_controlled', address: { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' } },
  });
  console.log(`order ${order.id}: ${order.status}, ${order.total} ${order.currency}`);

  // 3. What happened to it: the event log, filtered to this order. The log lists an event once
  // no transaction begun before it is still open: at once on a quiet server, a moment later on a busy one.
  for (let attempt = 0; attempt < 20; attempt++) {
    const events = await sdk.events.list({ object_type: 'order', object_id: String(order.id) });
    for (const event of events.items) {
      if (event.type === 'order.placed') console.log(`${event.id} ${event.type} at ${event.created_at}, order ${event.data.order_id}`);
    }
    if (events.items.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
} catch (error) {
  // Every API error has a status, a type from a closed list, a message and the request id.
  if (error instanceof FromagerieError) console.error(`${error.status} ${error.type}: ${error.message} (request ${error.requestId})`);
  throw error;
}
