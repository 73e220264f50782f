import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toBool } from '../../db/columns.js';
import { isUniqueViolation } from '../../db/errors.js';

export interface StoredReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /** The reply held a secret: `body` is empty and the reply is never replayed. */
  withheld: boolean;
}

export interface StoredKey {
  id: number;
  fingerprint: string;
  state: 'running' | 'done';
  statusCode: number | null;
  headers: Record<string, string>;
  body: string | null;
  /** What the request created (a path), once its transaction committed. */
  createdResource: string | null;
  /** The credential of the first request (`api_key:12`, `anonymous`); null for none recorded. */
  credential: string | null;
  /** The reply held a secret, which was not stored. */
  replyWithheld: boolean;
  lockedUntil: number;
  expiresAt: number;
}

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Claims the key for a first request; undefined when it is already recorded (the unique constraint decides races). */
  async claim(row: { scope: string; key: string; fingerprint: string; credential: string; accountId: number | null; lockedUntil: string; now: string; expiresAt: string }): Promise<number | undefined> {
    try {
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({ scope: row.scope, idempotency_key: row.key, fingerprint: row.fingerprint, credential: row.credential, account_id: row.accountId, state: 'running', locked_until: row.lockedUntil, created_at: row.now, expires_at: row.expiresAt })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(inserted.id);
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async find(scope: string, key: string): Promise<StoredKey | undefined> {
    const row = await this.db
      .selectFrom('idempotency_keys')
      .select(['id', 'fingerprint', 'state', 'status_code', 'response_headers', 'response_body', 'created_resource', 'credential', 'reply_withheld', 'locked_until', 'expires_at'])
      .where('scope', '=', scope)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    return (
      row && {
        id: Number(row.id),
        fingerprint: row.fingerprint,
        state: row.state,
        statusCode: row.status_code,
        headers: row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {},
        body: row.response_body,
        createdResource: row.created_resource,
        credential: row.credential,
        replyWithheld: toBool(row.reply_withheld),
        lockedUntil: new Date(row.locked_until).getTime(),
        expiresAt: new Date(row.expires_at).getTime(),
      }
    );
  }

  /** Takes over a running record whose lease has run out (its instance died); false if another retry did first. */
  async takeOver(id: number, expectedLockedUntil: number, lockedUntil: string): Promise<boolean> {
    const result = await this.db.updateTable('idempotency_keys').set({ locked_until: lockedUntil }).where('id', '=', id).where('state', '=', 'running').where('locked_until', '=', new Date(expectedLockedUntil).toISOString()).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Notes, inside the creating transaction, what the keyed request created; `ownerAccountId`
   * (a sign-up's new account) makes the record go when that account is deleted.
   */
  async markCreated(trx: Transaction<DB>, id: number, resource: string, ownerAccountId?: number): Promise<void> {
    await trx
      .updateTable('idempotency_keys')
      .set({ created_resource: resource, ...(ownerAccountId !== undefined && { account_id: ownerAccountId }) })
      .where('id', '=', id)
      .execute();
  }

  /** Completes a record still running (a recovery must not overwrite the first request's own answer). */
  async completeIfRunning(id: number, reply: StoredReply): Promise<void> {
    await this.db.updateTable('idempotency_keys').set(completion(reply)).where('id', '=', id).where('state', '=', 'running').execute();
  }

  async complete(id: number, reply: StoredReply): Promise<void> {
    await this.db.updateTable('idempotency_keys').set(completion(reply)).where('id', '=', id).execute();
  }

  async release(id: number): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('id', '=', id).execute();
  }

  async deleteExpired(now: string): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function completion(reply: StoredReply) {
  return { state: 'done' as const, status_code: reply.statusCode, response_headers: JSON.stringify(reply.headers), response_body: reply.withheld ? null : reply.body, reply_withheld: reply.withheld };
}
