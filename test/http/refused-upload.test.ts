import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

/**
 * A request refused while its body is still arriving reaches the client as an answer it can
 * read (issue 17): the connection closes gracefully, after the client's body is drained, so a
 * client still sending gets the status, never a reset (EPIPE) in its place.
 */
let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  ({ t, auth } = await createAdminTestApp());
});
afterAll(() => t.close());

const BODY_BYTES = Math.round(7.8 * 1024 * 1024);

function multipart(bytes: number): { body: Buffer; type: string } {
  const boundary = 'fromagerie-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, Buffer.alloc(bytes, 0xab), tail]), type: `multipart/form-data; boundary=${boundary}` };
}

/** A plain node:http client that writes the whole body in 64 KB chunks while the answer may already be coming. */
function upload(path: string, headers: Record<string, string>): Promise<{ status: number; body: string } | { error: string }> {
  const { body, type } = multipart(BODY_BYTES);
  const url = new URL(path, t.http.baseUrl);
  return new Promise((resolve) => {
    const request = http.request(url, { method: 'POST', headers: { ...headers, 'content-type': type, 'content-length': String(body.length) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      response.on('error', (error) => resolve({ error: error.message }));
    });
    request.on('error', (error) => resolve({ error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` }));
    let offset = 0;
    const writeMore = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 64 * 1024);
        offset += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', writeMore);
      }
      request.end();
    };
    writeMore();
  });
}

/**
 * A client that reads only once it has sent its whole body (as simple clients do): it sends
 * the headers and a first chunk, waits until the answer has surely been sent, sends the rest,
 * then reads. Against a socket closed at once, the rest meets a reset, which discards the
 * answer waiting unread: the client gets no status at all.
 */
function sendAllThenRead(path: string, headers: Record<string, string>): Promise<string> {
  const { body, type } = multipart(BODY_BYTES);
  const url = new URL(t.http.baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), '127.0.0.1');
    socket.pause();
    let received = '';
    let failed = '';
    socket.on('error', (error: NodeJS.ErrnoException) => (failed = error.code ?? error.message));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = new Promise((r) => socket.once('close', r));
    const head = Object.entries({ ...headers, host: 'x', 'content-type': type, 'content-length': String(body.length) }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n`);
    socket.write(body.subarray(0, 64 * 1024));
    setTimeout(async () => {
      for (let offset = 64 * 1024; offset < body.length && !socket.destroyed; offset += 256 * 1024) {
        if (!socket.write(body.subarray(offset, offset + 256 * 1024))) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
      }
      socket.resume();
      await closed;
      resolve(received || `no answer (${failed})`);
    }, 300);
  });
}

describe('a request refused while its body arrives', () => {
  it('reaches a client that reads only after sending its 7.8 MB: the socket drains, never resets', async () => {
    const answers = await Promise.all([sendAllThenRead('/v2/cheeses/0278/uploadImage', auth), sendAllThenRead('/v2/cheeses/1/uploadImage', {})]);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 400 /);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 401 /);
    for (const answer of answers) expect(answer).toMatch(/\r\nconnection: close\r\n/i);
  });

  it('is answered readably to a node:http client still sending 7.8 MB (400 for the id, 401 without a credential), ten at once', async () => {
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => upload('/v2/cheeses/0278/uploadImage', auth)),
      ...Array.from({ length: 5 }, () => upload('/v2/cheeses/1/uploadImage', {})),
    ]);
    expect(answers.slice(0, 5).map((a) => ('status' in a ? a.status : a.error))).toEqual([400, 400, 400, 400, 400]);
    expect(answers.slice(5).map((a) => ('status' in a ? a.status : a.error))).toEqual([401, 401, 401, 401, 401]);
    for (const answer of answers) expect('status' in answer && JSON.parse(answer.body).code).toBe('status' in answer ? answer.status : -1);
  });

  it('is answered readably to fetch', async () => {
    const { body, type } = multipart(BODY_BYTES);
    const res = await fetch(new URL('/v2/cheeses/0278/uploadImage', t.http.baseUrl), { method: 'POST', headers: { ...auth, 'content-type': type }, body });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: number }).code).toBe(400);
    expect(res.headers.get('connection')).toBe('close');
    // The service still answers on a new connection.
    expect((await t.http.get('/v2/health')).status).toBe(200);
  });
});
