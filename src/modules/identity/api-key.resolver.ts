import { hash } from 'node:crypto';
import { UnauthorizedError } from '../../kernel/errors.js';
import { ExpiringCache } from '../../kernel/expiring-cache.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import { newPrincipal, type CredentialResolver, type PresentedCredential, type Principal } from '../../kernel/principal.js';
import { parseScopes } from '../../kernel/scopes.js';
import type { ApiKeyRepository } from './api-key.repository.js';
import type { Revocation, RevocationHandler } from './credential-revocations.js';
import type { KeyEnvironment } from './identity.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

const KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{43}$/;
// last_used_at is informative; writing it on every request would make reads into writes.
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHED_KEYS = 10_000;

export function keyEnvironmentFor(env: CheeseEnv): KeyEnvironment {
  return env === 'production' ? 'live' : 'test';
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Turns an `sk_…` key into the principal it stands for, or a 401. */
export class ApiKeyResolver implements CredentialResolver, RevocationHandler {
  readonly kind = 'api_key' as const;
  /** Keys whose last_used_at was written lately, so that it is written at most every interval. */
  readonly #touched: ExpiringCache<number, true>;
  /**
   * Resolved keys by hash, for `cacheTtlMs`: authentication without a query per request. A
   * revocation applies at once on every instance (CredentialRevocations calls `drop`); the
   * TTL bounds it only if that message is lost.
   * Only valid keys are cached, so random keys cannot fill it.
   */
  readonly #resolved: ExpiringCache<string, Principal>;

  constructor(
    private readonly options: { keys: ApiKeyRepository; environment: CheeseEnv; cacheTtlMs: number; clock?: Clock },
  ) {
    this.#touched = new ExpiringCache<number, true>({ ttlMs: TOUCH_INTERVAL_MS, max: MAX_CACHED_KEYS, clock: options.clock });
    this.#resolved = new ExpiringCache({ ttlMs: options.cacheTtlMs, max: MAX_CACHED_KEYS, clock: options.clock });
  }

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  claims(credential: PresentedCredential): boolean {
    return credential.token.startsWith('sk_');
  }

  /** Throws (synchronously) for a malformed, wrong-environment or expired key; a promise only when the database is asked. */
  resolve(credential: PresentedCredential): Principal | Promise<Principal> {
    const { environment } = this.options;
    const match = KEY_PATTERN.exec(credential.token);
    if (!match) throw new UnauthorizedError('The API key is malformed.');
    const expected = keyEnvironmentFor(environment);
    if (match[1] !== expected) {
      throw new UnauthorizedError(
        expected === 'live' ? 'Test keys (sk_test_) are refused in production; use an sk_live_ key.' : `Live keys (sk_live_) are refused in ${environment}; use an sk_test_ key.`,
      );
    }
    // Looked up by the SHA-256 of the key: the secret itself is never compared, so timing reveals nothing about it.
    const hash = hashKey(credential.token);
    const now = this.#clock.now();
    const cached = this.#resolved.get(hash);
    if (cached) {
      if (cached.credential.expiresAt !== null && cached.credential.expiresAt <= now) throw new UnauthorizedError('The API key has expired.');
      this.#touch(cached.credential.id, now);
      return cached;
    }
    return this.#load(hash, now);
  }

  async #load(hash: string, now: number): Promise<Principal> {
    const { environment, keys } = this.options;
    const owner = await keys.findOwnerByHash(hash);
    if (!owner || owner.revokedAt !== null) throw new UnauthorizedError('The API key is invalid or has been revoked.');
    const keyExpiresAt = owner.expiresAt === null ? null : Date.parse(owner.expiresAt);
    if (keyExpiresAt !== null && keyExpiresAt <= now) throw new UnauthorizedError('The API key has expired.');
    this.#touch(owner.keyId, now);
    // A roll drops the key from every instance's cache (CredentialRevocations), so it is reloaded as retiring.
    const principal = newPrincipal(owner, parseScopes(owner.scopes), environment, { kind: 'api_key', id: owner.keyId, expiresAt: keyExpiresAt, retiring: owner.rolledAt !== null });
    this.#resolved.set(hash, principal);
    return principal;
  }

  /** A revoked or rolled key, or an account's keys, stop being trusted here. */
  drop(revocation: Revocation): void {
    if (revocation.kind === 'api_key') this.#resolved.forgetWhere((principal) => principal.credential.id === revocation.id);
    else if (revocation.kind === 'account') this.#resolved.forgetWhere((principal) => principal.accountId === revocation.accountId);
  }

  flush(): void {
    this.#resolved.forgetWhere(() => true);
  }

  #touch(keyId: number, now: number): void {
    if (this.#touched.get(keyId)) return;
    this.#touched.set(keyId, true);
    this.options.keys.touch(keyId, new Date(now).toISOString()).catch(() => this.#touched.delete(keyId));
  }
}
