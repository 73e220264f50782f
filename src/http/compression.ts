import { hash } from 'node:crypto';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import { pipeline, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { SendHook } from '../kernel/request-stage.js';

/** The content codings we answer in, in our order of preference at equal q-values. */
export type Coding = 'br' | 'gzip';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers with bytes that stay the same for the whole process (the OpenAPI
     * document, the docs page's files, the dashboard's assets): each is compressed once, at the
     * best level, and those bytes are served from then on.
     */
    compressOnce?: boolean;
  }
  interface FastifyRequest {
    /** The coding chosen by the ETag stage for this answer (null: identity), which compression applies. */
    contentCoding?: Coding | null;
  }
}

/** Below this, a compressed answer saves less than the work and the extra round of a header. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Dynamic answers (lists, CSV, pages): fast levels, measured on an 88 KB catalogue page
 * (docs/performance.md, "Compressed answers"): brotli 3 and gzip 3 take about half the time of
 * brotli 4 and gzip 6 (zlib's default) for 4 to 13 % more bytes; brotli 11, zlib's default
 * for brotli, is two orders of magnitude slower.
 */
const DYNAMIC: Record<Coding, BrotliOptions | ZlibOptions> = {
  br: { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } },
  gzip: { level: 3 },
};
/** Static answers, compressed once: the best levels, brotli 11 up to 1 MB (0.8 s for the document), 9 above (11 takes 3.3 s for the docs page's 1.5 MB script). */
const onceOptions = (coding: Coding, size: number): BrotliOptions | ZlibOptions =>
  coding === 'gzip'
    ? { level: 9 }
    : { params: { [constants.BROTLI_PARAM_QUALITY]: size <= 1024 * 1024 ? 11 : 9, [constants.BROTLI_PARAM_SIZE_HINT]: size } };

/** Text, JSON, XML, JavaScript, YAML (the docs' /docs/yaml), CSS, SVG; never images otherwise (already compressed), nor event streams. */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:[\w.-]+\+)?(?:json|xml|javascript|(?:x-)?yaml)\b|image\/svg\+xml)/i;

/**
 * Accept-Encoding (RFC 9110 §12.5.3): the coding to answer in (null: identity), and whether
 * identity itself was refused (`identity;q=0`, or `*;q=0` without naming identity). No header
 * means identity: clients that cannot decode (curl without --compressed) send none.
 */
export function acceptedCoding(header: string | undefined): { coding: Coding | null; identityRefused: boolean } {
  if (header === undefined) return { coding: null, identityRefused: false };
  const weights = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [rawName = '', ...params] = part.split(';');
    const name = rawName.trim() === 'x-gzip' ? 'gzip' : rawName.trim();
    if (name === '') continue;
    const q = params.map((param) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(param)).find(Boolean);
    weights.set(name, q ? Number(q[1]) : 1);
  }
  const weightOf = (name: string) => weights.get(name) ?? weights.get('*') ?? (name === 'identity' ? 1 : 0);
  const identity = weightOf('identity');
  let coding: Coding | null = null;
  for (const candidate of ['br', 'gzip'] as const) if (weightOf(candidate) > 0 && (coding === null || weightOf(candidate) > weightOf(coding))) coding = candidate;
  // The client prefers identity to either coding: honoured.
  if (coding !== null && weightOf(coding) < identity) coding = null;
  return { coding, identityRefused: identity === 0 };
}

const typeOf = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '');
const isStream = (payload: unknown): payload is Readable => typeof (payload as Readable | null)?.pipe === 'function';

/** The answer's representation depends on Accept-Encoding: say so to caches, whichever coding this one got. */
export function varyOnCoding(reply: FastifyReply): void {
  if (!COMPRESSIBLE.test(typeOf(reply))) return;
  const vary = reply.getHeader('vary');
  const names = vary === undefined ? [] : String(vary).split(',').map((name) => name.trim());
  if (names.some((name) => name.toLowerCase() === 'accept-encoding' || name === '*')) return;
  reply.header('vary', [...names.filter(Boolean), 'Accept-Encoding'].join(', '));
}

/**
 * The coding this answer goes out in: one the client accepts, for a compressible type, a
 * successful or error answer with a body (not 206: its range counts identity bytes), of at
 * least COMPRESSION_THRESHOLD_BYTES unless the client refused identity. Null: identity.
 */
export function codingFor(request: FastifyRequest, reply: FastifyReply, payload: unknown): Coding | null {
  if (payload === null || payload === undefined || reply.getHeader('content-encoding') !== undefined) return null;
  if (reply.statusCode === 204 || reply.statusCode === 206 || reply.statusCode === 304 || reply.getHeader('content-range') !== undefined) return null;
  if (!COMPRESSIBLE.test(typeOf(reply))) return null;
  const { coding, identityRefused } = acceptedCoding(request.headers['accept-encoding']);
  if (coding === null) return null;
  const size = typeof payload === 'string' || Buffer.isBuffer(payload) ? Buffer.byteLength(payload) : Number(reply.getHeader('content-length') ?? Infinity);
  return size >= COMPRESSION_THRESHOLD_BYTES || (identityRefused && size > 0) ? coding : null;
}

/** A compressed representation's strong ETag is not the identity one's: `"tag"` becomes `"tag-br"`. */
export function codedTag(tag: string, coding: Coding | null): string {
  return coding === null ? tag : tag.replace(/"$/, `-${coding}"`);
}

/** In libuv's thread pool, not on the event loop. */
const compressAsync = (coding: Coding, bytes: Buffer, options: BrotliOptions | ZlibOptions) =>
  new Promise<Buffer>((resolve, reject) => {
    const done = (error: Error | null, out: Buffer) => (error ? reject(error) : resolve(out));
    if (coding === 'br') brotliCompress(bytes, options as BrotliOptions, done);
    else gzip(bytes, options as ZlibOptions, done);
  });

/** The key of identity bytes whose strong ETag (a hash of them) is `tag`, if any: as compression.ts keys what it keeps. */
const contentKey = (coding: Coding, bytes: Buffer, tag: unknown) => `${coding}:${typeof tag === 'string' && tag.startsWith('"') ? tag : hash('sha1', bytes, 'base64url')}`;

/** Compressed static bytes by content (their hash) and coding: the same file under any URL is compressed once. */
const compressed = new Map<string, Promise<Buffer>>();
/** Room for the document and the docs page's files in both codings, twice over; beyond, compressed each time. */
const MAX_ONCE = 64;

/** `tag`: the identity bytes' strong ETag when there is one (a hash of them already: not hashed again per request). */
function compressedOnce(coding: Coding, bytes: Buffer, tag: unknown): Promise<Buffer> {
  const key = contentKey(coding, bytes, tag);
  let bytesOnce = compressed.get(key);
  if (bytesOnce) return bytesOnce;
  bytesOnce = compressAsync(coding, bytes, onceOptions(coding, bytes.length));
  if (compressed.size < MAX_ONCE) {
    compressed.set(key, bytesOnce);
    bytesOnce.catch(() => compressed.delete(key));
  }
  return bytesOnce;
}

/**
 * Dynamic answers compressed lately, by coding and content: a catalogue page served from the
 * read cache to many clients is compressed once, not per request (docs/performance.md,
 * "Compressed answers"). Content is named by the answer's strong ETag, which the ETag stage
 * makes a hash of the identity bytes (etag.ts etagOf), or by hashing them when there is none.
 * Bounded by the bytes kept.
 */
const recentlyCompressed = new LRUCache<string, Buffer>({ maxSize: 16 * 1024 * 1024, sizeCalculation: (bytes) => Math.max(1, bytes.length) });

function compressedDynamic(coding: Coding, bytes: Buffer, tag: unknown): Promise<Buffer> {
  const key = contentKey(coding, bytes, tag);
  const known = recentlyCompressed.get(key);
  if (known) return Promise.resolve(known);
  return compressAsync(coding, bytes, DYNAMIC[coding]).then((out) => {
    recentlyCompressed.set(key, out);
    return out;
  });
}

function collect(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

/**
 * The last stage of every answer (after every route's own onSend hooks, the read cache's and
 * the idempotency record's, which keep identity bytes): compresses in the coding the ETag
 * stage chose (or chooses it now for answers that stage leaves alone), with a Content-Length
 * that counts the compressed bytes (or none for a stream) and the ETag of the coded
 * representation (codedTag).
 */
export const compressAnswer: SendHook = (request, reply, payload, next) => {
  const coding = request.contentCoding !== undefined ? request.contentCoding : codingFor(request, reply, payload);
  varyOnCoding(reply);
  if (coding === null || reply.getHeader('content-encoding') !== undefined) return next(null, payload);
  reply.header('content-encoding', coding);
  const etag = reply.getHeader('etag');
  if (typeof etag === 'string') reply.header('etag', codedTag(etag, coding));
  const once = (bytes: Buffer) => compressedOnce(coding, bytes, etag);
  const sendBytes = (bytes: Promise<Buffer>) =>
    bytes.then(
      (out) => {
        reply.header('content-length', out.length);
        next(null, out);
      },
      (error: Error) => next(error),
    );
  const identity = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.isBuffer(payload) ? payload : undefined;
  if (request.routeOptions.config?.compressOnce) return void sendBytes(identity ? once(identity) : collect(payload as Readable).then(once));
  if (identity) return void sendBytes(compressedDynamic(coding, identity, etag));
  if (!isStream(payload)) return next(null, payload);
  reply.removeHeader('content-length');
  const compressor = coding === 'br' ? createBrotliCompress(DYNAMIC.br) : createGzip(DYNAMIC.gzip);
  next(null, pipeline(payload, compressor, () => undefined));
};

/** Puts compression after every onSend hook a route has, its own included (pipeline.ts). */
export function compressLast(route: RouteOptions): void {
  const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
  if (own.includes(compressAnswer as never)) return;
  // The HEAD route Fastify makes of a GET ends with a hook that drops the body and counts its
  // bytes: compression goes before it, so that HEAD counts the compressed bytes GET sends.
  const head = own.findIndex((hook) => (hook as { name?: string }).name === 'headRouteOnSendHandler');
  route.onSend = head === -1 ? [...own, compressAnswer as never] : [...own.slice(0, head), compressAnswer as never, ...own.slice(head)];
}
