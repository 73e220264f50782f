import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/kernel/principal.js';
import { authenticatingCapRefusal, creationRefusal, firstPartyRefusal, keyState, MAX_AUTHENTICATING_KEYS, retiringRefusal, revocationRefusal } from '../../src/modules/identity/api-key.rules.js';

/** Issue 28: the pure rules of who manages keys (src/modules/identity/api-key.rules.ts). */
const principal = (credential: Partial<Principal['credential']>): Principal => ({
  accountId: 1,
  username: 'u',
  role: 'admin',
  scopes: new Set(['admin']),
  environment: 'development',
  credential: { kind: 'api_key', id: 7, expiresAt: null, ...credential },
});
const request = { role: 'admin' as const, scopes: ['read:cheeses' as const], expiresAt: null };

describe('first-party credentials only', () => {
  it('refuses an OAuth access token of any grant, whatever its scopes; admits keys, login tokens, sessions and the operator', () => {
    const oauth = principal({ kind: 'oauth_token', grant: { id: 1, clientId: 'cl_x' } });
    expect(firstPartyRefusal(oauth)).toContain('an OAuth access token, whatever its grant');
    expect(creationRefusal(oauth, request)).toContain('an OAuth access token');
    expect(revocationRefusal(oauth, 99, ['read:cheeses'])).toContain('an OAuth access token');
    for (const kind of ['api_key', 'login_token', 'browser_session'] as const) expect(firstPartyRefusal(principal({ kind }))).toBeNull();
    expect(firstPartyRefusal(null)).toBeNull();
  });
});

describe('a retiring key manages nothing but itself', () => {
  const retiring = principal({ retiring: true });
  it('may revoke itself only', () => {
    expect(retiringRefusal(retiring, 7)).toBeNull();
    expect(revocationRefusal(retiring, 7, ['admin'])).toBeNull();
    expect(retiringRefusal(retiring, 8)).toContain('a retiring key manages nothing but itself');
    expect(revocationRefusal(retiring, 8, ['read:cheeses'])).toContain('a retiring key');
    expect(creationRefusal(retiring, request)).toContain('a retiring key');
    expect(retiringRefusal(retiring)).toContain('a retiring key');
  });
  it('an active key is not retiring', () => {
    expect(retiringRefusal(principal({}), 8)).toBeNull();
    expect(creationRefusal(principal({}), request)).toBeNull();
  });
});

describe('the cap on keys that authenticate', () => {
  it('admits a key up to the cap, refuses one past it, and a roll with no grace never adds one', () => {
    expect(authenticatingCapRefusal(MAX_AUTHENTICATING_KEYS - 1, false)).toBeNull();
    expect(authenticatingCapRefusal(MAX_AUTHENTICATING_KEYS, false)).toContain('"oldKeyExpiresInSeconds": 0');
    expect(authenticatingCapRefusal(MAX_AUTHENTICATING_KEYS, true)).toBeNull();
    expect(authenticatingCapRefusal(MAX_AUTHENTICATING_KEYS + 1, true)).toContain(`At most ${MAX_AUTHENTICATING_KEYS}`);
  });
});

describe('keyState: what a key is now (the dashboard badge shows it; issue 31)', () => {
  const now = Date.parse('2026-11-29T12:00:00.000Z');
  const key = (fields: Partial<{ revokedAt: string | null; expiresAt: string | null; rolledAt: string | null }>) => ({ revokedAt: null, expiresAt: null, rolledAt: null, ...fields });
  it('is active without revocation, expiry or roll, and with an expiry still ahead', () => {
    expect(keyState(key({}), now)).toBe('active');
    expect(keyState(key({ expiresAt: '2026-11-29T12:00:01.000Z' }), now)).toBe('active');
  });
  it('is retiring when rolled and inside its grace period, expired once past it (the instant itself included)', () => {
    expect(keyState(key({ rolledAt: '2026-11-29T11:00:00.000Z', expiresAt: '2026-11-29T13:00:00.000Z' }), now)).toBe('retiring');
    expect(keyState(key({ rolledAt: '2026-11-29T11:00:00.000Z', expiresAt: '2026-11-29T12:00:00.000Z' }), now)).toBe('expired');
  });
  it('is revoked whatever else it is', () => {
    expect(keyState(key({ revokedAt: '2026-11-29T11:00:00.000Z', expiresAt: '2026-11-29T10:00:00.000Z', rolledAt: '2026-11-29T09:00:00.000Z' }), now)).toBe('revoked');
  });
});
