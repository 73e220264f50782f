import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { hashKey } from '../../src/modules/identity/api-key.resolver.js';
import { processEnvFor } from '../helpers/database.js';

/** OAuth clients registered by staff, the secret shown once (customer issue, "OAuth 2.0 authorization server"). */
let t: TestApp;
let staff: Record<string, string>;
beforeAll(async () => {
  ({ t, auth: staff } = await createAdminTestApp());
});
afterAll(() => t.close());

const register = (json: Record<string, unknown>, headers = staff) => t.http.post('/v2/oauth-clients', { headers, json });
const spa = { name: 'Shop SPA', type: 'public', redirectUris: ['https://shop.example/callback'], grants: ['authorization_code', 'refresh_token'], scopes: ['read:cheeses', 'write:orders'] };
const backend = { name: 'Warehouse sync', type: 'confidential', grants: ['client_credentials'], scopes: ['read:cheeses', 'write:cheeses'] };
const count = async () => (await t.database.db.selectFrom('oauth_clients').select('id').execute()).length;

describe('registering OAuth clients', () => {
  it('a confidential client gets a secret once, stored only as a hash; a public one gets none', async () => {
    const confidential = await register(backend);
    expect(confidential.status).toBe(201);
    expect(confidential.headers.get('cache-control')).toBe('no-store');
    expect(confidential.body).toMatchObject({ ...backend, redirectUris: [], clientId: expect.stringMatching(/^cl_[\w-]{22}$/), clientSecret: expect.stringMatching(/^cs_[\w-]{43}$/) });
    const row = await t.database.db.selectFrom('oauth_clients').select(['secret_hash']).where('id', '=', confidential.body.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).toBe(hashKey(confidential.body.clientSecret));
    const listed = await t.http.get('/v2/oauth-clients', { headers: staff });
    expect(JSON.stringify(listed.body)).not.toContain(confidential.body.clientSecret);
    expect(listed.body.items.find((c: any) => c.id === confidential.body.id)).not.toHaveProperty('clientSecret');

    const pub = await register(spa);
    expect(pub.status).toBe(201);
    expect(pub.body.clientSecret).toBeNull();
  });

  it('422 naming the field for unsafe redirect URIs and impossible grant sets; nothing stored', async () => {
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...spa, redirectUris: ['http://shop.example/callback'] }, 'redirectUris.0'],
      [{ ...spa, redirectUris: ['https://shop.example/cb#frag'] }, 'redirectUris.0'],
      [{ ...spa, redirectUris: ['/relative'] }, 'redirectUris.0'],
      [{ ...spa, redirectUris: [] }, 'redirectUris'],
      [{ ...spa, grants: ['client_credentials'] }, 'grants'],
      [{ ...backend, grants: ['refresh_token'] }, 'grants'],
      [{ ...backend, scopes: ['everything'] }, 'scopes.0'],
    ];
    for (const [json, field] of cases) {
      const res = await register(json);
      expect(res.status, JSON.stringify(json)).toBe(422);
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    }
    expect((await register({ ...spa, redirectUris: ['http://127.0.0.1:8400/callback'] })).status).toBe(201); // a native app's loopback (RFC 8252)
    expect(await count()).toBe(before + 1);
  });

  it('only staff register, list and remove clients', async () => {
    const password = 'a long enough secret 4 tests';
    await t.http.post('/v2/customer', { json: { username: 'not.staff', email: 'not.staff@example.com', password } });
    const customer = bearer((await t.http.post('/v2/customer/login', { json: { username: 'not.staff', password } })).body.token);
    expect((await register(spa, customer)).status).toBe(403);
    expect((await t.http.get('/v2/oauth-clients', { headers: customer })).status).toBe(403);
    const made = await register(spa);
    expect((await t.http.delete(`/v2/oauth-clients/${made.body.id}`, { headers: customer })).status).toBe(403);
    expect((await t.http.delete(`/v2/oauth-clients/${made.body.id}`, { headers: staff })).status).toBe(204);
    expect((await t.http.delete(`/v2/oauth-clients/${made.body.id}`, { headers: staff })).status).toBe(404);
  });

  it('the CLI registers a client: its id, then its secret, alone on the last lines', async () => {
    const env = processEnvFor({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl, databaseSchema: t.config.databaseSchema });
    const { stdout } = await promisify(execFile)(process.execPath, ['bin/fromagerie.js', 'oauth-clients', 'create', '--name', 'POS', '--type', 'confidential', '--grants', 'client_credentials', '--scopes', 'read:cheeses'], { env, timeout: 60_000 });
    const [clientId, secret] = stdout.trim().split('\n').slice(-2);
    expect(clientId).toMatch(/^cl_[\w-]{22}$/);
    expect(secret).toMatch(/^cs_[\w-]{43}$/);
    const listed = await t.http.get('/v2/oauth-clients', { headers: staff });
    expect(listed.body.items.map((c: any) => c.clientId)).toContain(clientId);
  });
});
