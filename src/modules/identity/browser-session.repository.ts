import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { Role } from '../../kernel/scopes.js';

export interface BrowserSessionRow {
  id: number;
  accountId: number;
  username: string;
  role: Role;
  authenticatedAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

/** The browser sessions table; the token is looked up by its SHA-256 only. */
export class BrowserSessionRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(accountId: number, tokenHash: string, now: string, expiresAt: string): Promise<number> {
    const row = await this.db
      .insertInto('browser_sessions')
      .values({ account_id: accountId, token_hash: tokenHash, authenticated_at: now, last_seen_at: now, expires_at: expiresAt, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** The session with this token hash and its account, if it has not passed its absolute end. */
  async findByHash(tokenHash: string, now: string): Promise<BrowserSessionRow | undefined> {
    const row = await this.db
      .selectFrom('browser_sessions as s')
      .innerJoin('accounts as a', 'a.id', 's.account_id')
      .select(['s.id', 'a.id as accountId', 'a.username', 'a.role', 's.authenticated_at', 's.last_seen_at', 's.expires_at'])
      .where('s.token_hash', '=', tokenHash)
      .where('s.expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    return { id: row.id, accountId: row.accountId, username: row.username, role: row.role, authenticatedAt: toIso(row.authenticated_at), lastSeenAt: toIso(row.last_seen_at), expiresAt: toIso(row.expires_at) };
  }

  async touch(id: number, now: string): Promise<void> {
    await this.db.updateTable('browser_sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
  }

  async markAuthenticated(id: number, now: string): Promise<void> {
    await this.db.updateTable('browser_sessions').set({ authenticated_at: now, last_seen_at: now }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('browser_sessions').where('id', '=', id).execute();
  }

  /** Ends every browser session of the account, in the caller's transaction; answers how many. */
  async deleteAllOf(trx: Transaction<DB>, accountId: number): Promise<number> {
    return Number((await trx.deleteFrom('browser_sessions').where('account_id', '=', accountId).executeTakeFirst()).numDeletedRows);
  }

  /** Sessions past their absolute end, or idle since before `idleSince`. */
  async pruneEnded(now: string, idleSince: string): Promise<number> {
    const result = await this.db
      .deleteFrom('browser_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
