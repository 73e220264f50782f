import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestHook, RouteFilter, SendHook } from '../kernel/request-stage.js';
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../kernel/clock.js';

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
 * budget. Cleared by every catalogue write, this instance's at once and other instances' as
 * their change broadcast arrives (src/db/change-broadcast.ts, milliseconds; order-driven
 * stock changes within 200 ms); `ttlMs` bounds staleness only if a broadcast is lost. Nothing
 * of this instance's own (the version, storedAt) reaches a header or a body: every instance
 * answers a URL with the same bytes and ETag. Authentication still runs on every request.
 */
export class ResponseCache {
  /** Least recently used evicted first; an expired entry goes when next looked up (no timers). */
  readonly #entries: LRUCache<string, Entry>;
  #version = 0;

  constructor(
    readonly ttlMs: number,
    readonly maxBytes: number,
    /** Entries' ages are read off it (the app's clock). */
    readonly clock: Clock = systemClock,
  ) {
    this.#entries = new LRUCache<string, Entry>({
      // lru-cache refuses a zero bound; a disabled cache (no hooks then) keeps nothing anyway.
      maxSize: Math.max(1, Math.floor(maxBytes)),
      sizeCalculation: (entry) => entry.bytes,
      ttl: ttlMs > 0 ? Math.ceil(ttlMs) : undefined,
      // Its default caches the clock for 1 ms behind a setTimeout: a timer per busy millisecond.
      ttlResolution: 0,
      perf: clock,
    });
  }

  get version(): number {
    return this.#version;
  }

  /** Bytes held now (payloads, headers, keys and a per-entry allowance); never above maxBytes. */
  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  invalidate(): void {
    this.#version++;
    this.#entries.clear();
  }

  /** `_now` is not needed: lru-cache times expiry on its own monotonic clock. */
  get(key: string, _now?: number): Omit<Entry, 'bytes'> | undefined {
    return this.#entries.get(key);
  }

  set(key: string, value: Omit<Entry, 'bytes'>): void {
    const headerBytes = Object.entries(value.headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
    // Strings are UTF-16 in memory: two bytes a character; the payload is bytes.
    const bytes = 2 * (key.length + headerBytes) + value.payload.length + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes / 8) return; // one entry never takes more than an eighth of the budget
    this.#entries.set(key, { ...value, bytes });
  }
}

const keyOf = (request: FastifyRequest) => `${request.url}\n${request.headers.accept ?? ''}`;

/**
 * The read cache's two stages (pipeline.ts) for the routes that declare `config.readCache`:
 * a hit is answered before the handler; a fresh 200 is kept as it is sent. Undefined when
 * the cache is off.
 */
export function readCacheStages(cache: ResponseCache): { applies: RouteFilter; lookup: RequestHook; store: SendHook } | undefined {
  if (cache.ttlMs <= 0 || cache.maxBytes <= 0) return undefined;
  // A preHandler: authentication (onRequest) has already passed, so a hit is never served
  // unauthenticated. A hit answers without `next`.
  const lookup: RequestHook = (request, reply, next) => {
    if (request.method !== 'GET') return next();
    const entry = cache.get(keyOf(request), cache.clock.now());
    if (!entry) {
      request.readCache = { hit: false, version: cache.version };
      return next();
    }
    request.readCache = { hit: true, version: cache.version };
    reply.headers(entry.headers).send(entry.payload);
  };
  const kept = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = request.readCache;
    // A write that committed while this request was reading makes its answer unsafe to keep.
    if (!state || state.hit || reply.statusCode !== 200 || typeof payload !== 'string' || state.version !== cache.version) return payload;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    cache.set(keyOf(request), { payload: Buffer.from(payload, 'utf8'), headers, storedAt: cache.clock.now() });
    return payload;
  };
  return { applies: (route) => Boolean(route.config?.readCache), lookup, store: (request, reply, payload, next) => next(null, kept(request, reply, payload)) };
}
