import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { Role } from '../../kernel/scopes.js';

export interface ActiveSession {
  sessionId: number;
  accountId: number;
  username: string;
  role: Role;
  expiresAt: string;
}

export class LoginSessionRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(accountId: number, expiresAt: string, now: string): Promise<number> {
    const row = await this.db
      .insertInto('login_sessions')
      .values({ account_id: accountId, expires_at: expiresAt, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** The session and its account, when it is neither revoked nor expired at `now`. */
  async findActive(sessionId: number, now: string): Promise<ActiveSession | undefined> {
    const row = await this.db
      .selectFrom('login_sessions as s')
      .innerJoin('accounts as a', 'a.id', 's.account_id')
      .select(['s.id as sessionId', 'a.id as accountId', 'a.username', 'a.role', 's.expires_at'])
      .where('s.id', '=', sessionId)
      .where('s.revoked_at', 'is', null)
      .where('s.expires_at', '>', now)
      .executeTakeFirst();
    if (!row) return undefined;
    const { expires_at, ...rest } = row;
    return { ...rest, expiresAt: toIso(expires_at) };
  }

  /** Every session of the account but `keep` (the one acting, when it is a login). */
  /** Ends the account's login sessions but `keep`; answers how many were ended. */
  async revokeAllOf(trx: Transaction<DB>, accountId: number, keep: number | null, now: string): Promise<number> {
    let query = trx.updateTable('login_sessions').set({ revoked_at: now }).where('account_id', '=', accountId).where('revoked_at', 'is', null);
    if (keep !== null) query = query.where('id', '<>', keep);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  }

  async revoke(sessionId: number, now: string): Promise<void> {
    await this.db.updateTable('login_sessions').set({ revoked_at: now }).where('id', '=', sessionId).where('revoked_at', 'is', null).execute();
  }
}
