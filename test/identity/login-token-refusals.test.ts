import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * A login token that fails verification is refused as invalid or expired, whatever the
 * operation takes (issue 17): never "this operation does not take that kind of credential",
 * which would send a developer looking for another kind of credential.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const forged = (issuer: string, secret: string, expiresIn = '1h') =>
  new SignJWT({ sid: '1', env: 'development' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'login-v1' }).setSubject('1').setIssuer(issuer).setAudience('fromagerie-api').setIssuedAt().setExpirationTime(expiresIn).sign(new TextEncoder().encode(secret));

describe('a login token that fails verification', () => {
  // One operation of each scheme kind: api_key only, bearer_auth only, any bearer, keys and bearer.
  const operations = ['GET /v2/cheeses/1', 'GET /v2/customer/logout', 'POST /v2/orders', 'GET /v2/cheeses'];
  it('is answered 401 "invalid" or "expired" on every kind of operation, in either header', async () => {
    const tokens = {
      'another issuer': await forged('https://elsewhere.example', t.config.appSecret),
      'a bad signature': await forged(t.config.publicUrl, 'not-the-secret-not-the-secret-0123456789'),
    };
    for (const [what, token] of Object.entries(tokens)) {
      for (const operation of operations) {
        const [method, path] = operation.split(' ') as [string, string];
        for (const headers of [{ authorization: `Bearer ${token}` }, { 'x-api-key': token }] as Record<string, string>[]) {
          const res = await t.http.request(method, path, { headers, ...(method === 'POST' ? { json: {} } : {}) });
          expect(res.status, `${what}, ${operation}`).toBe(401);
          expect(res.body.message, `${what}, ${operation}`).toMatch(/invalid|expired/i);
          expect(res.body.message, `${what}, ${operation}`).not.toMatch(/kind of credential/);
        }
      }
    }
  });
});
