import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { EventListQuery } from '../../src/modules/events/event.schema.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { DEPLOYED_HAPROXY_CFG, loopbackHaproxyConfig } from '../helpers/haproxy-config.js';
import { HttpClient } from '../helpers/http.js';
import { freePort } from '../helpers/oauth.js';
import { freeTcpPort, waitForPort } from '../helpers/private-services.js';
import { sandboxCustomerKey, startServer } from '../helpers/server.js';

/**
 * Issue 32 §1: Debian's HAProxy on deploy/haproxy.cfg (test/helpers/haproxy-config.ts: loopback
 * ports, the TLS bind on a certificate deploy/make-local-cert.sh made) in front of a real server
 * process whose PUBLIC_URL is the proxy's https address. Skipped with a message when haproxy or
 * openssl is missing, unless REQUIRE_HAPROXY=1 (CI).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const installed = (command: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const missing = ['haproxy', 'openssl'].filter((command) => !installed(command));
if (missing.length > 0) {
  const what = `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not installed`;
  if (process.env.REQUIRE_HAPROXY === '1') throw new Error(`REQUIRE_HAPROXY=1 but ${what} (apt-get install haproxy openssl)`);
  console.error(`haproxy-tls.test.ts: ${what}: skipping (REQUIRE_HAPROXY=1 makes this a failure)`);
}

/** The event log's longest long poll (`wait`'s maximum, seconds): the proxy must hold a request longer. */
const LONGEST_POLL_S = (EventListQuery.properties.wait as unknown as { maximum: number }).maximum;

let dir = '';
let pem = '';
let storage: TestStorage | undefined;
let server: (ChildProcess & { output(): string }) | undefined;
let haproxy: ChildProcess | undefined;
let httpPort = 0;
let tlsPort = 0;
let appPort = 0;
let publicUrl = '';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  alpn: string | false | null | undefined;
  subject: string;
}

/** One https/1.1 request to the proxy, trusting only the generated certificate. */
function viaTls(pathname: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const requestOptions: https.RequestOptions & tls.ConnectionOptions = { host: '127.0.0.1', port: tlsPort, path: pathname, method: options.method ?? 'GET', headers: options.headers, ca: fs.readFileSync(pem), ALPNProtocols: ['http/1.1'], agent: false };
    const request = https.request(requestOptions, (response) => {
      const socket = response.socket as tls.TLSSocket;
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body, alpn: socket.alpnProtocol, subject: String(socket.getPeerCertificate().subject?.CN) }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/** One plain http request to the proxy's http bind. */
function viaPlain(pathname: string): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: httpPort, path: pathname, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers }));
    }).on('error', reject);
  });
}

/** The value a `timeout NAME 65s` line of the deployed file sets, in seconds. */
function deployedTimeout(name: string): number {
  const match = new RegExp(`^\\s*timeout ${name} (\\d+)(ms|s|m)$`, 'm').exec(fs.readFileSync(DEPLOYED_HAPROXY_CFG, 'utf8'));
  if (!match) throw new Error(`deploy/haproxy.cfg has no "timeout ${name}"`);
  return Number(match[1]) * { ms: 0.001, s: 1, m: 60 }[match[2] as 'ms' | 's' | 'm'];
}

beforeAll(async () => {
  if (missing.length > 0) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'haproxy-tls-'));
  pem = path.join(dir, 'certs', 'fromagerie.pem');
  execFileSync(path.join(ROOT, 'deploy/make-local-cert.sh'), [pem], { stdio: 'ignore' });
  [httpPort, tlsPort, appPort] = [await freeTcpPort(), await freeTcpPort(), await freePort()];
  publicUrl = `https://127.0.0.1:${tlsPort}`;
  storage = await createTestStorage();
  server = await startServer(processEnvFor(storage, { PUBLIC_URL: publicUrl, TRUST_PROXY: '127.0.0.1' }), appPort);
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, loopbackHaproxyConfig({ port: httpPort, servers: [{ name: 'app1', port: appPort }], tls: { port: tlsPort, pem } }));
  // The redirect's target comes from PUBLIC_URL, as compose passes it to the proxy.
  const env = { PATH: process.env.PATH, PUBLIC_URL: publicUrl };
  execFileSync('haproxy', ['-c', '-q', '-f', file], { env });
  haproxy = spawn('haproxy', ['-db', '-f', file], { env, stdio: 'ignore' });
  await waitForPort(tlsPort, 10_000);
  // In rotation once its readiness checks pass (rise 2, inter 1s).
  for (let waited = 0; (await viaTls('/v2/health/ready').catch(() => undefined))?.status !== 200; waited += 200) {
    if (waited > 15_000) throw new Error('HAProxy never put the instance in rotation');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 90_000);

afterAll(async () => {
  for (const child of [haproxy, server]) {
    if (!child || child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  await storage?.dispose();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing.length > 0)('HAProxy terminates TLS (deploy/haproxy.cfg, deploy/make-local-cert.sh)', () => {
  it('answers https with the generated certificate, over http/1.1 and h2 by ALPN, with HSTS', async () => {
    const answer = await viaTls('/v2/health');
    expect(answer.status).toBe(200);
    expect(answer.alpn).toBe('http/1.1');
    expect(answer.subject).toBe('localhost');
    expect(answer.headers['strict-transport-security']).toBe('max-age=63072000');

    const session = http2.connect(publicUrl, { ca: fs.readFileSync(pem) });
    try {
      const h2 = await new Promise<{ status: number; hsts: unknown; alpn: string | undefined }>((resolve, reject) => {
        const stream = session.request({ ':path': '/v2/health' });
        stream.on('response', (headers) => {
          stream.resume();
          stream.on('end', () => resolve({ status: Number(headers[':status']), hsts: headers['strict-transport-security'], alpn: session.alpnProtocol }));
        });
        stream.on('error', reject);
        stream.end();
      });
      expect(h2).toEqual({ status: 200, hsts: 'max-age=63072000', alpn: 'h2' });
    } finally {
      session.close();
    }
  });

  it("speaks Mozilla's intermediate profile: TLS 1.3, or 1.2 with a forward-secret AEAD cipher, nothing older", async () => {
    const handshake = (options: tls.ConnectionOptions) =>
      new Promise<{ protocol: string | null; cipher: string } | Error>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port: tlsPort, ca: fs.readFileSync(pem), servername: 'localhost', ...options }, () => {
          resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name });
          socket.destroy();
        });
        socket.on('error', (error) => resolve(error));
      });
    expect(await handshake({})).toMatchObject({ protocol: 'TLSv1.3' });
    const v12 = await handshake({ maxVersion: 'TLSv1.2' });
    expect(v12).toMatchObject({ protocol: 'TLSv1.2', cipher: expect.stringMatching(/^ECDHE-ECDSA-(AES\d+-GCM-SHA\d+|CHACHA20-POLY1305)$/) });
    // A cipher outside the profile (CBC, no forward secrecy) is refused.
    expect(await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA' })).toBeInstanceOf(Error);
    expect(await handshake({ maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' })).toBeInstanceOf(Error);
  });

  it('redirects plain http to PUBLIC_URL (301, path and query kept), with no HSTS over http', async () => {
    const answer = await viaPlain('/v2/cheeses?limit=1');
    expect(answer.status).toBe(301);
    expect(answer.headers.location).toBe(`${publicUrl}/v2/cheeses?limit=1`);
    expect(answer.headers['strict-transport-security']).toBeUndefined();
  });

  it('signs in to the dashboard with a __Host- session cookie that is Secure', async () => {
    const form = await viaTls('/dashboard/login');
    expect(form.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
    expect(csrf).toBeDefined();
    const cookie = (form.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
    const body = new URLSearchParams({ _csrf: csrf!, username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password }).toString();
    const signedIn = await viaTls('/dashboard/login', { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), cookie, origin: publicUrl } });
    expect(signedIn.status, signedIn.body).toBe(303);
    const session = (signedIn.headers['set-cookie'] ?? []).find((line) => line.startsWith('__Host-fromagerie_session='));
    expect(session, JSON.stringify(signedIn.headers['set-cookie'])).toBeDefined();
    const attributes = session!.split(';').slice(1).map((part) => part.trim().toLowerCase());
    expect(attributes).toContain('secure');
    expect(attributes).toContain('path=/');
    expect(attributes.some((part) => part.startsWith('domain='))).toBe(false);
  });

  it(`holds a long poll to its end: timeout server and client above the ${LONGEST_POLL_S} s poll, and a held poll answers 200, not cut`, async () => {
    expect(LONGEST_POLL_S).toBe(25);
    expect(deployedTimeout('server')).toBeGreaterThan(LONGEST_POLL_S);
    expect(deployedTimeout('client')).toBeGreaterThan(LONGEST_POLL_S);
    const key = await sandboxCustomerKey(new HttpClient(`http://127.0.0.1:${appPort}`), ['read:orders']);
    const started = performance.now();
    const held = await viaTls('/v2/events?after=now&wait=3', { headers: key });
    const seconds = (performance.now() - started) / 1000;
    expect(held.status, held.body).toBe(200);
    // elapsed time is the behaviour: held to its 3 s wait, not answered early (a lower bound on a wait HAProxy must not cut).
    expect(seconds).toBeGreaterThan(2.5);
  });
});
