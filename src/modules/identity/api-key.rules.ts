import type { Principal } from '../../kernel/principal.js';
import { coversScopes, hasScope, isReadOnly, ROLE_SCOPES, type Role, type Scope } from '../../kernel/scopes.js';

/**
 * A credential never makes or removes a stronger one (decisions.md, "Privilege"). `actor` is
 * the calling principal, or null for the operator at the console, who may grant whatever the
 * account's role allows. Each rule returns why it refuses, or null.
 */

export interface KeyRequest {
  role: Role;
  scopes: readonly Scope[];
  /** Epoch ms; null = never expires. */
  expiresAt: number | null;
}

/** The expiry a new key gets: the one asked for, or when none is, its creator's (a key never outlives the credential that made it). */
export function effectiveExpiry(actor: Principal | null, requested: number | null): number | null {
  return requested ?? actor?.credential.expiresAt ?? null;
}

/** Rolled keys in their grace period count: 3 active keys, each in the middle of a roll, authenticate as 6. */
export const MAX_AUTHENTICATING_KEYS = 6;

export const FIRST_PARTY_RULE =
  'API keys and OAuth clients are made and managed only with the account\'s own credentials (an API key, a login token, the dashboard, the operator CLI): an OAuth access token, whatever its grant, may not use /v2/api-keys or /v2/oauth-clients.';

export const RETIRING_RULE =
  'This key was rolled and is living out its grace period: a retiring key manages nothing but itself (it may revoke itself), and creates, rolls or revokes no other key and makes no OAuth client or webhook. Use the key that replaced it.';

/** An OAuth access token is a third party's: it never mints or manages a first-party credential. */
export function firstPartyRefusal(actor: Principal | null): string | null {
  return actor?.credential.kind === 'oauth_token' ? FIRST_PARTY_RULE : null;
}

/** A retiring key may only revoke itself (`revokes`: the key a revocation names, if that is the action). */
export function retiringRefusal(actor: Principal | null, revokes?: number): string | null {
  if (!actor?.credential.retiring) return null;
  return actor.credential.kind === 'api_key' && revokes === actor.credential.id ? null : RETIRING_RULE;
}

/**
 * Whether one more key may authenticate: `authenticating` counts the account's keys in this
 * environment that do now (rolled ones in grace included); `retiresNow`: a roll with no grace,
 * whose old key stops at once, so the count stays. Why not, and how to proceed, or null.
 */
export function authenticatingCapRefusal(authenticating: number, retiresNow: boolean): string | null {
  if (authenticating + (retiresNow ? 0 : 1) <= MAX_AUTHENTICATING_KEYS) return null;
  return (
    `At most ${MAX_AUTHENTICATING_KEYS} keys of an account may authenticate at once, rolled keys in their grace period included, and ${authenticating} do: ` +
    'revoke a key you no longer use (a rolled one too: DELETE /v2/api-keys/{id}), or roll with "oldKeyExpiresInSeconds": 0 so the old key stops at once.'
  );
}

export function creationRefusal(actor: Principal | null, request: KeyRequest): string | null {
  const party = firstPartyRefusal(actor) ?? retiringRefusal(actor);
  if (party) return party;
  const roleScopes = new Set(ROLE_SCOPES[request.role]);
  const grantable = actor?.scopes ?? roleScopes;
  if (actor && isReadOnly(actor.scopes)) return 'A read-only credential manages no key but itself.';
  const unavailable = request.scopes.filter((s) => !hasScope(roleScopes, s) || !hasScope(grantable, s));
  if (unavailable.length > 0) return `You cannot grant ${unavailable.join(', ')}: a key never holds more than its owner and its creator may.`;
  const limit = actor?.credential.expiresAt ?? null;
  if (limit !== null && (request.expiresAt === null || request.expiresAt > limit)) {
    return `A key cannot outlive the credential creating it: expiresAt must be at most ${new Date(limit).toISOString()}.`;
  }
  return null;
}

export function revocationRefusal(actor: Principal | null, keyId: number, keyScopes: readonly Scope[]): string | null {
  if (!actor) return null;
  const party = firstPartyRefusal(actor) ?? retiringRefusal(actor, keyId);
  if (party) return party;
  const itself = actor.credential.kind === 'api_key' && actor.credential.id === keyId;
  if (itself) return null;
  if (isReadOnly(actor.scopes)) return 'A read-only credential manages no key but itself.';
  if (!coversScopes(actor.scopes, keyScopes)) return `You cannot revoke a key holding scopes your credential lacks (${keyScopes.join(' ')}).`;
  return null;
}

/** What a key is now: refused for good (revoked), past its expiry, rolled and living out its grace period, or active. */
export type KeyState = 'active' | 'retiring' | 'expired' | 'revoked';

/**
 * A key's state at `now` (epoch ms), the one rule every view of keys shows (the dashboard's
 * status badge): revocation first, then expiry (a rolled key past its grace is expired), then
 * a roll. Only an active key is managed (rolled, revoked) from a list.
 */
export function keyState(key: { revokedAt: string | null; expiresAt: string | null; rolledAt: string | null }, now: number): KeyState {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return 'expired';
  if (key.rolledAt) return 'retiring';
  return 'active';
}
