import { systemClock } from '../../kernel/clock.js';
import { envelopeOf, signatureHeaders } from '../../modules/webhooks/webhook-signing.module.js';
import { EXIT, Exit } from './connection.js';

/** The receiver's port when `--forward-to` is only a path (`/webhooks`): a local web app's usual one. */
export const DEFAULT_LOCAL_PORT = 3000;

/** `URL`, `PORT` (http://127.0.0.1:PORT/) or `/path` (http://127.0.0.1:3000/path). */
export function forwardTarget(raw: string | undefined): URL {
  if (!raw) throw new Exit(EXIT.usage, '--forward-to is required: a URL, a port (4242) or a path on port 3000 (/webhooks)');
  if (/^[0-9]+$/.test(raw)) {
    if (Number(raw) < 1 || Number(raw) > 65535) throw new Exit(EXIT.usage, `--forward-to ${raw}: a port is 1 to 65535`);
    return new URL(`http://127.0.0.1:${Number(raw)}/`);
  }
  if (raw.startsWith('/')) return new URL(`http://127.0.0.1:${DEFAULT_LOCAL_PORT}${raw}`);
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new Exit(EXIT.usage, `--forward-to ${raw} is neither a URL, a port nor a path`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Exit(EXIT.usage, `--forward-to must be http or https, not ${url.protocol}`);
  return url;
}

/** `-H "Name: value"`, each once or more. */
export function extraHeaders(raw: readonly string[] | undefined): [string, string][] {
  return (raw ?? []).map((line) => {
    const at = line.indexOf(':');
    const name = at > 0 ? line.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Exit(EXIT.usage, `-H ${JSON.stringify(line)}: expected "Name: value"`);
    return [name, line.slice(at + 1).trim()];
  });
}

/** `10s`, `500ms`, `2m` or a bare number of seconds, as milliseconds. */
export function durationMs(raw: string | undefined, fallbackMs: number, flag: string): number {
  if (raw === undefined) return fallbackMs;
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(raw.trim());
  const ms = match ? Number(match[1]) * (match[2] === 'ms' ? 1 : match[2] === 'm' ? 60_000 : 1000) : NaN;
  if (!(ms > 0) || ms > 3_600_000) throw new Exit(EXIT.usage, `${flag} ${raw}: expected a duration such as 10s, 500ms or 2m`);
  return ms;
}

/** The event as the log answers it (the SDK's parse of it): the envelope and `pending_webhooks`. */
export interface LoggedEvent {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
  metadata: unknown;
}

/**
 * The webhook body of an event, made by the server's own serializer: the event log's item is
 * that envelope byte for byte plus `pending_webhooks`, and the stored data and metadata are
 * compact JSON, so serializing the parsed fields again gives the bytes a webhook would carry.
 */
export function bodyOf(event: LoggedEvent): string {
  return envelopeOf({ eventId: event.id, eventType: event.type, createdAt: event.created_at, data: JSON.stringify(event.data), metadata: JSON.stringify(event.metadata) });
}

export type ForwardOutcome = { answered: true; status: number; ms: number; body: string } | { answered: false; reason: string; ms: number };

/**
 * POSTs one event, signed with `secret` as a webhook delivery is (both schemes). Any HTTP
 * answer counts as answered, whatever its status; a receiver that cannot be reached or does
 * not answer within `timeoutMs` is not (the caller retries). `signal` aborts it (Ctrl-C).
 */
export async function forward(target: URL, event: LoggedEvent, secret: string, options: { headers: [string, string][]; timeoutMs: number; signal: AbortSignal }): Promise<ForwardOutcome> {
  const body = bodyOf(event);
  const started = performance.now();
  const headers = new Headers({ 'content-type': 'application/json', 'user-agent': 'fromagerie-cli-listen' });
  for (const [name, value] of Object.entries(signatureHeaders([secret], event.id, body, Math.floor(systemClock.now() / 1000)))) headers.set(name, value);
  for (const [name, value] of options.headers) headers.set(name, value);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await fetch(target, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.any([timeout, options.signal]) });
    const text = await response.text().catch(() => '');
    return { answered: true, status: response.status, ms: Math.round(performance.now() - started), body: text };
  } catch (error) {
    if (options.signal.aborted) throw error;
    const ms = Math.round(performance.now() - started);
    if (timeout.aborted) return { answered: false, reason: `no answer within ${options.timeoutMs} ms`, ms };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { answered: false, reason: cause?.code ?? cause?.message ?? (error as Error).message, ms };
  }
}
