import type { Principal } from './principal.js';

/** Who asked for a change, and under which request: what services need for ownership and events. */
export interface ChangeContext {
  requestId: string | null;
  /** The `Idempotency-Key` of the request, when its operation honours one: recorded in the events it causes. */
  idempotencyKey?: string | null;
  /** The acting principal; null when the system acts on its own (jobs, seeding, the operator CLI). */
  principal: Principal | null;
  /**
   * The request's preconditions on the current representation of the resource it changes
   * (If-Match, If-Unmodified-Since, If-None-Match): called inside the write's transaction with
   * the locked current state; throws PreconditionFailedError when they do not hold. Never
   * called for a resource that does not exist (that write is a 404, RFC 9110 §13.2.1).
   */
  precondition?: (current: object) => void;
  /**
   * For a request with an Idempotency-Key: called inside the transaction that creates a
   * resource, with the resource's id (what names it: a username for a customer), so that a
   * retry after a crash between the commit and the answer is answered with it rather than
   * creating it again. Where the resource is read is the route's to say, not the service's.
   * The transaction is the caller's (`Transaction<DB>`; the kernel names no database type).
   * `ownerAccountId`: the account whose data the answer holds when it is not the caller's (a
   * sign-up's new account), so that the stored answer is deleted with that account.
   */
  created?: (trx: unknown, id: string | number, ownerAccountId?: number) => Promise<void>;
}

export const SYSTEM_CONTEXT: ChangeContext = Object.freeze({ requestId: null, principal: null });
