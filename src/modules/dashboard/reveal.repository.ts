import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** The dashboard_reveals table: reveals are found by the hash of their id and their session only. */
export class RevealRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async create(revealHash: string, sessionId: number, now: string, expiresAt: string): Promise<void> {
    await this.db.insertInto('dashboard_reveals').values({ reveal_hash: revealHash, session_id: sessionId, expires_at: expiresAt, created_at: now }).execute();
  }

  /** Marks the reveal consumed if it is this session's, unconsumed and not past its end: true for the one caller that did. */
  async consume(revealHash: string, sessionId: number, now: string): Promise<boolean> {
    const result = await this.db
      .updateTable('dashboard_reveals')
      .set({ consumed_at: now })
      .where('reveal_hash', '=', revealHash)
      .where('session_id', '=', sessionId)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async deleteEnded(now: string): Promise<number> {
    return Number((await this.db.deleteFrom('dashboard_reveals').where('expires_at', '<=', now).executeTakeFirst()).numDeletedRows);
  }
}
