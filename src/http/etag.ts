import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SendHook } from '../kernel/request-stage.js';
import { PreconditionFailedError } from '../kernel/errors.js';
import { codedTag, codingFor, varyOnCoding } from './compression.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A write answering with one resource: its answer carries the ETag a GET of that resource
     * would (same schema, same bytes), so a client can send it back in If-Match.
     */
    writesResource?: boolean;
  }
}

/** Strong ETag over the exact bytes of the identity representation, so each (JSON, CSV) has its own; a compressed one's is derived from it (compression.ts codedTag). */
export function etagOf(payload: string | Buffer): string {
  return `"${hash('sha1', payload, 'base64url')}"`;
}

/** A tag as sent for the resource in any coding (`"x-br"`): a write's preconditions ask whether the resource changed, not how it travelled. */
const uncoded = (tag: string) => tag.replace(/-(?:br|gzip)"$/, '"');

/** Weak comparison (§13.1.2). A GET compares with its own representation's tag; a write (`anyCoding`) with the resource's in any coding. */
function matches(ifNoneMatch: string, etag: string, anyCoding = false): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return (anyCoding ? uncoded(tag) : tag) === etag;
  });
}

/** If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches; `*` matches any current representation, in any coding. */
function ifMatchHolds(ifMatch: string, current: string): boolean {
  if (ifMatch.trim() === '*') return true;
  return ifMatch.split(',').some((candidate) => !candidate.trim().startsWith('W/') && uncoded(candidate.trim()) === current);
}

/** IMF-fixdate, and the obsolete RFC 850 and asctime forms a recipient must still accept (RFC 9110 §5.6.7). */
const HTTP_DATE = /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/** Milliseconds of an HTTP-date, or null when it is not one (then If-Unmodified-Since is ignored, RFC 9110 §13.1.4). */
function httpDate(value: string | undefined): number | null {
  if (value === undefined || !HTTP_DATE.test(value)) return null;
  const time = Date.parse(value.endsWith(' GMT') ? value : `${value} GMT`);
  return Number.isNaN(time) ? null : time;
}

/** How a write's preconditions see the resource it changes: the schema its GET answers with, and its modification time. */
export interface ConditionalResource {
  schema: Record<string, unknown>;
  lastModified: (current: object) => string;
}

/**
 * The request's preconditions on a write (RFC 9110 §13.2.2: If-Match, else If-Unmodified-Since;
 * then If-None-Match) as a ChangeContext precondition, or undefined when it has none. The
 * service calls it inside its transaction with the locked current resource, serialised with
 * the schema its GET answers with, so the ETag compared is the one a GET or a write returned.
 * A resource that does not exist is never passed: the write answers 404 whatever the
 * preconditions say, as §13.2.1 wants for an answer that would fail without them.
 */
export function writePrecondition(request: FastifyRequest, reply: FastifyReply, resource: ConditionalResource): ((current: object) => void) | undefined {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = request.headers;
  // If-Unmodified-Since is ignored beside If-Match, and when it is not a date (§13.1.4).
  const unmodifiedSince = ifMatch === undefined ? httpDate(request.headers['if-unmodified-since']) : null;
  if (ifMatch === undefined && ifNoneMatch === undefined && unmodifiedSince === null) return undefined;
  const serialize = reply.compileSerializationSchema(resource.schema);
  return (current) => {
    const etag = etagOf(serialize(current as Record<string, unknown>));
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) {
      throw new PreconditionFailedError('If-Match: the resource has changed since that ETag; GET it again, reapply your change and retry.');
    }
    // HTTP dates have whole seconds: a change within the second of the date is not "after" it.
    if (unmodifiedSince !== null && Math.floor(Date.parse(resource.lastModified(current)) / 1000) * 1000 > unmodifiedSince) {
      throw new PreconditionFailedError('If-Unmodified-Since: the resource has changed since that date; GET it again, reapply your change and retry.');
    }
    // Weak comparison (§13.1.2); on a write a match fails the request, never a 304.
    if (ifNoneMatch !== undefined && matches(ifNoneMatch, etag, true)) {
      throw new PreconditionFailedError(ifNoneMatch.trim() === '*' ? 'If-None-Match: *: the resource exists.' : 'If-None-Match: the resource still has that ETag.');
    }
  };
}

/**
 * ETag and If-None-Match (2.3.1) for every successful GET whose body is already serialised,
 * and the ETag of the resource a write answers with (`config.writesResource`). A pipeline
 * stage (pipeline.ts).
 */
export const conditionalGet: SendHook = (request, reply, payload, next) => next(null, withEtag(request, reply, payload));

function withEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    if (request.routeOptions.config?.writesResource && (reply.statusCode === 200 || reply.statusCode === 201)) reply.header('etag', etagOf(payload));
    return payload;
  }
  if (reply.statusCode !== 200) return payload;
  // Answers to a credential are the caller's: never kept by a shared cache, always revalidated.
  if (request.principal && !reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
  // A response replayed from the read cache, or a static one, carries its ETag already.
  const etag = (reply.getHeader('etag') as string | undefined) ?? etagOf(payload);
  reply.header('etag', etag);
  // Chosen here, applied last (compression.ts): the tag compared is the one of the representation this client gets.
  request.contentCoding = codingFor(request, reply, payload);
  const ifNoneMatch = request.headers['if-none-match'];
  const representationTag = codedTag(etag, request.contentCoding);
  if (typeof ifNoneMatch === 'string' && matches(ifNoneMatch, representationTag)) {
    varyOnCoding(reply);
    reply.header('etag', representationTag);
    request.contentCoding = null;
    reply.code(304);
    reply.removeHeader('content-length');
    reply.removeHeader('content-type');
    return '';
  }
  return payload;
}
