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
const MAX_ENTRIES = 1000;
const MAX_PAYLOAD_BYTES = 512 * 1024;

interface Entry {
  payload: string;
  headers: Record<string, string>;
  storedAt: number;
}

/**
 * Serialised catalogue responses with their ETag, by URL and Accept. Cleared by every
 * committed catalogue write on this instance (CatalogueChanges); `ttlMs` bounds how stale
 * another instance's writes can leave it. Authentication still runs on every request.
 */
export class ResponseCache {
  readonly #entries = new Map<string, Entry>();
  #version = 0;

  constructor(readonly ttlMs: number) {}

  get version(): number {
    return this.#version;
  }

  invalidate(): void {
    this.#version++;
    this.#entries.clear();
  }

  get(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && now - entry.storedAt < this.ttlMs) return entry;
    if (entry) this.#entries.delete(key);
    return undefined;
  }

  set(key: string, entry: Entry): void {
    if (entry.payload.length > MAX_PAYLOAD_BYTES) return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, entry);
  }
}

const keyOf = (request: FastifyRequest) => `${request.url}\n${request.headers.accept ?? ''}`;

export const readCachePlugin = fp<{ cache: ResponseCache }>(async (app: FastifyInstance, { cache }) => {
  if (cache.ttlMs <= 0) return;

  // A preHandler: authentication (an onRequest hook) has already passed, so a hit is never served unauthenticated.
  const lookup = async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'GET') return;
    const entry = cache.get(keyOf(request), Date.now());
    if (!entry) {
      request.readCache = { hit: false, version: cache.version };
      return;
    }
    request.readCache = { hit: true, version: cache.version };
    return reply.headers(entry.headers).send(entry.payload);
  };

  const store = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = request.readCache;
    // A write that committed while this request was reading makes its answer unsafe to keep.
    if (!state || state.hit || reply.statusCode !== 200 || typeof payload !== 'string' || state.version !== cache.version) return payload;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    cache.set(keyOf(request), { payload, headers, storedAt: Date.now() });
    return payload;
  };

  app.addHook('onRoute', (route) => {
    if (!route.config?.readCache) return;
    const toArray = <T>(hook: T | T[] | undefined): T[] => (hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]);
    route.preHandler = [...toArray(route.preHandler), lookup] as typeof route.preHandler;
    route.onSend = [...toArray(route.onSend), store] as typeof route.onSend;
  });
});
