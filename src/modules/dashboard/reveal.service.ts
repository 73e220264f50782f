import { createHash, randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../../kernel/clock.js';
import type { RevealRepository } from './reveal.repository.js';

/** How long a reveal waits for its page: the redirect's GET follows at once. */
export const REVEAL_SECONDS = 120;

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');

/**
 * Makes "shown once" the server's word: each reveal gets a random id, recorded as its hash with
 * its session and end; the first page that presents it consumes it, in one conditional update,
 * so a replayed cookie (or two pages at once) finds it spent.
 */
export class RevealLedger {
  constructor(
    private readonly reveals: RevealRepository,
    private readonly clock: Clock = systemClock,
  ) {}

  /** A new reveal of this session; answers its id, to seal with the secret. */
  async open(sessionId: number, now = this.clock.date()): Promise<string> {
    const id = randomBytes(24).toString('base64url');
    await this.reveals.create(hashOf(id), sessionId, now.toISOString(), new Date(now.getTime() + REVEAL_SECONDS * 1000).toISOString());
    return id;
  }

  /** True once: for the first caller, within its time, from its session. */
  consume(id: string, sessionId: number, now = this.clock.date()): Promise<boolean> {
    return this.reveals.consume(hashOf(id), sessionId, now.toISOString());
  }

  /** Rows past their end (an hourly job). */
  prune(now = this.clock.date()): Promise<number> {
    return this.reveals.deleteEnded(now.toISOString());
  }
}
