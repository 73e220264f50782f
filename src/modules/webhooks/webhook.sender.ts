import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { parseRetryAfter } from './webhook.rules.js';
import type { AddressGuard } from './address.guard.js';

const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** Why it failed, for the attempt log; never a stack trace. */
  error: string | null;
  retryAfterMs: number | null;
}

/**
 * Posts one delivery. The host is resolved here and the connection made to the address that
 * was checked (no second lookup an attacker's DNS could answer differently); redirects are
 * not followed; at most 64 KB of the answer is read; the whole exchange has one deadline.
 */
export class WebhookSender {
  readonly #agents: { http: http.Agent; https: https.Agent };
  readonly #lookup: LookupFunction;

  constructor(private readonly options: { timeoutMs: number; guard: AddressGuard; socketsPerEndpoint: number }) {
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
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const target = new URL(url);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) !== 0 && !this.options.guard.allows(literal)) {
      return Promise.resolve({ ok: false, statusCode: null, latencyMs: 0, error: `${literal} is an address webhooks may not reach`, retryAfterMs: null });
    }
    const secure = target.protocol === 'https:';
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'latencyMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve({ ...result, latencyMs: elapsed() });
      };
      const request = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? this.#agents.https : this.#agents.http,
        lookup: this.#lookup,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Fromagerie-Webhooks/2' },
      });
      const deadline = setTimeout(() => {
        request.destroy();
        finish({ ok: false, statusCode: null, error: `no answer within ${this.options.timeoutMs} ms`, retryAfterMs: null });
      }, this.options.timeoutMs);
      request.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, statusCode: null, error: describe(err), retryAfterMs: null }));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headerOf(response.headers['retry-after']), Date.now()) : null;
        const ok = status >= 200 && status < 300;
        const error = ok ? null : status >= 300 && status < 400 ? `answered ${status}; redirects are not followed` : `answered ${status}`;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The answer's body means nothing to us: beyond 64 KB, stop reading and drop the connection.
          if (read > MAX_RESPONSE_BYTES) {
            response.destroy();
            finish({ ok, statusCode: status, error, retryAfterMs });
          }
        });
        response.on('end', () => finish({ ok, statusCode: status, error, retryAfterMs }));
        response.on('error', () => finish({ ok, statusCode: status, error, retryAfterMs }));
        response.on('close', () => finish({ ok, statusCode: status, error, retryAfterMs }));
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

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRNOTALLOWED') return err.message;
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return 'host not found';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')) return `TLS failure (${err.code})`;
  return err.code ? `request failed (${err.code})` : 'request failed';
}
