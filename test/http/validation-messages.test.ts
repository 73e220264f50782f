import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAppError } from '../../src/http/error-handler.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * Issue 18: a 422 says what to do. A union (number >= 0 or null) names the one rule the value
 * broke, not one error per branch and `must match a schema in anyOf`; an enum lists its values;
 * a sign-up names a bad username, e-mail and password in one 422, schema and rules together.
 */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

let seq = 0;
const count = async (table: 'cheeses' | 'orders' | 'accounts' | 'outbox') =>
  Number((await t.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('a union reports the rule of the branch the value fits', () => {
  const PRICE = [{ field: 'pricePerKg', message: 'must be >= 0' }];

  it('POST /v2/cheeses with pricePerKg -1: only "must be >= 0"; nothing is created', async () => {
    const [cheeses, outbox] = [await count('cheeses'), await count('outbox')];
    const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Messages ${++seq}`, pricePerKg: -1, stockQuantityKg: 1, status: 'available' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 422, type: 'validation_failed', message: 'The request body is invalid: pricePerKg must be >= 0.', errors: PRICE });
    expect([await count('cheeses'), await count('outbox')]).toEqual([cheeses, outbox]);
  });

  it('PUT /v2/cheeses with pricePerKg -1: only "must be >= 0"; nothing is changed', async () => {
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Messages ${++seq}`, pricePerKg: 12, stockQuantityKg: 1, status: 'available' } });
    expect(created.status).toBe(201);
    const outbox = await count('outbox');
    const res = await t.http.put('/v2/cheeses', { headers: staff, json: { ...created.body, pricePerKg: -1 } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(PRICE);
    expect(res.body.message).toBe('The request body is invalid: pricePerKg must be >= 0.');
    expect((await t.http.get(`/v2/cheeses/${created.body.id}`, { headers: staff })).body.pricePerKg).toBe(12);
    expect(await count('outbox')).toBe(outbox);
  });

  it('a value of neither type names both, and an enum lists its values', async () => {
    const res = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Messages ${++seq}`, pricePerKg: 'cheap', stockQuantityKg: 1, status: 'bogus' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: 'status', message: 'must be one of: available, pending, sold' },
      { field: 'pricePerKg', message: 'must be number or null' },
    ]);
  });
});

describe('an enum lists the allowed values', () => {
  it('POST /v2/orders with a bad shipping.method; nothing is created', async () => {
    const cheese = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Messages ${++seq}`, pricePerKg: 20, stockQuantityKg: 20, status: 'available' } });
    expect(cheese.status).toBe(201);
    const me = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
    const [orders, outbox] = [await count('orders'), await count('outbox')];
    const res = await t.http.post('/v2/orders', {
      headers: me,
      json: { items: [{ cheeseId: cheese.body.slug, quantity_kg: 1 }], shipping: { method: 'teleport', address: { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' } } },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 422,
      type: 'validation_failed',
      message: 'The request body is invalid: shipping.method must be one of: standard, temperature_controlled, express_chilled.',
      errors: [{ field: 'shipping.method', message: 'must be one of: standard, temperature_controlled, express_chilled' }],
    });
    expect([await count('orders'), await count('outbox')]).toEqual([orders, outbox]);
    expect((await t.http.get(`/v2/cheeses/${cheese.body.id}`, { headers: staff })).body.stockQuantityKg).toBe(20);
  });

  it('an enum written as anyOf of consts (or nullable) gets the same message', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile({
      type: 'object',
      properties: {
        method: { anyOf: [{ const: 'standard' }, { const: 'express_chilled' }] },
        milk: { anyOf: [{ anyOf: [{ const: 'cow' }, { const: 'goat' }] }, { type: 'null' }] },
      },
    });
    expect(validate({ method: 'teleport', milk: 'yak' })).toBe(false);
    const error = toAppError(Object.assign(new Error('invalid'), { validation: validate.errors!, validationContext: 'body' }) as never);
    expect(error?.errors).toEqual([
      { field: 'method', message: 'must be one of: standard, express_chilled' },
      { field: 'milk', message: 'must be one of: cow, goat, null' },
    ]);
  });
});

describe('sign-up names every bad field in one 422', () => {
  it('a bad username, e-mail and password: schema errors and the password rule together; nothing is created', async () => {
    const [accounts, outbox] = [await count('accounts'), await count('outbox')];
    const res = await t.http.post('/v2/customer', { json: { username: 'x', email: 'not-an-email', password: 'aaaaaaaaaaaaaaaa' } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 422, type: 'validation_failed' });
    expect(res.body.errors).toEqual([
      { field: 'username', message: 'must match pattern "^[A-Za-z0-9_.-]{3,64}$"' },
      { field: 'email', message: 'must match format "email"' },
      { field: 'password', message: 'must use at least 4 different characters' },
    ]);
    expect(res.body.message).toBe(
      'The request body is invalid: username must match pattern "^[A-Za-z0-9_.-]{3,64}$"; email must match format "email"; password must use at least 4 different characters.',
    );
    expect([await count('accounts'), await count('outbox')]).toEqual([accounts, outbox]);
  });

  it('a reserved username and a password containing it, with a bad e-mail', async () => {
    const accounts = await count('accounts');
    const res = await t.http.post('/v2/customer', { json: { username: 'Login', email: '@', password: 'my login is long enough' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: 'email', message: 'must match format "email"' },
      { field: 'username', message: 'is reserved' },
      { field: 'password', message: 'must not contain the username' },
    ]);
    expect(await count('accounts')).toBe(accounts);
  });

  it('a password the schema refuses is named once, by the schema', async () => {
    const res = await t.http.post('/v2/customer', { json: { username: `messages.${++seq}`, email: 'nope', password: 'aaa' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['email', 'password']);
  });

  it('rules alone still answer one 422 from the service', async () => {
    const res = await t.http.post('/v2/customer', { json: { username: 'me.too', email: `messages.${++seq}@example.com`, password: 'aaaaaaaaaaaaaaaa' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'password', message: 'must use at least 4 different characters' }]);
  });
});
