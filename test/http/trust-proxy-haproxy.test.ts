import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { RateLimitSettings } from '../../src/modules/limits/limits.module.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { withoutTls } from '../helpers/haproxy-config.js';
import { freeTcpPort, waitForPort } from '../helpers/private-services.js';

/**
 * The real HAProxy with deploy/haproxy.cfg's `defaults` and `frontend http` as written (only
 * the bind address and the backend's server changed, the TLS bind and its redirect dropped) in front of one instance that trusts it
 * (TRUST_PROXY=127.0.0.1). Clients connect to HAProxy from 127.0.0.2… (all of 127/8 is
 * loopback), HAProxy connects to the instance from 127.0.0.1.
 */
const haproxyInstalled = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v haproxy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const SMALL: RateLimitSettings = { enabled: true, free: { perHour: 36, burst: 3 }, pro: { perHour: 36_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 100_000, multiplier: 1 };
const DEPLOYED = fs.readFileSync(path.resolve(import.meta.dirname, '../../deploy/haproxy.cfg'), 'utf8');

/** A top-level section of the deployed configuration, verbatim. */
function section(header: string): string {
  const start = DEPLOYED.indexOf(`\n${header}\n`);
  if (start === -1) throw new Error(`deploy/haproxy.cfg has no "${header}"`);
  const next = DEPLOYED.slice(start + 1).search(/\n(?:global|defaults|frontend|backend|listen|resolvers)\b/);
  return DEPLOYED.slice(start + 1, next === -1 ? undefined : start + 1 + next);
}

/** The cap deploy/haproxy.cfg sets, read from its reject rule. */
const PROXY_CAP = Number(/tcp-request connection reject if \{ sc0_conn_cur gt (\d+) \}/.exec(DEPLOYED)?.[1]);

let t: TestApp;
let haproxy: ChildProcess | undefined;
let port = 0;
let dir = '';

beforeAll(async () => {
  if (!haproxyInstalled) return;
  t = await createTestApp({ config: { trustProxy: ['127.0.0.1'], rateLimits: SMALL, maxConnectionsPerClient: PROXY_CAP } });
  port = await freeTcpPort();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trust-proxy-haproxy-'));
  // Plain http to the proxy: the TLS bind and the redirect to https go (haproxy-tls.test.ts has them).
  const frontend = withoutTls(section('frontend http')).replace(/^\s*bind :8080$/m, `    bind 127.0.0.1:${port}`);
  expect(frontend).toContain(`bind 127.0.0.1:${port}`);
  const config = ['global', '    maxconn 4096', '', section('defaults'), frontend, 'backend fromagerie', `    server app1 127.0.0.1:${new URL(t.http.baseUrl).port}`, ''].join('\n');
  fs.writeFileSync(path.join(dir, 'haproxy.cfg'), config);
  execFileSync('haproxy', ['-c', '-q', '-f', path.join(dir, 'haproxy.cfg')]);
  haproxy = spawn('haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
  await waitForPort(port, 10_000);
}, 30_000);

afterAll(async () => {
  if (haproxy && haproxy.exitCode === null) {
    const exited = new Promise((resolve) => haproxy!.once('exit', resolve));
    haproxy.kill('SIGKILL');
    await exited;
  }
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Opens a connection to HAProxy from `from` and sends one keep-alive request; resolves with the
 * status, or 0 when the connection is closed with no answer. The socket stays open.
 */
function openWith(from: string, sockets: net.Socket[], request = 'GET /v2/health HTTP/1.1\r\nHost: localhost\r\n\r\n'): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
    sockets.push(socket);
    socket.once('connect', () => socket.write(request));
    socket.once('data', (data) => resolve(Number(data.toString('latin1').split(' ')[1])));
    socket.once('close', () => resolve(0));
    socket.once('error', () => resolve(0));
  });
}

async function oneRequest(from: string, forwardedFor: string): Promise<number> {
  const sockets: net.Socket[] = [];
  try {
    return await openWith(from, sockets, `GET /v2/cheeses?limit=1 HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${forwardedFor}\r\nConnection: close\r\n\r\n`);
  } finally {
    sockets.forEach((socket) => socket.destroy());
  }
}

describe.skipIf(!haproxyInstalled)('behind HAProxy (deploy/haproxy.cfg)', () => {
  it('the instance counts each client HAProxy saw, whatever X-Forwarded-For the client sent', async () => {
    const forged = [];
    for (let i = 0; i < 5; i++) forged.push(await oneRequest('127.0.0.2', `203.0.113.${i}`));
    expect(forged).toEqual([401, 401, 401, 429, 429]);
    // Another client through the same proxy has its own bucket: HAProxy is not one client.
    expect(await oneRequest('127.0.0.3', '127.0.0.2')).toBe(401);
  });

  it(`HAProxy caps open connections per client at ${PROXY_CAP}; the instance does not cap HAProxy`, async () => {
    // The instances' own default cap, kept at the proxy instead.
    expect(PROXY_CAP).toBe(loadConfig({ CHEESE_ENV: 'development', DATA_DIR: dir, APP_SECRET: 'trust-proxy-test-secret-0123456789abcdef', ADMIN_PASSWORD: 'an admin password for tests' }).maxConnectionsPerClient);
    const sockets: net.Socket[] = [];
    try {
      const opened = await Promise.all(Array.from({ length: PROXY_CAP }, () => openWith('127.0.0.4', sockets)));
      expect(opened.filter((status) => status === 200)).toHaveLength(PROXY_CAP);
      expect(await openWith('127.0.0.4', sockets)).toBe(0); // refused as it opened, by HAProxy
      // Other clients still get through, over HAProxy's connections to the instance.
      expect(await openWith('127.0.0.5', sockets)).toBe(200);
    } finally {
      sockets.forEach((socket) => socket.destroy());
    }
  });
});
