import { FromagerieConnectionError } from './errors.js';

export type FetchLike = (input: Request) => Promise<Response>;

export interface RetryOptions {
  fetch: FetchLike;
  maxRetries: number;
  timeoutMs: number;
}

/** Methods a second attempt cannot do twice (RFC 9110 §9.2.2); a POST or PATCH is retried only with an Idempotency-Key. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A Retry-After longer than this is handed back as the error rather than waited out. */
const MAX_RETRY_AFTER_MS = 60_000;

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Exponential backoff with equal jitter: half the step fixed, half random, so clients that failed together do not retry together. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
  return Math.round(step / 2 + (random() * step) / 2);
}

/** `Retry-After` in delay-seconds or an HTTP date (RFC 9110 §10.2.3), as milliseconds from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A fetch that retries network errors, 408, 429 and 5xx, each attempt under its own
 * `timeoutMs`. Every attempt sends the same bytes and headers, the Idempotency-Key included,
 * so the server can tell a retry from a new request.
 */
export function retryingFetch(options: RetryOptions): FetchLike {
  return async (request) => {
    const body = request.body === null ? null : await request.arrayBuffer();
    const retryable = IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
    const caller = request.signal;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const last = !retryable || attempt >= options.maxRetries;
      let response: Response;
      try {
        const init: RequestInit = { method: request.method, headers: request.headers, body, redirect: request.redirect, signal: AbortSignal.any([caller, timeout]) };
        response = await options.fetch(new Request(request.url, init));
      } catch (error) {
        // The caller's own abort is theirs to handle, never retried nor renamed.
        if (caller.aborted) throw caller.reason ?? error;
        if (last) {
          const what = timeout.aborted ? `no answer within ${options.timeoutMs} ms` : `the request failed (${describe(error)})`;
          throw new FromagerieConnectionError(`${request.method} ${request.url}: ${what}${attempt > 0 ? ` after ${attempt + 1} attempts` : ''}`, { cause: error });
        }
        await sleep(backoffMs(attempt), caller);
        continue;
      }
      if (last || !isRetryableStatus(response.status)) return response;
      const wait = parseRetryAfter(response.headers.get('retry-after')) ?? backoffMs(attempt);
      if (wait > MAX_RETRY_AFTER_MS) return response;
      await response.body?.cancel();
      await sleep(wait, caller);
    }
  };
}

function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : null;
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}
