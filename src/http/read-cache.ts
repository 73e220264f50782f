import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A GET whose response depends only on its URL and Accept header, and may be cached. */
    readCache?: boolean;
  }
  interface FastifyRequest {
    readCache?: { hit: boolean; version: number };
  }
}

const REPLAYED_HEADERS = ['content-type', 'etag', 'link', 'vary', 'x-total-count', 'deprecation'];
/** A bookkeeping allowance per entry (Map slots, object headers), so many tiny entries also count. */
const ENTRY_OVERHEAD_BYTES = 256;

interface Entry {
  /** Encoded once: a string would be turned into UTF-8 again on every hit (9 µs for a page of 20). */
  payload: Buffer;
  headers: Record<string, string>;
  storedAt: number;
  bytes: number;
}

/**
 * Serialised catalogue responses with their ETag, by URL and Accept: a least-recently-used
 * cache bounded by bytes (`maxBytes`), so no sequence of distinct URLs can grow it past its
 * budget. Cleared by every committed catalogue write on this instance; `ttlMs` bounds how
 * stale another instance's writes can leave it. Authentication still runs on every request.
 */
export class ResponseCache {
  /** Map order is recency order: a hit moves its entry to the end, eviction takes the front. */
  readonly #entries = new Map<string, Entry>();
  #version = 0;
  #bytes = 0;

  constructor(
    readonly ttlMs: number,
    readonly maxBytes: number,
  ) {}

  get version(): number {
    return this.#version;
  }

  /** Bytes held now (payloads, headers, keys and a per-entry allowance); never above maxBytes. */
  get bytes(): number {
    return this.#bytes;
  }

  invalidate(): void {
    this.#version++;
    this.#entries.clear();
    this.#bytes = 0;
  }

  get(key: string, now: number): Omit<Entry, 'bytes'> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (now - entry.storedAt >= this.ttlMs) {
      this.#bytes -= entry.bytes;
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry;
  }

  set(key: string, value: Omit<Entry, 'bytes'>): void {
    const headerBytes = Object.entries(value.headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
    // Strings are UTF-16 in memory: two bytes a character; the payload is bytes.
    const bytes = 2 * (key.length + headerBytes) + value.payload.length + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes / 8) return; // one entry never takes more than an eighth of the budget
    const previous = this.#entries.get(key);
    if (previous) {
      this.#entries.delete(key);
      this.#bytes -= previous.bytes;
    }
    while (this.#bytes + bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestKey);
      this.#bytes -= oldest.bytes;
    }
    this.#entries.set(key, { ...value, bytes });
    this.#bytes += bytes;
  }
}

const keyOf = (request: FastifyRequest) => `${request.url}\n${request.headers.accept ?? ''}`;

export const readCachePlugin = fp<{ cache: ResponseCache }>(async (app: FastifyInstance, { cache }) => {
  if (cache.ttlMs <= 0 || cache.maxBytes <= 0) return;

  // A preHandler: authentication (an onRequest hook) has already passed, so a hit is never served
  // unauthenticated. Callback style, as the other per-request hooks: a hit answers without `done`
  // (an async hook returning the reply makes Fastify wait on it, a listener per request).
  const lookup = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.method !== 'GET') return done();
    const entry = cache.get(keyOf(request), Date.now());
    if (!entry) {
      request.readCache = { hit: false, version: cache.version };
      return done();
    }
    request.readCache = { hit: true, version: cache.version };
    reply.headers(entry.headers).send(entry.payload);
  };

  const store = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => done(null, kept(request, reply, payload));
  const kept = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = request.readCache;
    // A write that committed while this request was reading makes its answer unsafe to keep.
    if (!state || state.hit || reply.statusCode !== 200 || typeof payload !== 'string' || state.version !== cache.version) return payload;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    cache.set(keyOf(request), { payload: Buffer.from(payload, 'utf8'), headers, storedAt: Date.now() });
    return payload;
  };

  app.addHook('onRoute', (route) => {
    if (!route.config?.readCache) return;
    const toArray = <T>(hook: T | T[] | undefined): T[] => (hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]);
    route.preHandler = [...toArray(route.preHandler), lookup] as typeof route.preHandler;
    route.onSend = [...toArray(route.onSend), store] as typeof route.onSend;
  });
});
