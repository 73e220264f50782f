import fs from 'node:fs';
import http from 'node:http';

/**
 * The baseline: a bare node:http server that answers each benchmarked URL with the status,
 * headers and body the real service sent for it (captured by bench/run.ts), and does
 * nothing else. Node adds Date and Connection/Keep-Alive exactly as it does for Fastify.
 *
 * Usage: node --import tsx bench/bare-server.ts <fixtures.json>; prints "listening <port>".
 */

export interface Fixture {
  url: string;
  status: number;
  /** Header name/value pairs as the service sent them, minus the ones node adds itself. */
  headers: [string, string][];
  /** base64 */
  body: string;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: bare-server.ts <fixtures.json>');
  process.exit(2);
}
const fixtures = JSON.parse(fs.readFileSync(file, 'utf8')) as Fixture[];
const responses = new Map(
  fixtures.map((f) => [f.url, { status: f.status, headers: Object.fromEntries(f.headers), body: Buffer.from(f.body, 'base64') }]),
);

const server = http.createServer((request, response) => {
  const answer = responses.get(request.url ?? '');
  if (!answer) {
    response.writeHead(404, { 'content-length': '0' });
    response.end();
    return;
  }
  response.writeHead(answer.status, answer.headers);
  response.end(answer.body);
});
// The same keep-alive timeout as Fastify's default, so idle connections behave alike.
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.close(() => process.exit(0)));
