import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { RequestHook } from '../kernel/request-stage.js';

/** What a browser page on an allowed origin may send and read (credentials travel in headers, never cookies). */
const ALLOWED_HEADERS = ['Authorization', 'X-API-Key', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Confirm-Delete', 'X-Request-Id'];
const EXPOSED_HEADERS = ['X-Request-Id', 'ETag', 'Link', 'Location', 'X-Total-Count', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Deprecation', 'Idempotent-Replayed'];

const originSet = (origins: string[]) => new Set(origins.map((origin) => new URL(origin).origin));

/**
 * CORS for the configured browser origins only. Any other origin, and a request without
 * one, gets no CORS header at all; an OPTIONS from them is answered 204 with `Allow`, so a
 * developer whose origin is not configured reads "no Access-Control-Allow-Origin" in the
 * browser console rather than a misleading 405. A pipeline stage (pipeline.ts).
 */
export function corsPreflight(origins: string[], allowedMethods: (path: string) => string[]): RequestHook {
  const allowed = originSet(origins);
  return (request, reply, next) => {
    if (request.method !== 'OPTIONS' || (request.headers.origin !== undefined && allowed.has(request.headers.origin))) return next();
    const methods = allowedMethods(request.url.split('?')[0] ?? '/');
    // An unknown path goes on to the not-found handler (404).
    if (methods.length === 0) return next();
    reply.code(204).header('allow', methods.join(', ')).send();
  };
}

/** @fastify/cors for the configured origins: preflights from them, and the headers of every answer. */
export async function registerCors(app: FastifyInstance, options: { origins: string[] }): Promise<void> {
  const origins = originSet(options.origins);
  const allowedOrigin = (origin: string | undefined) => origin !== undefined && origins.has(origin);
  // Static options with an origin check, so @fastify/cors normalises them once rather than per
  // request (its delegator form did, 1.5% of a cheese read's CPU). An origin not configured gets
  // no CORS header (only `Vary: Origin`, which is right for caches).
  await app.register(cors, {
    origin: (origin, callback) => callback(null, allowedOrigin(origin) ? origin! : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  });
}
