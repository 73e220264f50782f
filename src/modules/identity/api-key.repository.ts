import { sql, type Kysely, type Transaction } from 'kysely';
import { claimRows } from '../../db/claim.js';
import { isPostgres } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { toIso, toIsoOrNull } from '../../db/columns.js';
import type { KeyEnvironment } from './identity.table.js';
import type { Role } from '../../kernel/scopes.js';

export interface ApiKeyRecord {
  id: number;
  accountId: number;
  name: string | null;
  keyPrefix: string;
  /** The key's last 4 characters; null for keys made before they were kept. */
  keyLast4: string | null;
  environment: KeyEnvironment;
  scopes: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** When a roll replaced the key: it works until `expiresAt`, outside the active-key cap. */
  rolledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyOwnerRecord {
  keyId: number;
  accountId: number;
  username: string;
  role: Role;
  environment: KeyEnvironment;
  scopes: string;
  expiresAt: string | null;
  revokedAt: string | null;
  rolledAt: string | null;
}

// Never key_hash: it leaves the database only for the equality lookup.
const PUBLIC_COLUMNS = [
  'id',
  'account_id',
  'name',
  'key_prefix',
  'key_last4',
  'environment',
  'scopes',
  'expires_at',
  'last_used_at',
  'revoked_at',
  'rolled_at',
  'created_at',
  'updated_at',
] as const;

type PublicRow = {
  id: number;
  account_id: number;
  name: string | null;
  key_prefix: string;
  key_last4: string | null;
  environment: KeyEnvironment;
  scopes: string;
  expires_at: Date | string | null;
  last_used_at: Date | string | null;
  revoked_at: Date | string | null;
  rolled_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
};

function toRecord(row: PublicRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    keyLast4: row.key_last4,
    environment: row.environment,
    scopes: row.scopes,
    expiresAt: toIsoOrNull(row.expires_at),
    lastUsedAt: toIsoOrNull(row.last_used_at),
    revokedAt: toIsoOrNull(row.revoked_at),
    rolledAt: toIsoOrNull(row.rolled_at),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
}

export class ApiKeyRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async findOwnerByHash(keyHash: string): Promise<ApiKeyOwnerRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .select(['k.id as keyId', 'a.id as accountId', 'a.username', 'a.role', 'k.environment', 'k.scopes', 'k.expires_at', 'k.revoked_at', 'k.rolled_at'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { expires_at, revoked_at, rolled_at, ...rest } = row;
    return { ...rest, expiresAt: toIsoOrNull(expires_at), revokedAt: toIsoOrNull(revoked_at), rolledAt: toIsoOrNull(rolled_at) };
  }

  async listActive(accountId: number, now: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(PUBLIC_COLUMNS)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Every key of the account, whatever its state, newest first. */
  async listAll(accountId: number, limit: number): Promise<ApiKeyRecord[]> {
    const rows = await this.db.selectFrom('api_keys').select(PUBLIC_COLUMNS).where('account_id', '=', accountId).orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** One key of the account, whatever its state; undefined for another account's key or none. */
  async get(executor: Kysely<DB>, accountId: number, keyId: number): Promise<ApiKeyRecord | undefined> {
    const row = await executor.selectFrom('api_keys').select(PUBLIC_COLUMNS).where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The role of the account (what its keys may hold at most). */
  async roleOf(trx: Transaction<DB>, accountId: number): Promise<Role> {
    const row = await trx.selectFrom('accounts').select('role').where('id', '=', accountId).executeTakeFirstOrThrow();
    return row.role;
  }

  /**
   * Marks a key rolled and brings its expiry to `expiresAt` (never later than it was), in the
   * roll's transaction. Only a key still active and not rolled is changed: undefined otherwise.
   */
  async markRolled(trx: Transaction<DB>, accountId: number, keyId: number, expiresAt: string, now: string): Promise<ApiKeyRecord | undefined> {
    const row = await trx
      .updateTable('api_keys')
      .set({ rolled_at: now, expires_at: expiresAt, updated_at: now })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where('rolled_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Serialises key creation per account (PostgreSQL row lock; SQLite writers are already serial). */
  async lockAccount(trx: Transaction<DB>, accountId: number): Promise<void> {
    if (isPostgres(trx)) await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
  }

  /**
   * Keys of the account in this environment that still authenticate at `now`: active ones and
   * rolled ones in their grace period (MAX_AUTHENTICATING_KEYS bounds them).
   */
  countAuthenticating(trx: Transaction<DB>, accountId: number, environment: KeyEnvironment, now: string): Promise<number> {
    return this.#countLive(trx, accountId, now, { environment });
  }

  /** Keys counted against the cap: neither revoked, expired nor rolled (a rolled key lives out its grace outside it). */
  countActive(trx: Transaction<DB>, accountId: number, now: string): Promise<number> {
    return this.#countLive(trx, accountId, now, { unrolled: true });
  }

  /** The account's keys neither revoked nor expired at `now`; only one environment's, only unrolled ones, when asked. */
  async #countLive(trx: Transaction<DB>, accountId: number, now: string, only: { environment?: KeyEnvironment; unrolled?: boolean }): Promise<number> {
    const row = await trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .$if(only.environment !== undefined, (q) => q.where('environment', '=', only.environment!))
      .$if(only.unrolled === true, (q) => q.where('rolled_at', 'is', null))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(
    trx: Transaction<DB>,
    input: {
      accountId: number;
      name: string | null;
      keyPrefix: string;
      keyLast4: string;
      keyHash: string;
      environment: KeyEnvironment;
      scopes: string;
      expiresAt: string | null;
      createdAt: string;
    },
  ): Promise<ApiKeyRecord> {
    const row = await trx
      .insertInto('api_keys')
      .values({
        account_id: input.accountId,
        name: input.name,
        key_prefix: input.keyPrefix,
        key_last4: input.keyLast4,
        key_hash: input.keyHash,
        environment: input.environment,
        scopes: input.scopes,
        expires_at: input.expiresAt,
        created_at: input.createdAt,
        updated_at: input.createdAt,
      })
      .returning(PUBLIC_COLUMNS)
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** Returns false when no active key of that id belongs to the account. */
  async revoke(accountId: number, keyId: number, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now, updated_at: now })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The key's scopes, revoked or not; undefined when the account has no such key. */
  async findOfAccount(accountId: number, keyId: number): Promise<{ scopes: string; revokedAt: string | null } | undefined> {
    const row = await this.db.selectFrom('api_keys').select(['scopes', 'revoked_at']).where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
    return row && { scopes: row.scopes, revokedAt: toIsoOrNull(row.revoked_at) };
  }

  /** Active keys expiring by `horizon` not yet warned about; each is claimed by exactly one caller. */
  async claimExpiring(trx: Transaction<DB>, now: string, horizon: string): Promise<ApiKeyRecord[]> {
    const due = trx
      .selectFrom('api_keys')
      .select('id')
      .where('revoked_at', 'is', null)
      .where('expiry_notified_at', 'is', null)
      .where('expires_at', '>', now)
      .where('expires_at', '<=', horizon);
    const rows = await claimRows(trx, due, (ids) =>
      trx.updateTable('api_keys').set({ expiry_notified_at: now }).where('id', 'in', ids).returning(PUBLIC_COLUMNS),
    );
    return rows.map(toRecord);
  }

  async touch(keyId: number, now: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', keyId).execute();
  }
}
