import http from 'node:http';

/** One request and its answer, as the load generator saw it. */
export interface Exchange {
  op: string;
  method: string;
  path: string;
  /** Sent and settled (epoch ms). */
  t0: number;
  t1: number;
  /** 0: no HTTP answer (`error` says why: ECONNRESET, a timeout, …). */
  status: number;
  error?: string;
  /** HAProxy's server name (X-Chaos-Server), or the instance asked directly. */
  server?: string;
  idempotencyKey?: string;
  attempt?: number;
  body?: unknown;
  etag?: string;
  /** The `RateLimit` and `RateLimit-Policy` fields of the answer (limit-check.ts reads them). */
  rateLimit?: string;
  rateLimitPolicy?: string;
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

const REQUEST_TIMEOUT_MS = 15_000;

/** HTTP to one base URL over keep-alive connections; every exchange is appended to `record`. */
export class Client {
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

  constructor(
    readonly base: string,
    readonly record: Exchange[],
  ) {}

  async send(op: string, method: string, path: string, options: { headers?: Record<string, string>; body?: unknown; idempotencyKey?: string; attempt?: number } = {}): Promise<Answer | undefined> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const exchange: Exchange = { op, method, path, t0: Date.now(), t1: 0, status: 0, idempotencyKey: options.idempotencyKey, attempt: options.attempt };
    this.record.push(exchange);
    try {
      const answer = await this.#request(method, path, headers, payload);
      exchange.status = answer.status;
      exchange.server = header(answer.headers, 'x-chaos-server');
      exchange.etag = header(answer.headers, 'etag');
      exchange.rateLimit = header(answer.headers, 'ratelimit');
      exchange.rateLimitPolicy = header(answer.headers, 'ratelimit-policy');
      exchange.body = answer.json;
      return answer;
    } catch (error) {
      exchange.error = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return undefined;
    } finally {
      exchange.t1 = Date.now();
    }
  }

  close(): void {
    this.#agent.destroy();
  }

  #request(method: string, path: string, headers: Record<string, string>, payload: string | undefined): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const request = http.request(`${this.base}${path}`, { method, headers, agent: this.#agent, timeout: REQUEST_TIMEOUT_MS }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
      });
      request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      request.on('error', reject);
      request.end(payload);
    });
  }
}

function header(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Throws unless the answer is `expected`; for setup steps, where anything else is a broken harness. */
export function expectStatus(answer: Answer | undefined, expected: number, what: string): Answer {
  if (!answer || answer.status !== expected) throw new Error(`${what}: expected ${expected}, got ${answer ? `${answer.status} ${answer.text.slice(0, 500)}` : 'no answer'}`);
  return answer;
}

/** A time the scenario made something fail on purpose (epoch ms): failures inside it are expected. */
export interface FaultWindow {
  name: string;
  start: number;
  end: number;
}
