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

export function creationRefusal(actor: Principal | null, request: KeyRequest): string | null {
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
  const itself = actor.credential.kind === 'api_key' && actor.credential.id === keyId;
  if (itself) return null;
  if (isReadOnly(actor.scopes)) return 'A read-only credential manages no key but itself.';
  if (!coversScopes(actor.scopes, keyScopes)) return `You cannot revoke a key holding scopes your credential lacks (${keyScopes.join(' ')}).`;
  return null;
}
