import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
// Login tokens last 2 s on this clock, which moves only when a test moves it.
const clock = new ManualClock();
beforeAll(async () => {
  t = await createTestApp({ config: { loginTokenTtlSeconds: 2, clock } });
});
afterAll(() => t.close());

const login = (username: string, password: string) => t.http.post('/v2/customer/login', { json: { username, password } });
const sessions = () => t.database.db.selectFrom('login_sessions').select(['id', 'revoked_at']).execute();

describe('login tokens', () => {
  it('logs in with username and password: a JWT that works on bearer operations, with the role\'s scopes', async () => {
    const res = await login('admin', 'test-staff-password');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.token).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    // On the app's clock (it has not moved since the file began): issued now, for 2 s.
    expect(Date.parse(res.body.expiresAt) - clock.now()).toBe(2000);
    // oauth operations take any bearer credential; an admin's token carries every scope.
    const created = await t.http.post('/v2/cheeses', { headers: bearer(res.body.token), json: { name: 'Login Token Tomme' } });
    expect(created.status).toBe(201);
    expect((await t.http.get('/v2/api-keys', { headers: bearer(res.body.token) })).status).toBe(200);
  });

  it('a login token is not an API key: api_key operations refuse it with 401', async () => {
    const { body } = await login('admin', 'test-staff-password');
    const res = await t.http.get('/v2/store/inventory', { headers: bearer(body.token) });
    expect(res.status).toBe(401);
  });

  it('a wrong username and a wrong password get the same 401, and no session', async () => {
    const before = (await sessions()).length;
    const unknown = await login('nobody-here', 'test-staff-password');
    const wrong = await login('admin', 'not-the-password');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
    expect(unknown.body).toEqual({ code: 401, type: 'unauthorized', message: 'Invalid username or password.' });
    expect((await sessions()).length).toBe(before);
  });

  it('logout revokes that token (204), and only that one', async () => {
    const first = (await login('admin', 'test-staff-password')).body.token;
    const second = (await login('admin', 'test-staff-password')).body.token;
    expect((await t.http.get('/v2/api-keys', { headers: bearer(first) })).status).toBe(200); // cached now
    const out = await t.http.get('/v2/customer/logout', { headers: bearer(first) });
    expect(out.status).toBe(204);
    const refused = await t.http.get('/v2/api-keys', { headers: bearer(first) });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toMatch(/revoked/);
    expect((await t.http.get('/v2/api-keys', { headers: bearer(second) })).status).toBe(200);
  });

  it('logout takes a login token only', async () => {
    const key = await t.key(['admin']);
    expect((await t.http.get('/v2/customer/logout', { headers: bearer(key) })).status).toBe(401);
  });

  it('refuses expired, tampered and foreign tokens with 401', async () => {
    const { token } = (await login('admin', 'test-staff-password')).body;
    const [header, payload, signature] = token.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: '999' })).toString('base64url')}.${signature}`;
    const foreign = await new SignJWT({ sid: '1', env: 'development' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('1')
      .setIssuer(t.config.publicUrl)
      .setAudience('fromagerie-api')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another deployment entirely, 32+ bytes'));
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    for (const bad of [tampered, foreign, `${none}x`]) {
      expect((await t.http.get('/v2/api-keys', { headers: bearer(bad) })).status).toBe(401);
    }
    clock.advance(2100);
    const expired = await t.http.get('/v2/api-keys', { headers: bearer(token) });
    expect(expired.status).toBe(401);
    expect(expired.body.message).toMatch(/expired/);
  });
});
