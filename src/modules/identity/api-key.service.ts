import { instantOf, INSTANT_MESSAGE } from '../../kernel/instants.js';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationFailedError } from '../../kernel/errors.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { Principal } from '../../kernel/principal.js';
import { parseScopes, type Role, type Scope } from '../../kernel/scopes.js';
import { authenticatingCapRefusal, creationRefusal, effectiveExpiry, revocationRefusal } from './api-key.rules.js';
import type { ApiKeyRecord, ApiKeyRepository } from './api-key.repository.js';
import { hashKey, keyEnvironmentFor } from './api-key.resolver.js';
import type { CredentialRevocations } from './credential-revocations.js';

export const MAX_ACTIVE_KEYS = 3;
export { MAX_AUTHENTICATING_KEYS } from './api-key.rules.js';
/** What the dashboard's list shows at most (every state, newest first). */
export const MAX_LISTED_KEYS = 100;
/** How long a rolled key keeps working: now, 1 hour, 24 hours, 7 days. */
export const ROLL_GRACE_SECONDS = [0, 3600, 86400, 604800] as const;
export type RollGraceSeconds = (typeof ROLL_GRACE_SECONDS)[number];
/** The latest instant stored and printed back as written (a lifetime carried past it is cut there). */
const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export interface CreateApiKeyInput {
  name?: string | null;
  scopes: Scope[];
  expiresAt?: string | null;
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key is ever visible. */
  key: string;
}

export interface RollApiKeyInput {
  /** How long the old key keeps working, in seconds: 0 (refused at once), 1 h, 24 h or 7 days. */
  oldKeyExpiresInSeconds: RollGraceSeconds;
}

export interface KeyOwner {
  accountId: number;
  role: Role;
}

/** An API key's life: made (shown once), listed, rolled, revoked. Resolving keys is ApiKeyResolver's job. */
export class ApiKeyService {
  constructor(
    private readonly options: { db: Kysely<DB>; keys: ApiKeyRepository; environment: CheeseEnv; revocations: CredentialRevocations; clock?: Clock },
  ) {}

  /** The app's clock: a key's expiry is judged on the time everything else reads. */
  #now(): string {
    return (this.options.clock ?? systemClock).iso();
  }

  /**
   * `actor` is the calling principal (null: the operator at the console). A key never holds
   * more scopes than its owner's role and its creator, and never outlives its creator.
   */
  async create(owner: KeyOwner, input: CreateApiKeyInput, actor: Principal | null): Promise<CreatedApiKey> {
    const { db, keys } = this.options;
    const now = this.#now();
    // The route's `date-time` format already refuses what is no instant we store (kernel/instants.ts);
    // the operator's CLI comes here without it. Compared as instants, not text.
    const requestedMs = input.expiresAt ? instantOf(input.expiresAt) : null;
    if (input.expiresAt && requestedMs === null) throw ValidationFailedError.field('expiresAt', INSTANT_MESSAGE);
    const requested = requestedMs === null ? null : new Date(requestedMs);
    if (requested && requested.getTime() <= Date.parse(now)) {
      throw ValidationFailedError.field('expiresAt', 'must be in the future');
    }
    const expiry = effectiveExpiry(actor, requested?.getTime() ?? null);
    const refusal = creationRefusal(actor, { role: owner.role, scopes: input.scopes, expiresAt: expiry });
    if (refusal) throw new ForbiddenError(refusal);
    const expiresAt = expiry === null ? null : new Date(expiry);
    const key = this.#newKey();
    const scopes = [...new Set(input.scopes)].sort().join(' ');
    const record = await db.transaction().execute(async (trx) => {
      await keys.lockAccount(trx, owner.accountId);
      const active = await keys.countActive(trx, owner.accountId, now);
      if (active >= MAX_ACTIVE_KEYS) {
        throw new ConflictError(`An account may hold at most ${MAX_ACTIVE_KEYS} active keys; revoke one first (DELETE /v2/api-keys/{id}).`);
      }
      const capped = authenticatingCapRefusal(await keys.countAuthenticating(trx, owner.accountId, keyEnvironmentFor(this.options.environment), now), false);
      if (capped) throw new ConflictError(capped);
      return keys.insert(trx, this.#row(owner.accountId, key, { name: input.name ?? null, scopes, expiresAt: expiresAt ? expiresAt.toISOString() : null, createdAt: now }));
    });
    return { ...record, key };
  }

  /** The keys that still authenticate (rolled ones in their grace period included), oldest first. */
  list(accountId: number): Promise<ApiKeyRecord[]> {
    return this.options.keys.listActive(accountId, this.#now());
  }

  /** Every key of the account (active, rolled, expired, revoked), newest first, at most MAX_LISTED_KEYS. */
  listAll(accountId: number): Promise<ApiKeyRecord[]> {
    return this.options.keys.listAll(accountId, MAX_LISTED_KEYS);
  }

  /** One key of the account, whatever its state; NotFoundError for another account's key or none. */
  async get(accountId: number, keyId: number): Promise<ApiKeyRecord> {
    const record = await this.options.keys.get(this.options.db, accountId, keyId);
    if (!record) throw new NotFoundError(`API key ${keyId} not found.`);
    return record;
  }

  /**
   * Replaces a key: a new one with its name and scopes (shown once), while the old one keeps
   * working for `oldKeyExpiresInSeconds` (never longer than it would have) and no longer counts
   * against MAX_ACTIVE_KEYS, so a roll never fails for that cap; it fails (409) when one more key would
   * authenticate than MAX_AUTHENTICATING_KEYS allows (a roll with no grace never does). The new key lives as long as the
   * old one was made to (its expires_at - created_at), from now; never, if the old never expired.
   * `actor` must be allowed to revoke the old key and to create the new one (null: the operator).
   * One transaction, under the lock `create` takes. 409 for a key revoked, expired or rolled.
   */
  async roll(accountId: number, keyId: number, input: RollApiKeyInput, actor: Principal | null): Promise<{ created: CreatedApiKey; old: ApiKeyRecord }> {
    const { db, keys, revocations } = this.options;
    const grace = input.oldKeyExpiresInSeconds;
    if (!ROLL_GRACE_SECONDS.includes(grace)) throw ValidationFailedError.field('oldKeyExpiresInSeconds', `must be one of ${ROLL_GRACE_SECONDS.join(', ')}`);
    const now = this.#now();
    const nowMs = Date.parse(now);
    const key = this.#newKey();
    const result = await db.transaction().execute(async (trx) => {
      await keys.lockAccount(trx, accountId);
      const old = await keys.get(trx, accountId, keyId);
      // A key of someone else is as unknown as a missing one.
      if (!old) throw new NotFoundError(`API key ${keyId} not found.`);
      const scopes = parseScopes(old.scopes);
      const oldExpiry = old.expiresAt === null ? null : Date.parse(old.expiresAt);
      const newExpiry = oldExpiry === null ? null : Math.min(nowMs + (oldExpiry - Date.parse(old.createdAt)), LAST_INSTANT);
      const revocation = revocationRefusal(actor, keyId, scopes);
      if (revocation) throw new ForbiddenError(revocation);
      const creation = creationRefusal(actor, { role: await keys.roleOf(trx, accountId), scopes, expiresAt: newExpiry });
      if (creation) throw new ForbiddenError(`Rolling makes a new key with the old one's scopes and lifetime, and this credential may not make it: ${creation}`);
      if (old.revokedAt !== null) throw new ConflictError(`API key ${keyId} was revoked (at ${old.revokedAt}): only an active key can be rolled.`);
      if (old.rolledAt !== null) throw new ConflictError(`API key ${keyId} was already rolled (at ${old.rolledAt}): roll the key that replaced it.`);
      if (oldExpiry !== null && oldExpiry <= nowMs) throw new ConflictError(`API key ${keyId} has expired: only an active key can be rolled; create a new one.`);
      // Under the account lock taken above: concurrent rolls of one account's keys count one after another.
      const capped = authenticatingCapRefusal(await keys.countAuthenticating(trx, accountId, keyEnvironmentFor(this.options.environment), now), grace === 0);
      if (capped) throw new ConflictError(capped);
      const oldExpiresAt = new Date(Math.min(oldExpiry ?? Infinity, nowMs + grace * 1000)).toISOString();
      const rolled = await keys.markRolled(trx, accountId, keyId, oldExpiresAt, now);
      if (!rolled) throw new ConflictError(`API key ${keyId} is no longer active: only an active key can be rolled.`);
      // No active-key check: the rolled key left that count and the new one takes its place.
      const created = await keys.insert(trx, this.#row(accountId, key, { name: old.name, scopes: old.scopes, expiresAt: newExpiry === null ? null : new Date(newExpiry).toISOString(), createdAt: now }));
      return { created: { ...created, key }, old: rolled };
    });
    // Its shortened expiry applies at once on every instance.
    await revocations.revoked({ kind: 'api_key', id: keyId });
    return result;
  }

  /**
   * Idempotent; `actor` may revoke only keys its own scopes cover (null: the operator).
   * Answers when the key had already been revoked (then nothing changed), or null.
   */
  async revoke(accountId: number, keyId: number, actor: Principal | null): Promise<{ alreadyRevokedAt: string | null }> {
    const { keys, revocations } = this.options;
    const target = await keys.findOfAccount(accountId, keyId);
    // A key of someone else is as unknown as a missing one.
    if (!target) throw new NotFoundError(`API key ${keyId} not found.`);
    const refusal = revocationRefusal(actor, keyId, parseScopes(target.scopes));
    if (refusal) throw new ForbiddenError(refusal);
    if (target.revokedAt !== null) return { alreadyRevokedAt: target.revokedAt };
    await keys.revoke(accountId, keyId, this.#now());
    await revocations.revoked({ kind: 'api_key', id: keyId });
    return { alreadyRevokedAt: null };
  }

  #newKey(): string {
    return `sk_${keyEnvironmentFor(this.options.environment)}_${randomBytes(32).toString('base64url')}`;
  }

  /** What is stored of a new key: its hash, its first 16 and last 4 characters, never the key. */
  #row(accountId: number, key: string, fields: { name: string | null; scopes: string; expiresAt: string | null; createdAt: string }) {
    return { accountId, keyPrefix: key.slice(0, 16), keyLast4: key.slice(-4), keyHash: hashKey(key), environment: keyEnvironmentFor(this.options.environment), ...fields };
  }
}
