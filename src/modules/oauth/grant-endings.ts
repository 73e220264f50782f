import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';

/** Told, inside the transaction that ends them, of OAuth grants that end (revoked, or about to be deleted). */
export type GrantsEndedListener = (trx: Transaction<DB>, grantIds: readonly number[]) => Promise<void>;

/**
 * The "grants ended" port (issue 28): nothing a grant created outlives the grant. Every path
 * that ends one (the customer's revocation, a password change or reset, reuse of a code or a
 * rotated refresh token, RFC 7009, the token pruning) calls `ended` in its own transaction, so
 * what other modules hang off the grant (webhooks) goes in the same commit or not at all.
 * Deleting a client or an account deletes its grants' rows, and webhooks bound to them with
 * them (the foreign key cascades), in that same statement.
 */
export class GrantEndings {
  readonly #listeners: GrantsEndedListener[] = [];

  /** Modules built after oauth subscribe from the composition root. */
  subscribe(listener: GrantsEndedListener): void {
    this.#listeners.push(listener);
  }

  async ended(trx: Transaction<DB>, grantIds: readonly number[]): Promise<void> {
    if (grantIds.length === 0) return;
    for (const listener of this.#listeners) await listener(trx, grantIds);
  }
}
