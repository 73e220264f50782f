import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** Strong ETag over the exact bytes sent, so each representation (JSON, CSV) has its own. */
function etagOf(payload: string | Buffer): string {
  return `"${createHash('sha1').update(payload).digest('base64url')}"`;
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

/** ETag and If-None-Match (2.3.1) for every successful GET whose body is already serialised. */
export function registerConditionalGet(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    // Answers to a credential are the caller's: never kept by a shared cache, always revalidated.
    if (request.principal && !reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
    // A response replayed from the read cache carries its ETag already.
    const etag = (reply.getHeader('etag') as string | undefined) ?? etagOf(payload);
    reply.header('etag', etag);
    const ifNoneMatch = request.headers['if-none-match'];
    if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, etag)) {
      reply.code(304);
      reply.removeHeader('content-length');
      reply.removeHeader('content-type');
      return '';
    }
    return payload;
  });
}
