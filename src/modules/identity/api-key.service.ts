import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CheeseEnv } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { nowIso } from '../../db/columns.js';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationFailedError } from '../../http/errors.js';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { recordEvents, type EventContext } from '../outbox/outbox.writer.js';
import type { KeyEnvironment } from './identity.table.js';
import type { CredentialResolver, PresentedCredential, Principal } from './principal.js';
import { hasScope, parseScopes, ROLE_SCOPES, type Role, type Scope } from './scopes.js';

export const MAX_ACTIVE_KEYS = 3;
const EXPIRY_WARNING_MS = 7 * 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{43}$/;
// last_used_at is informative; writing it on every request would make reads into writes.
const TOUCH_INTERVAL_MS = 60_000;

export function keyEnvironmentFor(env: CheeseEnv): KeyEnvironment {
  return env === 'production' ? 'live' : 'test';
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface CreateApiKeyInput {
  name?: string | null;
  scopes: Scope[];
  expiresAt?: string | null;
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key is ever visible. */
  key: string;
}

export interface KeyOwner {
  accountId: number;
  role: Role;
}

interface CachedPrincipal {
  principal: Principal;
  keyExpiresAt: number | null;
  cachedUntil: number;
}

const MAX_CACHED_KEYS = 10_000;

export class ApiKeyService implements CredentialResolver {
  readonly kind = 'api_key' as const;
  readonly #lastTouched = new Map<number, number>();
  /**
   * Resolved keys by hash, for `cacheTtlMs`: authentication without a query per request. A
   * revocation applies at once on this instance and within the TTL on the others. Only
   * valid keys are cached, so random keys cannot fill it.
   */
  readonly #resolved = new Map<string, CachedPrincipal>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly keys: ApiKeyRepository,
    private readonly env: CheeseEnv,
    private readonly postgres: boolean,
    private readonly cacheTtlMs: number,
    private readonly events: Omit<EventContext, 'requestId'>,
  ) {}

  /** Records api_key.expiring once for each active key expiring within 7 days (decisions §6). */
  async announceExpiring(now = new Date()): Promise<number> {
    const horizon = new Date(now.getTime() + EXPIRY_WARNING_MS).toISOString();
    return this.db.transaction().execute(async (trx) => {
      const expiring = await this.keys.claimExpiring(trx, now.toISOString(), horizon);
      const events = expiring.map((key) => ({
        type: 'api_key.expiring' as const,
        aggregateType: 'api_key',
        aggregateId: String(key.id),
        data: { api_key_id: String(key.id), account_id: String(key.accountId), prefix: key.keyPrefix, name: key.name, expires_at: key.expiresAt },
      }));
      await recordEvents(trx, events, { ...this.events, requestId: null });
      return expiring.length;
    });
  }

  /**
   * `grantable` is what the caller may hand out: the owner's role scopes, narrowed to the
   * calling credential's scopes when a key is made through the API, so a key can never
   * mint a more powerful key.
   */
  async create(owner: KeyOwner, input: CreateApiKeyInput, grantable: ReadonlySet<Scope>): Promise<CreatedApiKey> {
    const roleScopes = new Set(ROLE_SCOPES[owner.role]);
    const unavailable = input.scopes.filter((s) => !hasScope(roleScopes, s) || !hasScope(grantable, s));
    if (unavailable.length > 0) {
      throw new ForbiddenError(`You cannot grant ${unavailable.join(', ')}: a key never holds more than its owner and its creator may.`);
    }
    const now = nowIso();
    // The date-time format admits a leap second (":60") and offsets that carry 9999-12-31 into
    // year 10000: neither is an instant we can store or print back. Compared as instants, not text.
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt.getUTCFullYear() > 9999)) {
      throw ValidationFailedError.field('expiresAt', 'is not a valid instant');
    }
    if (expiresAt && expiresAt.getTime() <= Date.parse(now)) {
      throw ValidationFailedError.field('expiresAt', 'must be in the future');
    }
    const environment = keyEnvironmentFor(this.env);
    const key = `sk_${environment}_${randomBytes(32).toString('base64url')}`;
    const scopes = [...new Set(input.scopes)].sort().join(' ');
    const record = await this.db.transaction().execute(async (trx) => {
      await this.keys.lockAccount(trx, owner.accountId, this.postgres);
      const active = await this.keys.countActive(trx, owner.accountId, now);
      if (active >= MAX_ACTIVE_KEYS) {
        throw new ConflictError(`An account may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first (DELETE /v2/api-keys/{id}).`);
      }
      return this.keys.insert(trx, {
        accountId: owner.accountId,
        name: input.name ?? null,
        keyPrefix: key.slice(0, 16),
        keyHash: hashKey(key),
        environment,
        scopes,
        expiresAt: expiresAt ? expiresAt.toISOString() : null,
        createdAt: now,
      });
    });
    return { ...record, key };
  }

  list(accountId: number): Promise<ApiKeyRecord[]> {
    return this.keys.listActive(accountId, nowIso());
  }

  async revoke(accountId: number, keyId: number): Promise<void> {
    const revoked = await this.keys.revoke(accountId, keyId, nowIso());
    for (const [hash, entry] of this.#resolved) if (entry.principal.credential.id === keyId) this.#resolved.delete(hash);
    if (revoked) return;
    // Revoking twice is a no-op; a key of someone else is as unknown as a missing one.
    if ((await this.keys.isRevoked(accountId, keyId)) === true) return;
    throw new NotFoundError(`API key ${keyId} not found.`);
  }

  claims(credential: PresentedCredential): boolean {
    return credential.token.startsWith('sk_');
  }

  async resolve(credential: PresentedCredential): Promise<Principal> {
    const match = KEY_PATTERN.exec(credential.token);
    if (!match) throw new UnauthorizedError('The API key is malformed.');
    const expected = keyEnvironmentFor(this.env);
    if (match[1] !== expected) {
      throw new UnauthorizedError(
        expected === 'live' ? 'Test keys (sk_test_) are refused in production; use an sk_live_ key.' : `Live keys (sk_live_) are refused in ${this.env}; use an sk_test_ key.`,
      );
    }
    // Looked up by the SHA-256 of the key: the secret itself is never compared, so timing reveals nothing about it.
    const hash = hashKey(credential.token);
    const now = Date.now();
    const cached = this.#resolved.get(hash);
    if (cached && cached.cachedUntil > now) {
      if (cached.keyExpiresAt !== null && cached.keyExpiresAt <= now) throw new UnauthorizedError('The API key has expired.');
      this.#touch(cached.principal.credential.id, now);
      return cached.principal;
    }
    const owner = await this.keys.findOwnerByHash(hash);
    if (!owner || owner.revokedAt !== null) throw new UnauthorizedError('The API key is invalid or has been revoked.');
    const keyExpiresAt = owner.expiresAt === null ? null : Date.parse(owner.expiresAt);
    if (keyExpiresAt !== null && keyExpiresAt <= now) throw new UnauthorizedError('The API key has expired.');
    this.#touch(owner.keyId, now);
    const principal: Principal = {
      accountId: owner.accountId,
      username: owner.username,
      role: owner.role,
      scopes: new Set(parseScopes(owner.scopes)),
      environment: this.env,
      credential: { kind: 'api_key', id: owner.keyId },
    };
    if (this.cacheTtlMs > 0) {
      if (this.#resolved.size >= MAX_CACHED_KEYS) this.#resolved.delete(this.#resolved.keys().next().value!);
      this.#resolved.set(hash, { principal, keyExpiresAt, cachedUntil: now + this.cacheTtlMs });
    }
    return principal;
  }

  #touch(keyId: number, now: number): void {
    const last = this.#lastTouched.get(keyId) ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.#lastTouched.set(keyId, now);
    this.keys.touch(keyId, new Date(now).toISOString()).catch(() => this.#lastTouched.delete(keyId));
  }
}
