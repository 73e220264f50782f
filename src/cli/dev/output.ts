/** One line per fact, as text for a person or, with `--format json`, as a JSON object per line for a program. */
export class Output {
  constructor(private readonly json: boolean) {}

  /** A fact on stdout: `text` for people, `fields` (with `kind`) for programs. */
  line(kind: string, text: string, fields: Record<string, unknown> = {}): void {
    process.stdout.write(this.json ? `${JSON.stringify({ kind, ...fields })}\n` : `${text}\n`);
  }

  /** Something going wrong that the command rides out (a retry): stderr, so stdout stays the record. */
  warn(kind: string, text: string, fields: Record<string, unknown> = {}): void {
    process.stderr.write(this.json ? `${JSON.stringify({ kind, ...fields, message: text })}\n` : `${text}\n`);
  }
}

/** Waits `ms`, or less when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** 1, 2, 4 … 30 s: the n-th retry's delay (n from 0). */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));
}
