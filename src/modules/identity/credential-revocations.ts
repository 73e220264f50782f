import { NO_BROADCAST, type ChangeBroadcast } from '../../db/change-broadcast.js';

/** What stops being trusted: one credential, one OAuth grant's tokens, or everything of an account. */
export type Revocation =
  | { kind: 'api_key'; id: number }
  | { kind: 'login_session'; id: number }
  | { kind: 'oauth'; grantId?: number; tokenId?: number }
  | { kind: 'account'; accountId: number; exceptLoginSession: number | null };

/** A cache of resolved credentials (a resolver): drops what a revocation names, or everything. */
export interface RevocationHandler {
  drop(revocation: Revocation): void;
  flush(): void;
}

const KINDS = new Set(['api_key', 'login_session', 'oauth', 'account']);

function parse(payload: string): Revocation | undefined {
  try {
    const value = JSON.parse(payload) as Revocation;
    return value !== null && typeof value === 'object' && KINDS.has(value.kind) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Revocations reach every instance's credential caches: this one's at once, the others' through
 * the change broadcast within milliseconds (one NOTIFY each: revocations are rare). A message
 * that cannot be read, or a broadcast that may have missed some, drops every cached credential:
 * the next request of each looks it up again.
 */
export class CredentialRevocations {
  readonly #handlers: RevocationHandler[] = [];

  constructor(private readonly broadcast: ChangeBroadcast = NO_BROADCAST) {
    broadcast.subscribe('credentials', {
      message: (payload) => {
        const revocation = parse(payload);
        if (revocation) this.#drop(revocation);
        else this.#flush();
      },
      flush: () => this.#flush(),
    });
  }

  handle(handler: RevocationHandler): void {
    this.#handlers.push(handler);
  }

  /** Call once the revocation has committed; resolves when the other instances have been told. */
  async revoked(revocation: Revocation): Promise<void> {
    this.#drop(revocation);
    await this.broadcast.publish('credentials', JSON.stringify(revocation));
  }

  #drop(revocation: Revocation): void {
    for (const handler of this.#handlers) handler.drop(revocation);
  }

  #flush(): void {
    for (const handler of this.#handlers) handler.flush();
  }
}
