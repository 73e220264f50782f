import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authStages, PrincipalResolver } from '../../src/http/auth.js';
import { use } from '../../src/http/pipeline.js';
import { registerErrorHandling } from '../../src/http/error-handler.js';
import type { CredentialKind, CredentialResolver, PresentedCredential, Principal } from '../../src/kernel/principal.js';

/**
 * Admission is decided by what a credential resolved to, not by how its text looks: an
 * OAuth access token (whatever its format) is not a login token. The resolvers here stand in
 * for the login-token and OAuth ones of the identity module, by their token prefixes.
 */
function resolverFor(kind: CredentialKind, prefix: string): CredentialResolver {
  return {
    kind,
    claims: (credential: PresentedCredential) => credential.token.startsWith(prefix),
    resolve: async (): Promise<Principal> => ({
      accountId: 1,
      username: 'someone',
      role: 'customer',
      scopes: new Set(['read:profile']),
      environment: 'development',
      credential: { kind, id: 1, expiresAt: null },
    }),
  };
}

const app = Fastify();
beforeAll(async () => {
  registerErrorHandling(app, () => []);
  const auth = authStages({ resolver: new PrincipalResolver([resolverFor('oauth_token', 'oat_'), resolverFor('login_token', 'ey')]), refused: undefined });
  app.decorateRequest('principal', null);
  use(app, [{ name: 'authentication', phase: 'onRequest', routes: auth.applies, hook: auth.authenticate }]);
  app.get('/v2/login-only', { config: { auth: { schemes: ['bearer_auth'] } } }, async () => ({ ok: true }));
  app.get('/v2/any-bearer', { config: { auth: { schemes: ['any_bearer'] } } }, async () => ({ ok: true }));
  await app.ready();
});
afterAll(() => app.close());

const get = (url: string, token: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

describe('credential admission', () => {
  it('a bearer_auth (login token) operation refuses an OAuth access token with 401', async () => {
    const res = await get('/v2/login-only', 'oat_abc');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ type: 'unauthorized', message: expect.stringContaining('login token') });
  });

  it('admits a login token there, and both kinds on an oauth operation', async () => {
    expect((await get('/v2/login-only', 'eyJhbGciOi')).statusCode).toBe(200);
    expect((await get('/v2/any-bearer', 'oat_abc')).statusCode).toBe(200);
    expect((await get('/v2/any-bearer', 'eyJhbGciOi')).statusCode).toBe(200);
  });
});
