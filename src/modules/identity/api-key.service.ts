import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { nowIso } from '../../db/columns.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { Principal } from '../../kernel/principal.js';
import { parseScopes, type Role, type Scope } from '../../kernel/scopes.js';
import { creationRefusal, effectiveExpiry, revocationRefusal } from './api-key.rules.js';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { hashKey, keyEnvironmentFor, type ApiKeyResolver } from './api-key.resolver.js';

export const MAX_ACTIVE_KEYS = 3;

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

/** An API key's life: made (shown once), listed, revoked. Resolving keys is ApiKeyResolver's job. */
export class ApiKeyService {
  constructor(
    private readonly options: { db: Kysely<DB>; keys: ApiKeyRepository; environment: CheeseEnv; resolver: ApiKeyResolver },
  ) {}

  /**
   * `actor` is the calling principal (null: the operator at the console). A key never holds
   * more scopes than its owner's role and its creator, and never outlives its creator.
   */
  async create(owner: KeyOwner, input: CreateApiKeyInput, actor: Principal | null): Promise<CreatedApiKey> {
    const { db, keys, environment } = this.options;
    const now = nowIso();
    // The date-time format admits a leap second (":60") and offsets that carry 9999-12-31 into
    // year 10000: neither is an instant we can store or print back. Compared as instants, not text.
    const requested = input.expiresAt ? new Date(input.expiresAt) : null;
    if (requested && (Number.isNaN(requested.getTime()) || requested.getUTCFullYear() > 9999)) {
      throw ValidationFailedError.field('expiresAt', 'is not a valid instant');
    }
    if (requested && requested.getTime() <= Date.parse(now)) {
      throw ValidationFailedError.field('expiresAt', 'must be in the future');
    }
    const expiry = effectiveExpiry(actor, requested?.getTime() ?? null);
    const refusal = creationRefusal(actor, { role: owner.role, scopes: input.scopes, expiresAt: expiry });
    if (refusal) throw new ForbiddenError(refusal);
    const expiresAt = expiry === null ? null : new Date(expiry);
    const keyEnvironment = keyEnvironmentFor(environment);
    const key = `sk_${keyEnvironment}_${randomBytes(32).toString('base64url')}`;
    const scopes = [...new Set(input.scopes)].sort().join(' ');
    const record = await db.transaction().execute(async (trx) => {
      await keys.lockAccount(trx, owner.accountId);
      const active = await keys.countActive(trx, owner.accountId, now);
      if (active >= MAX_ACTIVE_KEYS) {
        throw new ConflictError(`An account may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first (DELETE /v2/api-keys/{id}).`);
      }
      return keys.insert(trx, {
        accountId: owner.accountId,
        name: input.name ?? null,
        keyPrefix: key.slice(0, 16),
        keyHash: hashKey(key),
        environment: keyEnvironment,
        scopes,
        expiresAt: expiresAt ? expiresAt.toISOString() : null,
        createdAt: now,
      });
    });
    return { ...record, key };
  }

  list(accountId: number): Promise<ApiKeyRecord[]> {
    return this.options.keys.listActive(accountId, nowIso());
  }

  /**
   * Idempotent; `actor` may revoke only keys its own scopes cover (null: the operator).
   * Answers when the key had already been revoked (then nothing changed), or null.
   */
  async revoke(accountId: number, keyId: number, actor: Principal | null): Promise<{ alreadyRevokedAt: string | null }> {
    const { keys, resolver } = this.options;
    const target = await keys.findOfAccount(accountId, keyId);
    // A key of someone else is as unknown as a missing one.
    if (!target) throw new NotFoundError(`API key ${keyId} not found.`);
    const refusal = revocationRefusal(actor, keyId, parseScopes(target.scopes));
    if (refusal) throw new ForbiddenError(refusal);
    if (target.revokedAt !== null) return { alreadyRevokedAt: target.revokedAt };
    await keys.revoke(accountId, keyId, nowIso());
    resolver.forget(keyId);
    return { alreadyRevokedAt: null };
  }
}
