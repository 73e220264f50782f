import type { Fromagerie, RequestLogEntry, RequestLogListQuery } from '@fromagerie/sdk';
import { FromagerieError } from '@fromagerie/sdk';

export interface LogsTailOptions {
  status?: string;
  method?: string;
  path?: string;
  format: 'text' | 'json';
  /** Seconds each poll is held (1 to 25). */
  waitSeconds: number;
  /** Client-side bound of one poll beyond its wait: a half-open connection never stalls the tail. */
  timeoutMs: number;
}

export interface TailIo {
  out(line: string): void;
  err(line: string): void;
  signal: AbortSignal;
  /** Retry pauses: 1, 2, 4 … 30 s. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** Exit codes shared with `listen`: 2 usage or a filter the server refuses, 3 credential refused. */
export const EXIT = { ok: 0, usage: 2, credential: 3, gone: 4 } as const;

const MAX_BACKOFF_MS = 30_000;

/** One line per request: time, status, method, path, duration, credential, request id. */
export function formatEntry(entry: RequestLogEntry, format: 'text' | 'json'): string {
  if (format === 'json') return JSON.stringify(entry);
  const query = entry.query ? `?${entry.query}` : '';
  return `${entry.createdAt}  ${entry.status} ${entry.method.padEnd(6)} ${entry.path}${query}  ${Math.round(entry.durationMs)} ms  ${entry.credential.label}  ${entry.requestId}`;
}

/**
 * `fromagerie logs tail`: long-polls the request log from now on, one line per request, until
 * the signal aborts (Ctrl-C: exit 0). A failed poll (the server restarting, the network gone,
 * the laptop asleep) is retried with backoff from where the last answer ended; only a refused
 * credential (401, 403) or a refused filter (400) ends it.
 */
export async function logsTail(client: Fromagerie, options: LogsTailOptions, io: TailIo): Promise<number> {
  const filters: RequestLogListQuery = {
    ...(options.status !== undefined && { status: options.status }),
    ...(options.method !== undefined && { method: options.method.toUpperCase() as RequestLogListQuery['method'] }),
    ...(options.path !== undefined && { path: options.path }),
  };
  let after = 'now';
  let ready = false;
  let failures = 0;
  while (!io.signal.aborted) {
    const poll = AbortSignal.any([io.signal, AbortSignal.timeout(options.waitSeconds * 1000 + options.timeoutMs)]);
    try {
      const page = await client.requestLogs.list({ ...filters, after, wait: ready ? options.waitSeconds : 0, limit: 100 }, { signal: poll });
      if (!ready) {
        ready = true;
        io.err('Ready: tailing the request log (Ctrl-C to stop).');
      }
      failures = 0;
      for (const entry of page.items) io.out(formatEntry(entry, options.format));
      if (page.nextAfter) after = page.nextAfter;
    } catch (error) {
      if (io.signal.aborted) break;
      if (error instanceof FromagerieError && (error.status === 401 || error.status === 403)) {
        io.err(`The API refused the credential (${error.status}): ${error.message}`);
        return EXIT.credential;
      }
      if (error instanceof FromagerieError && error.status === 400) {
        io.err(`The API refused the filters: ${error.message}`);
        return EXIT.usage;
      }
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** failures);
      failures += 1;
      io.err(`Poll failed (${error instanceof Error ? error.message : String(error)}); retrying in ${delay / 1000} s.`);
      await io.sleep(delay, io.signal);
    }
  }
  return EXIT.ok;
}
