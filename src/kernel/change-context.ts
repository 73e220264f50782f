import type { Principal } from './principal.js';

/** Who asked for a change, and under which request: what services need for ownership and events. */
export interface ChangeContext {
  requestId: string | null;
  /** The acting principal; null when the system acts on its own (jobs, seeding, the operator CLI). */
  principal: Principal | null;
  /**
   * The request's preconditions on the current representation of the resource it changes
   * (If-Match, If-Unmodified-Since, If-None-Match): called inside the write's transaction with
   * the locked current state; throws PreconditionFailedError when they do not hold. Never
   * called for a resource that does not exist (that write is a 404, RFC 9110 §13.2.1).
   */
  precondition?: (current: object) => void;
}

export const SYSTEM_CONTEXT: ChangeContext = Object.freeze({ requestId: null, principal: null });
