import { redactQuery, redactText } from '../kernel/redaction.js';
import type { FastifyRequest } from 'fastify';

/**
 * The URL as it may be logged: credential-looking parameters and credential-shaped values
 * replaced (src/kernel/redaction.ts). Credentials travel in headers only and never
 * authenticate from a URL; but a client may still put one there, and URLs end up in logs.
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt === -1) return redactText(url);
  return `${redactText(url.slice(0, queryAt))}?${redactQuery(url.slice(queryAt + 1))}`;
}

/** Fastify's request log serializer, with the URL redacted. */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
