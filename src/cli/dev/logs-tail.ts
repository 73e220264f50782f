import type { Fromagerie, RequestLogEntry } from '@fromagerie/sdk';
import { clientOf, connectionOf, EXIT, Exit, exitOf, FromagerieError, POLL_MARGIN_MS, stopOnSignals, transient, WAIT_S } from './connection.js';
import { backoffMs, Output, pause } from './output.js';
import type { DevValues } from './options.js';

const PAGE = 100;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);


/** One request as a line: time, status, method, path and query, duration, credential, request id. */
export function entryLine(entry: RequestLogEntry): string {
  const query = entry.query ? `?${entry.query}` : '';
  return `${entry.createdAt}  ${entry.status} ${entry.method.padEnd(6)} ${entry.path}${query}  ${Math.round(entry.durationMs)} ms  ${entry.credential.label}  ${entry.requestId}`;
}

/**
 * `fromagerie logs tail`: long-polls the request log from now on, one line per request, with
 * the server applying the filters. A failed poll (the server restarting, the network gone, the
 * laptop asleep) is retried with backoff from where the last answer ended, never fatal; only a
 * refused key (exit 3) or filters the server refuses (exit 2) end it. Ctrl-C: exit 0.
 */
export async function logsTail(values: DevValues): Promise<void> {
  const connection = connectionOf(values);
  const method = values.method?.toUpperCase();
  if (method !== undefined && !METHODS.has(method)) throw new Exit(EXIT.usage, `--method ${values.method}: one of ${[...METHODS].join(', ')}`);
  if (values.status !== undefined && !/^(?:[1-5]xx|[1-5][0-9]{2})$/i.test(values.status)) throw new Exit(EXIT.usage, `--status ${values.status}: a class (4xx) or one status (404)`);
  if (values.path !== undefined && !values.path.startsWith('/')) throw new Exit(EXIT.usage, `--path ${values.path}: a path, starting with / (/v2/orders)`);
  const filters = {
    ...(values.status !== undefined && { status: values.status.toLowerCase() }),
    ...(method !== undefined && { method }),
    ...(values.path !== undefined && { path: values.path }),
  };
  const out = new Output(values.format === 'json');
  const sdk: Fromagerie = clientOf(connection, { maxRetries: 0, timeoutMs: WAIT_S * 1000 + POLL_MARGIN_MS });
  const stop = stopOnSignals();
  let after = 'now';
  let ready = false;
  let failures = 0;
  try {
    while (!stop.signal.aborted) {
      let page: { items: RequestLogEntry[]; nextAfter: string | null };
      try {
        // The first poll answers at once, so Ready comes as soon as the log answered.
        page = await sdk.requestLogs.list({ ...filters, after, wait: ready ? WAIT_S : 0, limit: PAGE } as never, { signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted) break;
        if (transient(error)) {
          const delay = backoffMs(failures++);
          out.warn('poll_failed', `poll failed (${(error as Error).message}); retrying in ${delay / 1000} s`, { error: (error as Error).message, retryInMs: delay });
          await pause(delay, stop.signal);
          continue;
        }
        if (error instanceof FromagerieError && error.status === 400) throw new Exit(EXIT.usage, error.message);
        throw exitOf(error);
      }
      if (failures > 0) out.warn('poll_recovered', `the request log answers again after ${failures} failed poll(s)`, { failures });
      failures = 0;
      if (!ready) {
        ready = true;
        out.line('ready', `Ready: tailing the request log of ${connection.apiBase} (Ctrl-C to stop)`, { apiBase: connection.apiBase, ...filters });
      }
      for (const entry of page.items) out.line('request', entryLine(entry), { ...entry });
      if (page.nextAfter) after = page.nextAfter;
    }
  } finally {
    stop.release();
  }
}
