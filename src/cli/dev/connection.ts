import { Fromagerie, FromagerieConnectionError, FromagerieError } from '@fromagerie/sdk';

/**
 * The developer commands' exits (issue 30): 2 a usage error or an unknown event kind, 3 the
 * credential refused (401/403), 4 the cursor past the log's retention (410), 1 anything else.
 */
export const EXIT = { failed: 1, usage: 2, refused: 3, gone: 4 } as const;

/** Ends the command with its message (on stderr) and exit code. */
export class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Connection {
  apiBase: string;
  apiKey: string;
}

/** `--api-base`/`--api-key`, else FROMAGERIE_API_BASE/FROMAGERIE_API_KEY; the base defaults to a local server's. */
export function connectionOf(values: { 'api-base'?: string; 'api-key'?: string }, env: NodeJS.ProcessEnv = process.env): Connection {
  const apiBase = values['api-base'] ?? env.FROMAGERIE_API_BASE ?? 'http://127.0.0.1:8080/v2';
  const apiKey = values['api-key'] ?? env.FROMAGERIE_API_KEY ?? '';
  if (!apiKey) throw new Exit(EXIT.usage, 'no API key: set FROMAGERIE_API_KEY or pass --api-key (make one with `fromagerie api-keys create` or in the dashboard)');
  try {
    new URL(apiBase);
  } catch {
    throw new Exit(EXIT.usage, `--api-base/FROMAGERIE_API_BASE is no URL: ${apiBase}`);
  }
  return { apiBase, apiKey };
}

/** The SDK client; no retries of its own where the caller retries (listen's polls). */
export function clientOf(connection: Connection, options: { maxRetries?: number; timeoutMs?: number } = {}): Fromagerie {
  return new Fromagerie({ apiKey: connection.apiKey, baseUrl: connection.apiBase, maxRetries: options.maxRetries ?? 2, timeoutMs: options.timeoutMs ?? 30_000 });
}

/** An API error as the exit it means: 401/403 → 3, 410 → 4, other errors → 1. */
export function exitOf(error: unknown): Exit {
  if (error instanceof Exit) return error;
  if (error instanceof FromagerieError) {
    const detail = `${error.message} (${error.status}${error.requestId ? `, request ${error.requestId}` : ''})`;
    if (error.status === 401 || error.status === 403) return new Exit(EXIT.refused, `the API refused the key: ${detail}`);
    if (error.status === 410) return new Exit(EXIT.gone, `the cursor is past the event log's retention: ${detail}. Start again without --resume/--after (or with --after now)`);
    return new Exit(EXIT.failed, `the API answered an error: ${detail}`);
  }
  if (error instanceof FromagerieConnectionError) return new Exit(EXIT.failed, error.message);
  return new Exit(EXIT.failed, error instanceof Error ? error.message : String(error));
}

/** How long the server holds each poll while nothing is new (its maximum). */
export const WAIT_S = 25;
/** A poll with no answer this long after its hold ends is given up (a half-open connection, a laptop that slept) and made again. */
export const POLL_MARGIN_MS = 10_000;

/** Statuses a poll rides out (the server restarting, overloaded or behind a proxy that lost it). */
export const transient = (error: unknown) => error instanceof FromagerieConnectionError || (error instanceof FromagerieError && (error.status === 408 || error.status === 429 || error.status >= 500));

/** Aborts on Ctrl-C or SIGTERM until `release` is called: a long-running command ends its loop cleanly. */
export function stopOnSignals(): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    release() {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}

export { FromagerieConnectionError, FromagerieError };
