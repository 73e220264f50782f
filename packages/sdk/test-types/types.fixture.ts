// Compiled by test/sdk/sdk-types.test.ts (strict, NodeNext): every @ts-expect-error below must
// still be an error, or tsc reports the directive as unused and the test fails.
import { Fromagerie, FromagerieError, type operations } from '@fromagerie/sdk';

const sdk = new Fromagerie({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:8080/v2' });

export async function wrongPaths(): Promise<void> {
  // @ts-expect-error no such path
  await sdk.raw.GET('/cheese');
  // @ts-expect-error /orders/{id} has no DELETE
  await sdk.raw.DELETE('/orders/{id}', { params: { path: { id: 1 } } });
  // @ts-expect-error a path parameter is required
  await sdk.raw.GET('/cheeses/{cheeseId}');
  await sdk.raw.GET('/cheeses/{cheeseId}', { params: { path: { cheeseId: 'comte-24-mois' } } });
}

export async function wrongBodies(): Promise<void> {
  // @ts-expect-error shipping is required
  await sdk.orders.create({ items: [{ cheeseId: 'comte', quantity_kg: 1 }] });
  // @ts-expect-error no such shipping method
  await sdk.orders.create({ items: [{ cheeseId: 'comte', quantity_kg: 1 }], shipping: { method: 'pigeon', address: { line1: 'a', city: 'b', country: 'FR' } } });
  // @ts-expect-error quantity is a number of kilograms, not text
  await sdk.orders.create({ items: [{ cheeseId: 'comte', quantity_kg: '1' }], shipping: { method: 'standard', address: { line1: 'a', city: 'b', country: 'FR' } } });
  // @ts-expect-error an order's status is one of four
  await sdk.orders.update(1, { status: 'eaten' });
  // @ts-expect-error unknown query parameter
  await sdk.cheeses.list({ colour: 'blue' });
  // @ts-expect-error texture is a closed list
  await sdk.cheeses.list({ texture: 'squeaky' });
}

export async function wrongStatuses(): Promise<void> {
  // @ts-expect-error createOrder answers 201, never 200
  type _Created = operations['createOrder']['responses'][200];
  // @ts-expect-error getCheese has no 418
  type _Teapot = operations['getCheese']['responses'][418];
  const { data, error, response } = await sdk.raw.GET('/cheeses/{cheeseId}', { params: { path: { cheeseId: 'x' } } });
  if (data) {
    const price: number | null = data.pricePerKg;
    // @ts-expect-error a cheese has no such field
    void data.colour;
    void price;
  } else {
    // The error body is the Error schema: its type is the closed enum.
    // @ts-expect-error not a type the API answers
    if (error.type === 'cheese_missing') void response;
  }
}

export function errorTypes(error: unknown): string {
  if (!(error instanceof FromagerieError)) return 'other';
  // @ts-expect-error not one of the closed list
  if (error.type === 'oops') return 'never';
  switch (error.type) {
    case 'not_found':
      return 'missing';
    case 'rate_limited':
      return `retry after ${error.headers.get('retry-after')}`;
    default:
      return error.type;
  }
}
