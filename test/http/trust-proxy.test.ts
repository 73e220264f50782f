import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type AppConfig } from '../../src/config.js';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUpCustomer } from '../helpers/dashboard.js';

/**
 * TRUST_PROXY (issue 20): X-Forwarded-For is believed from the configured proxies only, so
 * per-address limits apply to the real client behind the proxy, and a client connecting
 * directly gets no fresh bucket by forging the header. Several source addresses on one machine:
 * the server listens on 127.0.0.1 and clients bind 127.0.0.1 (the "proxy"), 127.0.0.2, 127.0.0.3
 * (Linux routes all of 127/8 to loopback).
 */
const ANONYMOUS_BURST_3: RateLimitSettings = { enabled: true, free: { perHour: 36, burst: 3 }, pro: { perHour: 36_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 100_000, multiplier: 1 };
const ROOMY: RateLimitSettings = { ...ANONYMOUS_BURST_3, free: { perHour: 360_000, burst: 1000 } };
const PROXY = '127.0.0.1';
const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close())));

async function app(config: Partial<AppConfig>): Promise<TestApp> {
  const t = await createTestApp({ config });
  apps.push(t);
  return t;
}

const portOf = (t: TestApp) => Number(new URL(t.http.baseUrl).port);

/** One request on its own connection from `from`; the status and the RateLimit field. */
function request(t: TestApp, from: string, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; ratelimit: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = http.request({ host: '127.0.0.1', port: portOf(t), localAddress: from, agent: false, method: options.method ?? 'GET', path: options.path ?? '/v2/cheeses?limit=1', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ratelimit: res.headers.ratelimit as string | undefined, body }));
    });
    sent.on('error', reject);
    sent.end(options.body);
  });
}

const statuses = async (n: number, attempt: (i: number) => Promise<{ status: number }>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await attempt(i)).status);
  return out;
};

const configWith = (trustProxy: string) => loadConfig({ CHEESE_ENV: 'development', DATA_DIR: path.join(os.tmpdir(), 'trust-proxy-test'), APP_SECRET: 'trust-proxy-test-secret-0123456789abcdef', ADMIN_PASSWORD: 'an admin password for tests', TRUST_PROXY: trustProxy });

describe('TRUST_PROXY at start', () => {
  it('takes true, false, or addresses and CIDRs of both families', () => {
    expect(configWith('false').trustProxy).toBe(false);
    expect(configWith('true').trustProxy).toBe(true);
    expect(configWith('172.28.0.0/24,127.0.0.1').trustProxy).toEqual(['172.28.0.0/24', '127.0.0.1']);
    expect(configWith(' fd00::/8 , ::1, 10.0.0.0/8, loopback').trustProxy).toEqual(['fd00::/8', '::1', '10.0.0.0/8', 'loopback']);
  });

  it.each([
    ['172.28.0.0/33', '"172.28.0.0/33": the prefix length must be 0 to 32'],
    ['127.0.0.1,fd00::/129', '"fd00::/129": the prefix length must be 0 to 128'],
    ['127.0.0.1,haproxy', '"haproxy" is not an IP address or CIDR'],
    ['10.0.0.1,,10.0.0.2', 'an empty entry'],
    ['300.1.1.1', '"300.1.1.1" is not an IP address'],
    ['10.0.0.0/8/1', '"10.0.0.0/8/1" is not an IP address'],
    ['10.0.0.0/x', '"10.0.0.0/x": the prefix length'],
  ])('refuses %s, naming the entry', (value, message) => {
    expect(() => configWith(value)).toThrow(ConfigError);
    expect(() => configWith(value)).toThrow(`TRUST_PROXY: ${message}`);
  });
});

describe('behind a trusted proxy (TRUST_PROXY=127.0.0.1)', () => {
  it('each client behind the proxy has its own anonymous bucket, the proxy is not one client', async () => {
    const t = await app({ trustProxy: [PROXY], rateLimits: ANONYMOUS_BURST_3 });
    const viaProxy = (client: string) => () => request(t, PROXY, { headers: { 'x-forwarded-for': client } });
    expect(await statuses(4, viaProxy('198.51.100.7'))).toEqual([401, 401, 401, 429]);
    expect(await statuses(3, viaProxy('198.51.100.8'))).toEqual([401, 401, 401]);
    expect(await statuses(2, viaProxy('2001:db8::8'))).toEqual([401, 401]);
    // A client prepending its own X-Forwarded-For: the proxy appends the address it saw, and
    // that rightmost entry is the client, whatever comes before it.
    expect(await statuses(3, (i) => request(t, PROXY, { headers: { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.7` } }))).toEqual([429, 429, 429]);
    const last = await request(t, PROXY, { headers: { 'x-forwarded-for': '198.51.100.8' } });
    expect(last.status).toBe(429);
    expect(last.ratelimit).toMatch(/^"anonymous";r=0;/);
  });

  it('a client connecting directly is its own address: forging X-Forwarded-For earns no new bucket', async () => {
    const t = await app({ trustProxy: [PROXY], rateLimits: ANONYMOUS_BURST_3 });
    const forged = await statuses(6, (i) => request(t, '127.0.0.2', { headers: { 'x-forwarded-for': `203.0.113.${i}` } }));
    expect(forged).toEqual([401, 401, 401, 429, 429, 429]);
    // It spent its own address's bucket, not that of the addresses it named...
    expect((await request(t, PROXY, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status).toBe(401);
    // ...and another direct client is not held back by it.
    expect((await request(t, '127.0.0.3')).status).toBe(401);
  });

  it('login throttles count the real client behind the proxy, and a direct client forging the header is still throttled', async () => {
    const t = await app({ trustProxy: [PROXY], rateLimits: ROOMY });
    const { username } = await signUpCustomer(t);
    const guess = (from: string, forwardedFor: string) => () =>
      request(t, from, { method: 'POST', path: '/v2/customer/login', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor }, body: JSON.stringify({ username, password: 'a wrong guess' }) });
    // One address against one username: 5, then 429 (brute-force.rules.ts).
    expect(await statuses(6, guess(PROXY, '198.51.100.20'))).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await statuses(2, guess(PROXY, '198.51.100.21'))).toEqual([401, 401]);
    expect(await statuses(6, (i) => guess('127.0.0.2', `198.51.100.${100 + i}`)())).toEqual([401, 401, 401, 429, 429, 429]);
  });
});

describe('TRUST_PROXY=true', () => {
  it('believes loopback and private peers only: a public peer forging the header is its own address', async () => {
    const t = await app({ trustProxy: true, rateLimits: ANONYMOUS_BURST_3 });
    const from = async (remoteAddress: string, forwardedFor?: string) =>
      (await t.app.inject({ method: 'GET', url: '/v2/cheeses?limit=1', remoteAddress, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} })).statusCode;
    const forged = [];
    for (let i = 0; i < 5; i++) forged.push(await from('203.0.113.50', `198.51.100.${i}`));
    expect(forged).toEqual([401, 401, 401, 429, 429]);
    // A proxy on a private network is believed: its clients each count on their own.
    const viaPrivateProxy = [];
    for (const peer of ['10.1.2.3', '172.20.0.9', '192.168.1.1', 'fd00::9']) viaPrivateProxy.push(await from(peer, '198.51.100.60'), await from(peer, `198.51.100.${61 + viaPrivateProxy.length}`));
    expect(viaPrivateProxy.filter((status) => status === 429)).toHaveLength(1); // the 4th request of 198.51.100.60
    expect(await from('203.0.113.51')).toBe(401);
  });
});

describe('the per-client connection cap behind a proxy', () => {
  /** Opens a connection from `from`, sends one keep-alive request, resolves with the status; the socket stays open. */
  function openWith(t: TestApp, from: string, sockets: net.Socket[]): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: portOf(t), localAddress: from });
      sockets.push(socket);
      socket.once('connect', () => socket.write('GET /v2/health HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      socket.once('data', (data) => resolve(Number(data.toString('latin1').split(' ')[1])));
      socket.once('error', reject);
    });
  }

  it('leaves the trusted proxy\'s connections alone and still caps a client connecting directly', async () => {
    const t = await app({ trustProxy: [PROXY], maxConnectionsPerClient: 2 });
    const sockets: net.Socket[] = [];
    try {
      const proxy = [];
      for (let i = 0; i < 6; i++) proxy.push(await openWith(t, PROXY, sockets));
      expect(proxy).toEqual(Array(6).fill(200));
      const direct = [];
      for (let i = 0; i < 3; i++) direct.push(await openWith(t, '127.0.0.2', sockets));
      expect(direct).toEqual([200, 200, 503]);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('without TRUST_PROXY the same peer is one client, capped', async () => {
    const t = await app({ trustProxy: false, maxConnectionsPerClient: 2 });
    const sockets: net.Socket[] = [];
    try {
      const opened = [];
      for (let i = 0; i < 3; i++) opened.push(await openWith(t, PROXY, sockets));
      expect(opened).toEqual([200, 200, 503]);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
