/** A long-polled page: what came, and where the next poll goes on. */
export interface TailPage<T> {
  items: T[];
  nextAfter: string | null;
}

export interface TailLoop {
  /** Where the tail starts (`now` when absent). */
  after?: string;
  signal?: AbortSignal;
  /** A pause after a poll that came back empty, on top of the server's hold (0 by default). */
  pollIntervalMs?: number;
}

export const DEFAULT_WAIT_S = 25;

/** `wait` in whole seconds, 1 to 25. */
export function waitSecondsOf(waitSeconds: number | undefined): number {
  return Math.min(25, Math.max(1, Math.round(waitSeconds ?? DEFAULT_WAIT_S)));
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Every item of a long-polled log (the event log, the request log), oldest first, as it comes:
 * each poll is held by the server until something arrives or its wait ends, and each answer's
 * `nextAfter` is where the next goes on, so nothing is skipped or yielded twice. Ends quietly
 * when `signal` aborts.
 */
export async function* tailPages<T>(poll: (after: string, hold: boolean) => Promise<TailPage<T>>, options: TailLoop): AsyncGenerator<T, void, undefined> {
  const { signal } = options;
  try {
    let after = options.after ?? 'now';
    while (!signal?.aborted) {
      // `now` is pinned by a first poll that is not held: it answers at once with the head, so
      // the tail's start is the moment of the call, not of an answer up to 25 s later.
      const page = await poll(after, after !== 'now');
      for (const item of page.items) yield item;
      if (page.nextAfter) after = page.nextAfter;
      if (page.items.length === 0 && options.pollIntervalMs) await pause(options.pollIntervalMs, signal);
    }
  } catch (error) {
    if (signal?.aborted) return;
    throw error;
  }
}
