import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { startServer } from '../helpers/server.js';
import { freePort } from '../helpers/oauth.js';

let storage: TestStorage;

beforeAll(async () => {
  storage = await createTestStorage();
});
afterAll(() => storage.dispose());

const DRAIN_DELAY_MS = 2500;

/** A POST whose headers go now and whose body goes when `finish` is called: a request in flight. */
function slowRequest(port: number) {
  const body = JSON.stringify({ username: 'nobody.here', password: 'not the password at all' });
  const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v2/customer/login', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
  const answered = new Promise<number>((resolve, reject) => {
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', reject);
  });
  request.write(body.slice(0, 10));
  return { answered, finish: () => request.end(body.slice(10)) };
}

describe('SIGTERM drains the server (src/server.ts)', () => {
  it('answers ready 503 and live 200 during DRAIN_DELAY_MS, finishes a request in flight, and exits 0', async () => {
    const port = await freePort();
    const child = await startServer(processEnvFor(storage, { DRAIN_DELAY_MS: String(DRAIN_DELAY_MS) }), port);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const base = `http://127.0.0.1:${port}/v2`;
    try {
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      const slow = slowRequest(port);
      // A moment for its headers to reach the server.
      await new Promise((r) => setTimeout(r, 200));
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const signalledAt = Date.now();
      child.kill('SIGTERM');

      // Readiness fails at once, while the server still answers: it is draining, not gone.
      await expect.poll(async () => (await fetch(`${base}/health/ready`)).status, { timeout: 5000, interval: 50 }).toBe(503);
      expect(await (await fetch(`${base}/health/ready`)).json()).toEqual({ status: 'unavailable', reason: 'draining' });
      expect((await fetch(`${base}/health/live`, { headers: { connection: 'close' } })).status).toBe(200);
      expect(child.exitCode).toBeNull();

      // Past the drain delay the server closes (new connections are refused); the request begun
      // before still gets its answer.
      const accepting = () => fetch(`${base}/health/live`, { headers: { connection: 'close' } }).then(() => true, () => false);
      await expect.poll(accepting, { timeout: DRAIN_DELAY_MS + 10_000, interval: 100 }).toBe(false);
      // elapsed time is the behaviour: the drain delay is a wait the server must make, and a lower bound cannot fail by slowness.
      expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(DRAIN_DELAY_MS);
      slow.finish();
      const status = await slow.answered;
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
      expect(await exit).toBe(0);
      expect(output).not.toMatch(/Error|at .*\.ts:\d+/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
