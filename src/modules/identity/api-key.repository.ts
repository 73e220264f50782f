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
  environment: KeyEnvironment;
  scopes: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
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
}

// Never key_hash: it leaves the database only for the equality lookup.
const PUBLIC_COLUMNS = ['id', 'account_id', 'name', 'key_prefix', 'environment', 'scopes', 'expires_at', 'last_used_at', 'created_at', 'updated_at'] as const;

type PublicRow = {
  id: number;
  account_id: number;
  name: string | null;
  key_prefix: string;
  environment: KeyEnvironment;
  scopes: string;
  expires_at: Date | string | null;
  last_used_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
};

function toRecord(row: PublicRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    environment: row.environment,
    scopes: row.scopes,
    expiresAt: toIsoOrNull(row.expires_at),
    lastUsedAt: toIsoOrNull(row.last_used_at),
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
      .select(['k.id as keyId', 'a.id as accountId', 'a.username', 'a.role', 'k.environment', 'k.scopes', 'k.expires_at', 'k.revoked_at'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { expires_at, revoked_at, ...rest } = row;
    return { ...rest, expiresAt: toIsoOrNull(expires_at), revokedAt: toIsoOrNull(revoked_at) };
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

  /** Serialises key creation per account (PostgreSQL row lock; SQLite writers are already serial). */
  async lockAccount(trx: Transaction<DB>, accountId: number): Promise<void> {
    if (isPostgres(trx)) await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
  }

  async countActive(trx: Transaction<DB>, accountId: number, now: string): Promise<number> {
    const row = await trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(
    trx: Transaction<DB>,
    input: { accountId: number; name: string | null; keyPrefix: string; keyHash: string; environment: KeyEnvironment; scopes: string; expiresAt: string | null; createdAt: string },
  ): Promise<ApiKeyRecord> {
    const row = await trx
      .insertInto('api_keys')
      .values({
        account_id: input.accountId,
        name: input.name,
        key_prefix: input.keyPrefix,
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
