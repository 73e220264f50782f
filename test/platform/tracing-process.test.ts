import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { freePort } from '../helpers/oauth.js';
import { runServer, sandboxCustomerKey } from '../helpers/server.js';

const REGISTER = fileURLToPath(new URL('../helpers/module-log.register.mjs', import.meta.url));

let storage: TestStorage;
let receiver: OtlpReceiver;
let dir: string;

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new OtlpReceiver().start();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-modules-'));
});
afterAll(async () => {
  await receiver?.close();
  await storage?.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The server as the README starts it, noting every @opentelemetry module it resolves in `log`. */
function envFor(log: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = processEnvFor(storage, { PUBLIC_URL: 'http://localhost:8080', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0', ADMIN_PASSWORD: 'a good staff password', MODULE_LOG_FILE: log, NODE_OPTIONS: `--import=${REGISTER}`, ...extra });
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_') && !(name in extra)) delete env[name];
  return env;
}

const loaded = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

describe('a started server and OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('set: loads OpenTelemetry, exports its requests\' spans with the service\'s resource, and flushes them on SIGTERM', async () => {
    const log = path.join(dir, 'on.log');
    const server = await runServer(envFor(log, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'fromagerie-traced' }));
    try {
      const key = await sandboxCustomerKey(server.http, ['read:cheeses']);
      expect((await server.http.get('/v2/cheeses?limit=1', { headers: { ...key, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })).status).toBe(200);
      expect(loaded(log).length).toBeGreaterThan(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Exported at the latest by the shutdown's flush.
    const span = receiver.spans.find((s) => s.traceId === '0af7651916cd43dd8448eb211c80319c' && s.kind === 2);
    expect(span).toMatchObject({ name: 'GET /v2/cheeses', parentSpanId: 'b7ad6b7169203331' });
    expect(span!.resource).toMatchObject({ 'service.name': 'fromagerie-traced', 'service.version': expect.stringMatching(/^2\./) });
    expect(receiver.spans.some((s) => s.parentSpanId === span!.spanId && s.attributes['db.system.name'])).toBe(true);
    // Background work (jobs run at start, the dispatcher's cycles): traces of their own, their statements inside.
    const jobRun = receiver.spans.find((s) => s.name === 'job order-lifecycle' && s.parentSpanId === undefined);
    expect(jobRun?.attributes['fromagerie.job']).toBe('order-lifecycle');
    expect(receiver.spans.some((s) => s.parentSpanId === jobRun!.spanId && s.attributes['db.system.name'])).toBe(true);
    expect(receiver.spans.some((s) => s.name === 'webhook.dispatch' && s.parentSpanId === undefined)).toBe(true);
  });

  it('unset: the process resolves no @opentelemetry module at all, and exports nothing', async () => {
    const log = path.join(dir, 'off.log');
    const before = receiver.spans.length;
    const server = await runServer(envFor(log, {}));
    try {
      const key = await sandboxCustomerKey(server.http, ['read:cheeses']);
      expect((await server.http.get('/v2/cheeses?limit=1', { headers: key })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(loaded(log)).toEqual([]);
    expect(receiver.spans.length).toBe(before);
  });

  it('set to a collector that is not there: requests are served as usual and SIGTERM still exits at once', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const server = await runServer(envFor(path.join(dir, 'dead.log'), { OTEL_EXPORTER_OTLP_ENDPOINT: nobody }));
    try {
      const key = await sandboxCustomerKey(server.http, ['read:cheeses']);
      for (let i = 0; i < 5; i++) expect((await server.http.get('/v2/cheeses?limit=1', { headers: key })).status).toBe(200);
    } finally {
      // Exit code 0, not the SIGKILL stop() sends after 20 s: the last export is given at most
      // 3 s (src/kernel/opentelemetry.ts), so a collector that is not there never holds the exit.
      expect(await server.stop()).toBe(0);
    }
    expect(server.output()).not.toMatch(/unhandled|uncaught/i);
  });
});
