import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose value is a credential, by the names clients and libraries use for
 * them. Credentials travel in headers only and never authenticate from a URL; but a client
 * may still put one there, and URLs end up in logs.
 */
const CREDENTIAL_PARAM = /^(api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd|code|auth|authorization|signature|sig)$/i;
/** An API key anywhere in a URL (path or query), whatever the parameter is called. */
const API_KEY = /sk_(live|test)_[A-Za-z0-9_-]+/g;

function parameterName(pair: string): string {
  const raw = pair.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/** The URL as it may be logged: credential-looking parameters and API keys replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query =
    queryAt === -1
      ? ''
      : `?${url
          .slice(queryAt + 1)
          .split('&')
          .map((pair) => (CREDENTIAL_PARAM.test(parameterName(pair)) && pair.includes('=') ? `${pair.split('=', 1)[0]}=[redacted]` : pair))
          .join('&')}`;
  return `${path}${query}`.replace(API_KEY, 'sk_$1_[redacted]');
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
