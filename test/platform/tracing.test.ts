import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/kernel/start-tracing.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { Receiver } from '../helpers/receiver.js';

const CLIENT = 3;

const SERVER = 2;

let receiver: OtlpReceiver;
let t: TestApp;
let auth: Record<string, string>;
const logLines: string[] = [];

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  const tracing = { endpoint: receiver.endpoint };
  const tracer = await startTracing(tracing, { serviceVersion: 'test' });
  t = await createTestApp({ seed: true, logLines, workers: true, config: { tracing, tracer } });
  auth = { authorization: `Bearer ${await t.key(['admin'])}` };
});

afterAll(async () => {
  await t?.close();
  await t?.config.tracer?.shutdown();
  await receiver?.close();
});

const serverSpan = async (predicate: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> => {
  let found: ReceivedSpan | undefined;
  await expect.poll(() => (found = receiver.spans.find((span) => span.kind === SERVER && predicate(span))), { timeout: 10_000 }).toBeDefined();
  return found!;
};

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it('exports a SERVER span per request, named by its route, with database spans as its children', async () => {
    const list = await t.http.get('/v2/cheeses?limit=1', { headers: auth });
    const id = (list.body.items[0] as { id: number }).id;
    expect((await t.http.get(`/v2/cheeses/${id}`, { headers: auth })).status).toBe(200);
    const span = await serverSpan((s) => s.attributes['url.path'] === `/v2/cheeses/${id}`);
    expect(span.name).toBe('GET /v2/cheeses/:cheeseId');
    expect(span.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v2/cheeses/:cheeseId', 'http.response.status_code': 200 });
    expect(span.resource).toMatchObject({ 'service.name': 'fromagerie', 'service.version': 'test' });
    await expect.poll(() => receiver.spans.filter((s) => s.parentSpanId === span.spanId && s.attributes['db.system.name']).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const children = receiver.spans.filter((s) => s.parentSpanId === span.spanId && s.attributes['db.system.name']);
    expect(children.every((s) => s.traceId === span.traceId)).toBe(true);
    expect(children[0]!.attributes['db.system.name']).toBe(t.database.dialect === 'postgres' ? 'postgresql' : 'sqlite');
    // The statement's shape only: no parameter, no SQL text.
    expect(Object.keys(children[0]!.attributes).sort()).toEqual(['db.operation.name', 'db.query.summary', 'db.system.name']);
  });

  it('names a request no route takes by its method alone', async () => {
    expect((await t.http.get('/v2/no-such-thing', { headers: auth })).status).toBe(404);
    const span = await serverSpan((s) => s.attributes['url.path'] === '/v2/no-such-thing');
    expect(span.name).toBe('GET');
    expect(span.attributes['http.route']).toBeUndefined();
    expect(span.attributes['http.response.status_code']).toBe(404);
  });

  it('continues an incoming traceparent, and a POST body does not lose the context', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const created = await t.http.post('/v2/cheeses', { headers: { ...auth, traceparent: `00-${traceId}-${parent}-01` }, json: { name: 'Traced Tomme', pricePerKg: 12 } });
    expect(created.status).toBe(201);
    const span = await serverSpan((s) => s.traceId === traceId && s.name.startsWith('POST'));
    expect(span.parentSpanId).toBe(parent);
    expect(span.attributes['http.response.status_code']).toBe(created.status);
    await expect.poll(() => receiver.spans.some((s) => s.parentSpanId === span.spanId && s.attributes['db.operation.name'] === 'INSERT'), { timeout: 10_000 }).toBe(true);
  });

  it('names the trace in the request log entry and in the log lines of the request', async () => {
    const answer = await t.http.get('/v2/cheeses?limit=2', { headers: { ...auth, 'x-request-id': 'traced-request-1' } });
    expect(answer.status).toBe(200);
    let entry: { traceId: string | null } | undefined;
    await expect.poll(async () => (entry = (await t.http.get('/v2/request-logs/traced-request-1', { headers: auth })).body).traceId, { timeout: 10_000 }).toMatch(/^[0-9a-f]{32}$/);
    const span = await serverSpan((s) => s.traceId === entry!.traceId);
    expect(span.attributes).toMatchObject({ 'url.path': '/v2/cheeses', 'http.route': '/v2/cheeses' });
    const lines = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.requestId === 'traced-request-1');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.trace_id === span.traceId && typeof line.span_id === 'string')).toBe(true);
    // The entry's write is a trace of its own (a batch serves many requests), never the request's child.
    await expect.poll(() => receiver.spans.some((s) => s.name === 'request-log.write' && s.parentSpanId === undefined), { timeout: 10_000 }).toBe(true);
    const parentsOfInserts = () => receiver.spans.filter((s) => s.name === 'INSERT request_logs').map((insert) => receiver.spans.find((s) => s.spanId === insert.parentSpanId)?.name);
    await expect.poll(() => parentsOfInserts().length > 0 && parentsOfInserts().every((name) => name === 'request-log.write'), { timeout: 10_000 }).toBe(true);
  });

  it('traces a webhook delivery in a trace of its own, with the send as a CLIENT span whose traceparent the receiver gets', async () => {
    const hooks = await new Receiver().start();
    try {
      const created = await t.http.post('/v2/webhooks', { headers: auth, json: { url: hooks.url('/traced'), events: ['order.*'] } });
      expect(created.status, created.text).toBe(201);
      expect((await t.http.post(`/v2/webhooks/${created.body.id}/test`, { headers: auth })).status).toBeLessThan(300);
      await expect.poll(() => hooks.received.length, { timeout: 10_000 }).toBeGreaterThan(0);
      const traceparent = String(hooks.received[0]!.headers.traceparent);
      const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent) ?? [];
      expect(traceId).toBeDefined();
      await expect.poll(() => receiver.spans.find((s) => s.spanId === spanId), { timeout: 10_000 }).toBeDefined();
      const send = receiver.spans.find((s) => s.spanId === spanId)!;
      expect(send).toMatchObject({ kind: CLIENT, name: 'POST', traceId });
      expect(send.attributes).toMatchObject({ 'http.response.status_code': 200, 'url.full': hooks.url('/traced'), 'server.address': '127.0.0.1' });
      await expect.poll(() => receiver.spans.find((s) => s.spanId === send.parentSpanId)?.name, { timeout: 10_000 }).toBe('webhook.deliver');
      expect(receiver.spans.find((s) => s.spanId === send.parentSpanId)!.parentSpanId).toBeUndefined();
    } finally {
      await hooks.close();
    }
  });
});

const REDIS = process.env.TEST_REDIS_URL;
if (!REDIS) console.error('tracing.test.ts: the Redis span test is skipped: set TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run it');

describe('traces of Redis commands (REDIS_URL set, rate limits on)', () => {
  it.skipIf(!REDIS)('exports a CLIENT span per Redis command, a child of the request span, naming the command only', async () => {
    const tracing = { endpoint: receiver.endpoint };
    const tracer = await startTracing(tracing, { serviceVersion: 'test' });
    const limited = await createTestApp({
      config: { tracing, tracer, redisUrl: REDIS, rateLimits: { enabled: true, free: { perHour: 100, burst: 10 }, pro: { perHour: 10_000, burst: 100 }, enterprise: { perSecond: 1000, burst: 1000 }, perMinute: 1000 } },
    });
    try {
      const key = await limited.key(['admin']);
      expect((await limited.http.get('/v2/cheeses', { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'traced-redis-1' } })).status).toBe(200);
      const span = await serverSpan((s) => s.attributes['url.path'] === '/v2/cheeses' && s.resource['service.instance.id'] !== undefined && receiver.spans.some((c) => c.parentSpanId === s.spanId && c.attributes['db.system.name'] === 'redis'));
      const redis = receiver.spans.find((c) => c.parentSpanId === span.spanId && c.attributes['db.system.name'] === 'redis')!;
      expect(redis).toMatchObject({ kind: CLIENT, name: 'EVALSHA' });
      expect(Object.keys(redis.attributes).sort()).toEqual(['db.operation.name', 'db.system.name']);
    } finally {
      await limited.close();
      await tracer.shutdown();
    }
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('exports nothing and keeps no trace id in the request log or the log lines', async () => {
    const lines: string[] = [];
    const plain = await createTestApp({ logLines: lines });
    try {
      const before = receiver.spans.length;
      const key = await plain.key(['admin']);
      const headers = { authorization: `Bearer ${key}`, 'x-request-id': 'untraced-request-1' };
      expect((await plain.http.get('/v2/cheeses', { headers })).status).toBe(200);
      await expect.poll(async () => (await plain.http.get('/v2/request-logs/untraced-request-1', { headers })).status, { timeout: 10_000 }).toBe(200);
      expect((await plain.http.get('/v2/request-logs/untraced-request-1', { headers })).body.traceId).toBeNull();
      expect(lines.some((line) => line.includes('trace_id'))).toBe(false);
      expect(receiver.spans.slice(before).some((s) => s.attributes['url.path'] === '/v2/cheeses' && s.resource['service.version'] !== 'test')).toBe(false);
    } finally {
      await plain.close();
    }
  });
});

describe('the tracing variables', () => {
  it('are validated at start: a malformed endpoint or header list names itself, headers are decoded', async () => {
    const { loadConfig } = await import('../../src/config.js');
    const base = { DATA_DIR: t.config.dataDir, APP_SECRET: 'x'.repeat(40) };
    expect(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'no pair' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
    const config = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=cheese' });
    expect(config.tracing).toEqual({ endpoint: 'http://127.0.0.1:4318', tracesEndpoint: undefined, headers: { authorization: 'Bearer abc', 'x-team': 'cheese' }, serviceName: 'fromagerie' });
    expect(loadConfig(base).tracing.endpoint).toBeUndefined();
  });
});

describe('where spans are sent', () => {
  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended (a trailing slash too)', async () => {
    for (const [settings, probe] of [
      [{ tracesEndpoint: `${receiver.endpoint}/v1/traces` }, 'probe-traces-endpoint'],
      [{ endpoint: `${receiver.endpoint}/` }, 'probe-endpoint-slash'],
    ] as const) {
      const tracer = await startTracing(settings, { serviceVersion: 'test' });
      expect(tracer.enabled).toBe(true);
      await tracer.inRootSpan(probe, {}, async () => undefined);
      await tracer.shutdown();
      expect(receiver.spans.some((s) => s.name === probe)).toBe(true);
    }
    expect((await startTracing({}, { serviceVersion: 'test' })).enabled).toBe(false);
  });
});
