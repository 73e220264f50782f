import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** The two columns a webhook's secrets are sealed in (the second during a webhook's own secret roll). */
export type SealedColumn = 'secret_ciphertext' | 'previous_secret_ciphertext';
export const SEALED_COLUMNS: readonly SealedColumn[] = ['secret_ciphertext', 'previous_secret_ciphertext'];

export interface SealedRow {
  id: number;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
}

/** The webhooks table's sealed secrets, for re-sealing them under the current APP_SECRET (never for signing: that is the dispatcher's claim). */
export class WebhookSecretsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Up to `limit` webhooks after `afterId`, in id order (a walk that holds no lock across rows). */
  async sealedAfter(afterId: number, limit: number): Promise<SealedRow[]> {
    return this.db.selectFrom('webhooks').select(['id', 'secret_ciphertext', 'previous_secret_ciphertext']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  }

  async sealedOf(id: number): Promise<SealedRow | undefined> {
    return this.db.selectFrom('webhooks').select(['id', 'secret_ciphertext', 'previous_secret_ciphertext']).where('id', '=', id).executeTakeFirst();
  }

  /**
   * Compare and set: `column` becomes `next` only if it still holds `old`, so a secret rolled
   * (or re-sealed by another run) meanwhile is never overwritten. `updated_at` is left alone:
   * the webhook did not change, only how its secret is stored.
   */
  async replaceSealed(id: number, column: SealedColumn, old: string, next: string): Promise<boolean> {
    const result = await this.db.updateTable('webhooks').set({ [column]: next }).where('id', '=', id).where(column, '=', old).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
