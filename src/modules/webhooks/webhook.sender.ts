import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parseRetryAfter } from './webhook.rules.js';
import type { AddressGuard } from './address.guard.js';
import type { ErrorClass } from './webhook.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { noTracing, type Tracing } from '../../kernel/tracing.js';

const MAX_RESPONSE_BYTES = 64 * 1024;
/** What the attempt log keeps of an answer's body (decisions: the dashboard's attempt detail). */
export const KEPT_RESPONSE_BYTES = 4096;
const USER_AGENT = 'Fromagerie-Webhooks/2';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed, for the attempt log; never a stack trace. */
  error: string | null;
  errorClass: ErrorClass | null;
  retryAfterMs: number | null;
  /** The first KEPT_RESPONSE_BYTES of the answer's body, as text; null when no answer came. */
  responseBody: string | null;
}

/** Every header a delivery is sent with: the caller's (signatures, event id and type, attempt) and ours. */
export function outgoingHeaders(headers: Record<string, string>, body: string): Record<string, string> {
  return { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': USER_AGENT };
}

/** UTF-8 text of what was read, at most KEPT_RESPONSE_BYTES, cut on a character boundary; NUL (which PostgreSQL text refuses) replaced. */
function keptText(chunks: readonly Buffer[]): string {
  const bytes = Buffer.concat(chunks).subarray(0, KEPT_RESPONSE_BYTES);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes, { stream: true }).replaceAll('\u0000', '\ufffd');
  // A replacement character is longer than what it replaces: keep whole characters up to the limit.
  let size = 0;
  let end = 0;
  for (const char of text) {
    size += Buffer.byteLength(char);
    if (size > KEPT_RESPONSE_BYTES) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * Posts one delivery. The host is resolved here and the connection made to the address that
 * was checked (no second lookup an attacker's DNS could answer differently); redirects are
 * not followed; at most 64 KB of the answer is read; the whole exchange has one deadline.
 */
export class WebhookSender {
  readonly #agents: { http: http.Agent; https: https.Agent };
  readonly #lookup: LookupFunction;

  constructor(private readonly options: { timeoutMs: number; guard: AddressGuard; socketsPerEndpoint: number; onResult?: ((result: SendResult) => void) | undefined; clock?: Clock; tracer?: Tracing | undefined }) {
    const agentOptions = { keepAlive: true, maxSockets: options.socketsPerEndpoint, maxFreeSockets: options.socketsPerEndpoint, timeout: options.timeoutMs };
    this.#agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    this.#lookup = (hostname, lookupOptions, callback) => {
      dns.lookup(hostname, { all: true, family: lookupOptions.family ?? 0 }, (err, addresses) => {
        if (err) return callback(err, '', 0);
        const allowed = addresses.filter((entry) => options.guard.allows(entry.address));
        if (allowed.length === 0) return callback(Object.assign(new Error(`${hostname} resolves only to addresses webhooks may not reach`), { code: 'EADDRNOTALLOWED' }), '', 0);
        if (lookupOptions.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
        return callback(null, allowed[0]!.address, allowed[0]!.family);
      });
    };
  }

  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const tracer = this.options.tracer ?? noTracing;
    const sent = tracer.enabled ? this.#tracedSend(tracer, url, headers, body) : this.#send(url, headers, body);
    const { onResult } = this.options;
    if (onResult) void sent.then(onResult);
    return sent;
  }

  /**
   * A CLIENT span per send; the receiver gets its `traceparent`. The URL without its query
   * (a receiver's token often sits there), and no header or body.
   */
  #tracedSend(tracer: Tracing, url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const target = new URL(url);
    const attributes = { 'http.request.method': 'POST', 'url.full': `${target.origin}${target.pathname}`, 'server.address': target.hostname.replace(/^\[|\]$/g, ''), 'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80) };
    return tracer.inSpan(
      'POST',
      attributes,
      async (span) => {
        const traced = { ...headers };
        tracer.inject(traced);
        const result = await this.#send(url, traced, body);
        span.set({ 'http.response.status_code': result.statusCode ?? undefined, 'error.type': result.errorClass ?? undefined });
        if (!result.ok) span.fail(result.error ?? undefined);
        return result;
      },
      'client',
    );
  }

  #send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const target = new URL(url);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && !this.options.guard.allows(literal)) {
      return Promise.resolve({ ok: false, statusCode: null, latencyMs: 0, error: `${literal} is an address webhooks may not reach`, errorClass: 'address_refused', retryAfterMs: null, responseBody: null });
    }
    const secure = target.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'latencyMs' | 'responseBody'>, kept: readonly Buffer[] | null = null) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({ ...result, latencyMs: elapsed(), responseBody: kept ? keptText(kept) : null });
      };
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.#agents.https : this.#agents.http,
        lookup: this.#lookup,
        headers: outgoingHeaders(headers, body),
      });
      const deadline = setTimeout(() => {
        request.destroy();
        finish({ ok: false, statusCode: null, error: `no answer within ${this.options.timeoutMs} ms`, errorClass: 'timeout', retryAfterMs: null });
      }, this.options.timeoutMs);
      request.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, statusCode: null, ...describe(err), retryAfterMs: null }));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headerOf(response.headers['retry-after']), (this.options.clock ?? systemClock).now()) : null;
        const ok = status >= 200 && status < 300;
        const redirect = status >= 300 && status < 400;
        const error = ok ? null : redirect ? `answered ${status}; redirects are not followed` : `answered ${status}`;
        const errorClass: ErrorClass | null = ok ? null : redirect ? 'redirect' : 'http_error';
        const answer = { ok, statusCode: status, error, errorClass, retryAfterMs };
        // Only the first KEPT_RESPONSE_BYTES are kept, for the attempt log.
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (keptBytes < KEPT_RESPONSE_BYTES) {
            kept.push(chunk.subarray(0, KEPT_RESPONSE_BYTES - keptBytes));
            keptBytes += Math.min(chunk.length, KEPT_RESPONSE_BYTES - keptBytes);
          }
          // Beyond 64 KB, stop reading and drop the connection.
          if (read > MAX_RESPONSE_BYTES) {
            response.destroy();
            finish(answer, kept);
          }
        });
        response.on('end', () => finish(answer, kept));
        response.on('error', () => finish(answer, kept));
        response.on('close', () => finish(answer, kept));
      });
      request.end(body);
    });
  }

  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describe(err: NodeJS.ErrnoException): { error: string; errorClass: ErrorClass } {
  if (err.code === 'EADDRNOTALLOWED') return { error: err.message, errorClass: 'address_refused' };
  if (err.code === 'ECONNREFUSED') return { error: 'connection refused', errorClass: 'connection_refused' };
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return { error: 'host not found', errorClass: 'dns' };
  if (err.code === 'ECONNRESET') return { error: 'connection reset', errorClass: 'connection_reset' };
  if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')) return { error: `TLS failure (${err.code})`, errorClass: 'tls' };
  return { error: err.code ? `request failed (${err.code})` : 'request failed', errorClass: 'network' };
}
