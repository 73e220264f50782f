import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../src/kernel/tracing.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';

const SERVER = 2;

let receiver: OtlpReceiver;
let t: TestApp;
let auth: Record<string, string>;
const logLines: string[] = [];

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  const tracing = { endpoint: receiver.endpoint };
  const tracer = await startTracing(tracing, { serviceVersion: 'test' });
  t = await createTestApp({ seed: true, logLines, config: { tracing, tracer } });
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
});
