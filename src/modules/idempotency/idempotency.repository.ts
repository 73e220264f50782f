import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toBool } from '../../db/columns.js';
import { isPostgres } from '../../db/dialect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError } from '../../kernel/errors.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** Ids per renewal or release statement: far below either database's limit on parameters. */
const IDS_PER_STATEMENT = 500;

export interface StoredReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /** The reply held a secret: `body` is empty and the reply is never replayed. */
  withheld: boolean;
}

/** A request that kept running past its key's lease, after a retry had claimed the key again. */
export class KeyTakenOverError extends ConflictError {
  constructor() {
    super('This request ran past its Idempotency-Key\'s lease and a retry with the same key took over: the retry\'s answer stands. Send the key again to read it.');
  }
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
  /** The running request's lease has run out (by the database's clock): its instance is gone. */
  leaseOver: boolean;
  expiresAt: number;
}

/**
 * Leases are set and judged on the database's clock: on PostgreSQL `now()`, the same for every
 * instance (an instance whose clock runs ahead must not take over a live request's key). SQLite
 * has a single process, whose clock is the database's.
 */
export class IdempotencyRepository {
  readonly #postgres: boolean;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {
    this.#postgres = isPostgres(db);
  }

  #now(): RawBuilder<string> {
    return this.#postgres ? sql<string>`now()` : sql<string>`${this.clock.iso()}`;
  }

  #leaseEnd(leaseMs: number): RawBuilder<string> {
    return this.#postgres ? sql<string>`now() + cast(${Math.round(leaseMs)} as integer) * interval '1 millisecond'` : sql<string>`${new Date(this.clock.now() + leaseMs).toISOString()}`;
  }

  /** Claims the key for a first request, locked for `leaseMs`; undefined when it is already recorded (the unique constraint decides races). */
  async claim(row: { scope: string; key: string; fingerprint: string; credential: string; accountId: number | null; leaseMs: number; now: string; expiresAt: string }): Promise<number | undefined> {
    try {
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({ scope: row.scope, idempotency_key: row.key, fingerprint: row.fingerprint, credential: row.credential, account_id: row.accountId, state: 'running', locked_until: this.#leaseEnd(row.leaseMs), created_at: row.now, expires_at: row.expiresAt })
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
      .select(['id', 'fingerprint', 'state', 'status_code', 'response_headers', 'response_body', 'created_resource', 'credential', 'reply_withheld', 'expires_at'])
      .select(sql<boolean | number>`locked_until <= ${this.#now()}`.as('lease_over'))
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
        leaseOver: toBool(row.lease_over),
        expiresAt: new Date(row.expires_at).getTime(),
      }
    );
  }

  /**
   * Deletes a running record whose lease has run out (its instance died) and that created
   * nothing, so that the retry claims the key afresh under a new id: the record's id is the
   * holder's token. The lapsed holder, should it still be running, then renews, completes or
   * releases an id that no longer exists, and its note of a creation fails (markCreated), so
   * it can never overwrite or delete the new holder's record. False if another retry came first.
   */
  async releaseLapsed(id: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom('idempotency_keys')
      .where('id', '=', id)
      .where('state', '=', 'running')
      .where('created_resource', 'is', null)
      .where('locked_until', '<=', this.#now())
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Extends the leases of the running records this instance holds, in one statement; returns how many. */
  async renew(ids: readonly number[], leaseMs: number): Promise<number> {
    let renewed = 0;
    for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
      const result = await this.db
        .updateTable('idempotency_keys')
        .set({ locked_until: this.#leaseEnd(leaseMs) })
        .where('id', 'in', ids.slice(i, i + IDS_PER_STATEMENT))
        .where('state', '=', 'running')
        .executeTakeFirst();
      renewed += Number(result.numUpdatedRows);
    }
    return renewed;
  }

  /**
   * Frees the running records of requests that will never finish here (the instance is closing):
   * a retry runs at once. A record whose request noted a creation stays, so that the retry is
   * answered with what was created (recover) instead of creating it again.
   */
  async releaseRunning(ids: readonly number[]): Promise<number> {
    let released = 0;
    for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) released += await this.#releaseUncreated(ids.slice(i, i + IDS_PER_STATEMENT));
    return released;
  }

  /**
   * SQLite at boot: one process owns the file, so every running record is a dead process's,
   * freed at once rather than when its lease runs out (records that created something stay, as
   * in `releaseRunning`). Never on PostgreSQL, where running records are other instances' too.
   */
  releaseAllRunning(): Promise<number> {
    return this.#releaseUncreated('all');
  }

  async #releaseUncreated(ids: readonly number[] | 'all'): Promise<number> {
    let query = this.db.deleteFrom('idempotency_keys').where('state', '=', 'running').where('created_resource', 'is', null);
    if (ids !== 'all') query = query.where('id', 'in', ids);
    return Number((await query.executeTakeFirst()).numDeletedRows);
  }

  /**
   * Notes, inside the creating transaction, what the keyed request created; `ownerAccountId`
   * (a sign-up's new account) makes the record go when that account is deleted.
   */
  async markCreated(trx: Transaction<DB>, id: number, resource: string, ownerAccountId?: number): Promise<void> {
    const result = await trx
      .updateTable('idempotency_keys')
      .set({ created_resource: resource, ...(ownerAccountId !== undefined && { account_id: ownerAccountId }) })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    // The key is no longer this request's (its lease lapsed and a retry claimed it afresh): the
    // creation rolls back with its transaction, so the retry's is the only one.
    if (Number(result.numUpdatedRows) !== 1) throw new KeyTakenOverError();
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
