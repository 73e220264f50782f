import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestHook, SendHook } from '../kernel/request-stage.js';
import type { ProxyTrust } from './trusted-proxies.js';
import { InvalidRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../kernel/errors.js';

/**
 * What every request must satisfy before routing decides anything: one line of each header
 * that takes one value, one valid Host (required from HTTP/1.1), a URL whose percent-escapes decode to UTF-8, and a body in no content coding
 * and no transfer coding but chunked. Node answers the first with an empty 400 unless told not
 * to (`requireHostHeader: false` in app.ts). A pipeline stage (pipeline.ts).
 */
export const requestGuards: RequestHook = (request, reply, next) => {
  if (refusedSockets.has(request.raw.socket)) {
    // Over the per-client cap: answered 503 when it opened and closing. The request is never
    // run, and not answered again (nor logged as an error: refusing is the cap working).
    reply.hijack();
    return;
  }
  try {
    guard(request);
    next();
  } catch (error) {
    next(error as Error);
  }
};

/**
 * A declared Content-Length over the operation's body limit (Fastify's `bodyLimit`, which the
 * image upload raises for its own) is a 413 before a byte of the body is read, after
 * authentication (401 first), whatever parses the body: JSON, multipart, or nothing (GET).
 */
export function bodyBounds(request: FastifyRequest, reply: FastifyReply, payload: unknown, next: (error: Error | null, payload?: unknown) => void): void {
  const length = Number(request.headers['content-length'] ?? 0);
  const limit = request.routeOptions.bodyLimit;
  if (typeof limit === 'number' && length > limit) {
    next(new PayloadTooLargeError(`The request body is too large: Content-Length ${length} is over this operation's limit of ${limit} bytes.`));
    return;
  }
  next(null, payload);
}

/**
 * An answer sent before the request's body has fully arrived (a refusal: 400, 401, 413, 503 …)
 * closes the connection (RFC 9112 §9.6): its body is not awaited on a keep-alive socket. But
 * it closes gracefully, so that a client still sending reads the answer instead of a reset
 * (EPIPE, no status): the answer goes out and our side half-closes, what the client still
 * sends is read and dropped (no memory kept) up to the operation's body limit, and the
 * socket goes when the client closes, after that many bytes, or after `LINGER_MS`.
 */
export const unreadBody: SendHook = (request, reply, payload, next) => {
  if (!request.raw.complete && declaresBody(request)) {
    reply.header('connection', 'close');
    lingerOnClose(request.raw, request.routeOptions.bodyLimit ?? DEFAULT_DRAIN_BYTES);
  }
  next(null, payload);
};

/** How long a refused request's socket keeps reading before it is cut. */
const LINGER_MS = 1000;
const DEFAULT_DRAIN_BYTES = 1024 * 1024;

/**
 * Node ends a `Connection: close` answer with `socket.destroySoon()`, which destroys the socket
 * once the answer is flushed: bytes the client sends after that meet a reset, and a reset can
 * discard the answer before the client reads it. This socket half-closes instead, and the
 * request's body goes on being read (by Node's parser) and dropped.
 */
function lingerOnClose(request: IncomingMessage, maxBytes: number): void {
  const socket = request.socket;
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.destroyed) return;
    const cut = () => this.destroy();
    let dropped = 0;
    request.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > maxBytes) cut();
    });
    this.once('end', cut);
    setTimeout(cut, LINGER_MS).unref();
    this.end();
    request.resume();
  };
}

/**
 * Connection-level guards, before there is a request: `Expect: 100-continue` is answered only
 * when the body is first read, so an answer given without it (401, 413, 415, 503 …) arrives
 * before the client sends the body (Node would send 100 Continue as soon as the headers
 * arrive); and CONNECT is refused.
 */
export function connectionGuards(app: FastifyInstance): void {
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const stream = request as IncomingMessage & { _read(size: number): void };
    const read = stream._read;
    stream._read = function continueThenRead(this: IncomingMessage, size: number) {
      stream._read = read;
      if (!response.headersSent && !response.writableEnded) response.writeContinue();
      return read.call(this, size);
    };
    app.server.emit('request', request, response);
  });
  // Node drops a CONNECT silently when nobody listens: this is not a proxy, so say so.
  app.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    rawAnswer(socket, 405, 'CONNECT is not supported: this is an API server, not a proxy.', { allow: 'GET, HEAD, POST, PUT, PATCH, DELETE' });
    socket.destroySoon();
  });
}

function guard(request: FastifyRequest): void {
  assertSingleValued(request);
  assertHost(request);
  assertDecodableUrl(request);
  const encoding = request.headers['content-encoding'];
  // A request without a body has nothing to decode (generated clients send the same headers on every call).
  const codings = encoding?.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity') ?? [];
  if (codings.length > 0 && declaresBody(request)) {
    const error = new UnsupportedMediaTypeError(`Content-Encoding "${String(encoding).slice(0, 40)}" is not supported: send the body uncompressed.`);
    error.headers['accept-encoding'] = 'identity'; // RFC 7694
    throw error;
  }
  // Node's parser undoes chunked and passes any other transfer coding (`gzip, chunked`) through
  // as body bytes: refused as a content coding is, rather than read as if it were not there.
  const transfer = request.headers['transfer-encoding'];
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked') {
    throw new UnsupportedMediaTypeError(`Transfer-Encoding "${transfer.slice(0, 40)}" is not supported: send the body chunked or with a Content-Length, uncompressed.`);
  }
}

/** RFC 3986 authority without userinfo: a host (a bracketed IP literal, or a name or IPv4 address) and an optional port; empty is allowed (RFC 9110 §7.2). */
const HOST = /^(?:\[[0-9A-Za-z:._~!$&'()*+,;=-]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::[0-9]*)?$/;

/**
 * The request headers we read that take one value, by the name a client writes. Of several
 * lines, Node keeps the first of some (Host, Authorization, Content-Type,
 * If-Unmodified-Since) and joins the others with ", " (X-API-Key, Idempotency-Key,
 * Sec-Fetch-Site): either way one of the values the client sent would silently be the one
 * acted on (a read-only key before an admin key is served as the read-only key), and a proxy
 * in front may have judged the other. So more than one line is a 400, on every route, before
 * anything reads them. Headers that are lists by definition (Accept, Accept-Encoding,
 * If-Match, If-None-Match, X-Forwarded-For) mean the same joined; Cookie lines are joined as
 * HTTP/2 requires; the rest fail closed when joined (docs/decisions.md, issue 28 §1).
 */
const SINGLE_VALUED: ReadonlyMap<string, string> = new Map(Object.entries({
  host: 'Host',
  authorization: 'Authorization',
  'x-api-key': 'X-API-Key',
  'content-type': 'Content-Type',
  'idempotency-key': 'Idempotency-Key',
  'if-unmodified-since': 'If-Unmodified-Since',
  'sec-fetch-site': 'Sec-Fetch-Site',
}));

/** rawHeaders lists every line as sent (light-my-request's too), where `headers` has merged them. */
function assertSingleValued(request: FastifyRequest): void {
  const { rawHeaders } = request.raw;
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    // A Map: the header names are the client's (`constructor` is no header of ours).
    const label = SINGLE_VALUED.get(name);
    if (label === undefined) continue;
    if (seen.has(name)) throw new InvalidRequestError(`Send one ${label} header, not several.`, [{ field: name, message: 'must be sent once' }]);
    seen.add(name);
  }
}

/**
 * RFC 9112 §3.2: a 400 for an HTTP/1.1 request without Host, and for any request with more
 * than one Host line (assertSingleValued) or an invalid one.
 */
function assertHost(request: FastifyRequest): void {
  const { httpVersionMajor, httpVersionMinor } = request.raw;
  const host = request.headers.host;
  if (host === undefined) {
    if (httpVersionMajor > 1 || (httpVersionMajor === 1 && httpVersionMinor >= 1)) {
      throw new InvalidRequestError('An HTTP/1.1 request must carry a Host header.', [{ field: 'host', message: 'is required' }]);
    }
    return;
  }
  if (!HOST.test(host)) throw new InvalidRequestError('The Host header must be a host name or address with an optional port.', [{ field: 'host', message: 'must be host[:port]' }]);
}

/** Whether a body follows the headers: chunked, or a Content-Length other than 0. */
export function declaresBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

/** The one answer to a path or query that does not decode, whoever notices first (Fastify's router notices paths). */
export function undecodableUrl(part: 'path' | 'query'): InvalidRequestError {
  return new InvalidRequestError(`The URL's ${part} has a percent-escape that is not UTF-8 (e.g. %E9 for "é" must be %C3%A9).`, [
    { field: part === 'path' ? 'path' : 'querystring', message: 'percent-escapes must encode UTF-8' },
  ]);
}

/** `Caf%E9` and `%zz` are refused (400) rather than stored as typed or as U+FFFD. */
function assertDecodableUrl(request: FastifyRequest): void {
  const url = request.raw.url ?? '/';
  if (!url.includes('%')) return;
  const queryAt = url.indexOf('?');
  const parts: ['path' | 'query', string][] = [['path', queryAt === -1 ? url : url.slice(0, queryAt)]];
  if (queryAt !== -1) parts.push(['query', url.slice(queryAt + 1)]);
  for (const [part, text] of parts) {
    try {
      decodeURIComponent(text);
    } catch {
      throw undecodableUrl(part);
    }
  }
}

const ERROR_TYPES: Record<number, string> = { 405: 'method_not_allowed', 503: 'service_unavailable' };

/**
 * An answer in the Error shape written straight to a socket, where there is no request for
 * Fastify to answer (a CONNECT, a connection over the cap, bytes that are not HTTP), always
 * closing. The one place such raw answers are made.
 */
export function rawAnswer(socket: Socket, status: number, message: string, headers: Record<string, string> = {}): void {
  if (!socket.writable) return;
  const body = JSON.stringify({ code: status, type: ERROR_TYPES[status] ?? 'invalid_request', message });
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`);
}

/** Sockets answered 503 by the per-client cap; whatever request they still carry is never run. */
const refusedSockets = new WeakSet<object>();

/** How long a refused socket may stay half-open for the client to read its 503. */
const REFUSED_LINGER_MS = 1000;

/**
 * Whose connections count together: an IPv4 address (also when it arrives IPv4-mapped,
 * `::ffff:203.0.113.7`), or an IPv6 /64, the block one host or household is given, so that
 * rotating through one's own IPv6 addresses does not multiply the cap.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [bare = ''] = address.split('%');
  const [head = '', tail] = bare.split('::');
  const groupsOf = (text: string) => (text === '' ? [] : text.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])));
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups.slice(0, 4).map((group) => (parseInt(group, 16) || 0).toString(16)).join(':')}::/64`;
}

/**
 * At most `limit` open connections per client (`clientKey`; 0 = no cap): slow or idle sockets
 * from one client cannot hold the server's. The next one is answered 503 with `Retry-After: 1`
 * as it opens and closed, and a request it carries anyway is never run. A trusted proxy's
 * connections (TRUST_PROXY) are not counted: each carries many clients, and the proxy keeps
 * this cap per client itself (deploy/haproxy.cfg: a stick table on `src`).
 */
export function capConnectionsPerClient(app: FastifyInstance, limit: number, trustedProxy?: ProxyTrust): void {
  if (limit <= 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    if (trustedProxy && socket.remoteAddress !== undefined && trustedProxy(socket.remoteAddress, 0)) return;
    const client = clientKey(socket.remoteAddress);
    const count = (open.get(client) ?? 0) + 1;
    if (count > limit) {
      refusedSockets.add(socket);
      rawAnswer(socket, 503, `Too many open connections from your address (at most ${limit}); reuse or close some.`, { 'retry-after': '1' });
      // Half-closed, not destroyed: what the client already sent is read (and refused), so the
      // 503 is not lost to a TCP reset; a client that never closes is cut after a moment.
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      return;
    }
    open.set(client, count);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left <= 0) open.delete(client);
      else open.set(client, left);
    });
  });
}
