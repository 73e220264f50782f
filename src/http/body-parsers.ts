import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../kernel/errors.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Every `charset` parameter of a Content-Type (`charset=utf-8; charset=latin1` has two), unquoted and lower-cased. */
function charsetsOf(contentType: string | undefined): string[] {
  const charsets: string[] = [];
  for (const [, name = '', value = ''] of (contentType ?? '').matchAll(/;\s*([^\s;=]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g)) {
    if (name.toLowerCase() === 'charset') charsets.push(value.trim().replace(/^"(.*)"$/, '$1').toLowerCase());
  }
  return charsets;
}

/**
 * A text part of a multipart body, as the parser (busboy) decoded it. It never fails: bytes
 * that are not UTF-8 become U+FFFD, so U+FFFD is refused (400), as undecodable JSON is.
 */
export function multipartText(value: string, field: string): string {
  if (value.includes('\uFFFD')) {
    throw new InvalidRequestError(`The "${field.slice(0, 40)}" part is not valid UTF-8.`, [{ field, message: 'must be UTF-8 text' }]);
  }
  return value;
}

/**
 * Resolves once the request's body has arrived to its last byte, reading and dropping whatever
 * its parser left unread (busboy stops at the closing boundary; a trailing CRLF may follow in a
 * later packet), or once the client has gone or `maxBytes` more were dropped. An answer sent
 * before then closes the connection (request-guards.ts), which a client still writing meets as
 * EPIPE instead of reading the answer.
 */
export function bodyFinished(raw: IncomingMessage, maxBytes: number): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let dropped = 0;
    const finish = () => {
      raw.off('data', count).off('end', finish).off('close', finish).off('error', finish);
      resolve();
    };
    const count = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > maxBytes) finish();
    };
    raw.on('data', count).once('end', finish).once('close', finish).once('error', finish);
    raw.resume();
  });
}

/** An operation that reads no body: no JSON schema for one, and no body it reads itself (multipart uploads). */
export function takesNoBody(request: FastifyRequest): boolean {
  return !request.routeOptions.schema?.body && !request.routeOptions.config?.documentedBody;
}

function unsupported(request: FastifyRequest): UnsupportedMediaTypeError {
  const type = request.headers['content-type'];
  const sent = type ? ` "${type.slice(0, 60)}"` : '';
  if (takesNoBody(request)) return new UnsupportedMediaTypeError(`This operation takes no body; send none (an empty body is fine whatever its Content-Type${sent ? `, also${sent}` : ''}).`);
  return new UnsupportedMediaTypeError(`Unsupported Content-Type${sent}: send the body this operation documents (application/json, or multipart/form-data for image uploads).`);
}

/**
 * JSON bodies are UTF-8 (RFC 8259 §8.1): another declared charset is 415, bytes that are not
 * UTF-8 are 400 (never silently U+FFFD). An empty body on an operation that takes none
 * (DELETE, the form update) is no body, whatever its `Content-Type` or charset: generated
 * clients send `Content-Type: application/json` on every call. Only JSON and, where routes
 * register it, multipart are accepted: any other type with a body is 415.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer, done) => {
    if (body.length === 0 && takesNoBody(request)) {
      done(null, undefined);
      return;
    }
    // A merge patch (RFC 7396) only where an operation says it takes one (PATCH /orders/{id}).
    if (/^application\/merge-patch\+json/i.test(request.headers['content-type'] ?? '') && !(request.routeOptions.schema?.consumes as string[] | undefined)?.includes('application/merge-patch+json')) {
      done(unsupported(request), undefined);
      return;
    }
    if (request.routeOptions.config?.documentedBody) {
      done(unsupported(request), undefined); // an operation that reads its own body (multipart) takes no JSON
      return;
    }
    const charset = charsetsOf(request.headers['content-type']).find((name) => name !== 'utf-8' && name !== 'utf8');
    if (charset !== undefined) {
      done(new UnsupportedMediaTypeError(`JSON bodies are UTF-8; charset "${charset.slice(0, 40)}" is not accepted.`), undefined);
      return;
    }
    let text: string;
    try {
      text = strictUtf8.decode(body);
    } catch {
      done(new InvalidRequestError('The request body is not valid UTF-8.'), undefined);
      return;
    }
    parseJson(request, text, done);
  });
  // Every other type (and none): an empty body where none is taken is no body; else 415, unread.
  app.addContentTypeParser('*', (request: FastifyRequest, payload: Readable, done: (error: Error | null, body?: unknown) => void) => {
    const length = request.headers['content-length'];
    if (request.is404) {
      done(null, undefined); // the 404 (or 405) says more than a 415 would
      return;
    }
    if (!takesNoBody(request) || (length !== undefined && Number(length) !== 0)) {
      done(unsupported(request), undefined);
      return;
    }
    if (length !== undefined) {
      done(null, undefined);
      return;
    }
    // Chunked: no body if it ends before a first byte arrives.
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      payload.pause();
      done(error, undefined);
    };
    payload.once('data', () => settle(unsupported(request)));
    payload.once('end', () => settle(null));
    payload.once('error', (error: Error) => settle(error));
  });
}
