import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';

let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const PASSWORD = 'a long enough secret 4 tests';
let seq = 0;
const newCustomer = (extra: Record<string, unknown> = {}) => {
  seq++;
  return { username: `cust.${seq}`, email: `cust${seq}@example.com`, password: PASSWORD, firstName: 'Marie', lastName: 'Dupont', ...extra };
};
const signUp = (json: unknown) => t.http.post('/v2/customer', { json });
async function loggedIn(extra: Record<string, unknown> = {}) {
  const input = newCustomer(extra);
  const created = await signUp(input);
  expect(created.status).toBe(201);
  const login = await t.http.post('/v2/customer/login', { json: { username: input.username, password: input.password } });
  expect(login.status).toBe(200);
  return { input, customer: created.body, token: login.body.token as string, auth: bearer(login.body.token) };
}
const counts = async () => ({
  accounts: (await t.database.db.selectFrom('accounts').select('id').execute()).length,
  outbox: (await t.database.db.selectFrom('outbox').select('id').execute()).length,
});

describe('sign-up (POST /customer)', () => {
  it('creates a bronze customer, answers 201 with Location and no password, and records customer.created', async () => {
    const input = newCustomer({ phone: '+33 1 23 45 67 89' });
    const res = await signUp(input);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v2/customer/${input.username}`);
    expect(res.body).toEqual({
      id: expect.any(Number), username: input.username, firstName: 'Marie', lastName: 'Dupont', email: input.email, phone: '+33 1 23 45 67 89',
      customerStatus: 'bronze', favouriteCheese: null, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
    expect(res.text).not.toContain(PASSWORD);
    const event = await t.database.db.selectFrom('outbox').select(['type', 'data']).where('type', '=', 'customer.created').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(event.data)).toEqual({ customer_id: String(res.body.id), username: input.username, customer_status: 'bronze' });
  });

  it('409 naming the field for a taken username or e-mail, regardless of case; nothing is written', async () => {
    const first = newCustomer();
    expect((await signUp(first)).status).toBe(201);
    const before = await counts();
    const sameName = await signUp({ ...newCustomer(), username: first.username.toUpperCase() });
    expect(sameName.status).toBe(409);
    expect(sameName.body.errors).toEqual([{ field: 'username', message: 'is already registered' }]);
    const sameEmail = await signUp({ ...newCustomer(), email: first.email.toUpperCase() });
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.body.errors).toEqual([{ field: 'email', message: 'is already registered' }]);
    expect(await counts()).toEqual(before);
  });

  it('422 naming the field for a weak password, a reserved or malformed username, or a bad e-mail', async () => {
    const before = await counts();
    const cases: [Record<string, unknown>, string][] = [
      [{ password: 'short' }, 'password'],
      [{ username: 'gouda.lover', password: 'my gouda.lover pass' }, 'password'],
      [{ password: 'aaaaaaaaaaaaaaaa' }, 'password'],
      [{ username: 'logout' }, 'username'],
      [{ username: 'a b' }, 'username'],
      [{ email: 'not-an-address' }, 'email'],
    ];
    for (const [override, field] of cases) {
      const res = await signUp({ ...newCustomer(), ...override });
      expect(res.status, JSON.stringify(override)).toBe(422);
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    }
    expect(await counts()).toEqual(before);
  });
});

describe('reaching /customer/{username}', () => {
  it('a customer reads their own account; another username is 403 whether it exists or not; staff get 404 for unknown', async () => {
    const me = await loggedIn();
    const other = await loggedIn();
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: me.auth })).body.id).toBe(me.customer.id);
    expect((await t.http.get(`/v2/customer/${me.input.username.toUpperCase()}`, { headers: me.auth })).status).toBe(200);
    const existing = await t.http.get(`/v2/customer/${other.input.username}`, { headers: me.auth });
    const missing = await t.http.get('/v2/customer/no.such.person', { headers: me.auth });
    expect([existing.status, missing.status]).toEqual([403, 403]);
    expect(existing.body).toEqual(missing.body);
    expect((await t.http.get(`/v2/customer/${other.input.username}`, { headers: staff })).status).toBe(200);
    expect((await t.http.get('/v2/customer/no.such.person', { headers: staff })).status).toBe(404);
  });

  it('an API key of the customer with read:profile works too (api_key is listed)', async () => {
    const me = await loggedIn();
    const made = await t.http.post('/v2/api-keys', { headers: me.auth, json: { scopes: ['read:profile'] } });
    expect(made.status).toBe(201);
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: apiKey(made.body.key) })).status).toBe(200);
  });
});

describe('favourite cheese, by reference or by name', () => {
  it('by id or slug answers {cheeseId, name}; by name answers {name}; an unknown cheese is 422; a deleted one stays by name', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: staff, json: { name: 'Favourite Tomme' } })).body;
    const bySlug = await signUp(newCustomer({ favouriteCheese: { cheeseId: cheese.slug } }));
    expect(bySlug.status).toBe(201);
    expect(bySlug.body.favouriteCheese).toEqual({ cheeseId: cheese.id, name: 'Favourite Tomme' });
    const byName = await signUp(newCustomer({ favouriteCheese: { name: 'Grandma\'s Stilton' } }));
    expect(byName.body.favouriteCheese).toEqual({ name: 'Grandma\'s Stilton' });
    const unknown = await signUp(newCustomer({ favouriteCheese: { cheeseId: 999999 } }));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ field: 'favouriteCheese.cheeseId', message: 'no cheese 999999' }]);

    expect((await t.http.delete(`/v2/cheeses/${cheese.id}`, { headers: { ...staff, 'x-confirm-delete': 'true' } })).status).toBe(204);
    const after = await t.http.get(`/v2/customer/${bySlug.body.username}`, { headers: staff });
    expect(after.body.favouriteCheese).toEqual({ name: 'Favourite Tomme' });
  });
});

describe('PUT /customer/{username}', () => {
  it('replaces the profile; a new password ends the other sessions, not this one; customer.updated lists what changed', async () => {
    const me = await loggedIn({ phone: '+44 20 7946 0000' });
    const otherSession = (await t.http.post('/v2/customer/login', { json: { username: me.input.username, password: PASSWORD } })).body.token;
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: bearer(otherSession) })).status).toBe(200);
    const res = await t.http.put(`/v2/customer/${me.input.username}`, {
      headers: me.auth,
      json: { username: me.input.username, email: me.input.email, password: 'a brand new passphrase!', currentPassword: PASSWORD, firstName: 'Marie-Anne' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ firstName: 'Marie-Anne', lastName: null, phone: null });
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: me.auth })).status).toBe(200);
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: bearer(otherSession) })).status).toBe(401);
    expect((await t.http.post('/v2/customer/login', { json: { username: me.input.username, password: PASSWORD } })).status).toBe(401);
    expect((await t.http.post('/v2/customer/login', { json: { username: me.input.username, password: 'a brand new passphrase!' } })).status).toBe(200);
    const event = await t.database.db.selectFrom('outbox').select('data').where('type', '=', 'customer.updated').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(event.data).changed).toEqual(['firstName', 'lastName', 'phone', 'password']);
  });

  it('the username cannot change (422), and another customer\'s e-mail is 409', async () => {
    const me = await loggedIn();
    const other = await loggedIn();
    const rename = await t.http.put(`/v2/customer/${me.input.username}`, { headers: me.auth, json: { ...me.input, username: 'renamed.user' } });
    expect(rename.status).toBe(422);
    const steal = await t.http.put(`/v2/customer/${me.input.username}`, { headers: me.auth, json: { ...me.input, email: other.input.email } });
    expect(steal.status).toBe(409);
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: me.auth })).body.email).toBe(me.input.email);
  });
});

describe('DELETE /customer/{username}', () => {
  it('removes the account and revokes its tokens and keys at once', async () => {
    const me = await loggedIn();
    const key = (await t.http.post('/v2/api-keys', { headers: me.auth, json: { scopes: ['read:cheeses'] } })).body.key;
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(200);
    expect((await t.http.delete(`/v2/customer/${me.input.username}`, { headers: me.auth })).status).toBe(204);
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: me.auth })).status).toBe(401);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: apiKey(key) })).status).toBe(401);
    expect((await t.http.get(`/v2/customer/${me.input.username}`, { headers: staff })).status).toBe(404);
    const rows = await t.database.db.selectFrom('customer_profiles').select('account_id').where('account_id', '=', me.customer.id).execute();
    expect(rows).toHaveLength(0);
  });

  it('a customer cannot delete another (403); staff can, logged in (bearer_auth: API keys close no account)', async () => {
    const me = await loggedIn();
    const other = await loggedIn();
    expect((await t.http.delete(`/v2/customer/${other.input.username}`, { headers: me.auth })).status).toBe(403);
    expect((await t.http.delete(`/v2/customer/${other.input.username}`, { headers: staff })).status).toBe(401);
    const admin = (await t.http.post('/v2/customer/login', { json: { username: 'admin', password: 'test-staff-password' } })).body.token;
    expect((await t.http.delete(`/v2/customer/${other.input.username}`, { headers: bearer(admin) })).status).toBe(204);
  });
});
