import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/** Form B's customer parts: shipping addresses (one default) and the preference profile. */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

let seq = 0;
async function customer() {
  const username = `profile.${++seq}`;
  const password = 'a long enough secret 4 tests';
  expect((await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password } })).status).toBe(201);
  const token = (await t.http.post('/v2/customer/login', { json: { username, password } })).body.token as string;
  return { username, auth: bearer(token) };
}
const home = { label: 'Home', line1: '12 rue des Fromagers', city: 'Lyon', postalCode: '69002', country: 'fr' };
const updatedEvents = async () =>
  (await t.database.db.selectFrom('outbox').select('data').where('type', '=', 'customer.updated').orderBy('id').execute()).map((r) => JSON.parse(r.data));

describe('shipping addresses', () => {
  it('the first address is the default; a new default demotes the old; deleting the default promotes the oldest', async () => {
    const me = await customer();
    const base = `/v2/customer/${me.username}/addresses`;
    const first = await t.http.post(base, { headers: me.auth, json: home });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`${base}/${first.body.id}`);
    expect(first.body).toMatchObject({ ...home, country: 'FR', isDefault: true, line2: null });
    const second = await t.http.post(base, { headers: me.auth, json: { ...home, label: 'Work', line1: '1 place Bellecour' } });
    expect(second.body.isDefault).toBe(false);
    const third = await t.http.post(base, { headers: me.auth, json: { ...home, label: 'Cabin', line1: 'Chemin du Col', isDefault: true } });
    expect(third.body.isDefault).toBe(true);
    const defaults = async () => ((await t.http.get(base, { headers: me.auth })).body.items as { id: number; isDefault: boolean }[]).filter((a) => a.isDefault).map((a) => a.id);
    expect(await defaults()).toEqual([third.body.id]);

    expect((await t.http.delete(`${base}/${third.body.id}`, { headers: me.auth })).status).toBe(204);
    expect(await defaults()).toEqual([first.body.id]);
    const patched = await t.http.request('PATCH', `${base}/${second.body.id}`, { headers: me.auth, json: { isDefault: true, line2: 'Bâtiment B' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ isDefault: true, line2: 'Bâtiment B', line1: '1 place Bellecour' });
    expect(await defaults()).toEqual([second.body.id]);
    expect((await updatedEvents()).at(-1)).toMatchObject({ username: me.username, changed: ['addresses'] });
  });

  it('422 for a country code that does not exist; another customer\'s addresses are 403; an unknown address 404', async () => {
    const me = await customer();
    const other = await customer();
    const base = `/v2/customer/${me.username}/addresses`;
    for (const country of ['XX', 'ZZ', 'F']) {
      const res = await t.http.post(base, { headers: me.auth, json: { ...home, country } });
      expect(res.status, country).toBe(422);
      expect(res.body.errors[0].field).toBe('country');
    }
    expect((await t.http.get(base, { headers: other.auth })).status).toBe(403);
    expect((await t.http.post(base, { headers: other.auth, json: home })).status).toBe(403);
    expect((await t.http.delete(`${base}/999999`, { headers: me.auth })).status).toBe(404);
    expect((await t.http.get(base, { headers: staff })).body.items).toEqual([]);
  });
});

describe('preferences and milk allergies', () => {
  it('defaults, full replacement, and customer.updated naming preferences', async () => {
    const me = await customer();
    const url = `/v2/customer/${me.username}/preferences`;
    expect((await t.http.get(url, { headers: me.auth })).body).toMatchObject({ milkAllergies: [], favouriteMilks: [], maxStinkiness: null, organicOnly: false });
    const put = await t.http.put(url, { headers: me.auth, json: { milkAllergies: ['goat'], favouriteTextures: ['blue'], maxStinkiness: 7 } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ milkAllergies: ['goat'], favouriteTextures: ['blue'], maxStinkiness: 7, favouriteMilks: [], organicOnly: false });
    expect((await t.http.get(url, { headers: me.auth })).body.milkAllergies).toEqual(['goat']);
    expect((await t.http.put(url, { headers: me.auth, json: { milkAllergies: ['camel'] } })).status).toBe(422);
    expect((await t.http.put(url, { headers: me.auth, json: {} })).body.milkAllergies).toEqual([]);
    expect((await updatedEvents()).at(-1)).toMatchObject({ username: me.username, changed: ['preferences'] });
  });
});
