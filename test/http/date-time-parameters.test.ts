import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';

/**
 * Issue 28: every `date-time` parameter, query or body, of every operation the OpenAPI
 * document lists (so a new one is covered without touching this file), takes exactly the
 * instants between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: a leap second, year
 * 0000, an offset carrying past either end or garbage is a 4xx naming the parameter, never a
 * 500 (PostgreSQL refused year 0 and `+010000`; `:60` parsed to NaN). And the dashboard's
 * day filters likewise.
 */
let t: TestApp;
let staff: Record<string, string>;
let webhookId: number;

beforeAll(async () => {
  t = await createTestApp();
  staff = bearer(await t.key(['admin']));
  const hook = await t.http.post('/v2/webhooks', { headers: staff, json: { url: 'http://127.0.0.1:9/never', events: ['cheese.new_arrival'] } });
  expect(hook.status).toBe(201);
  webhookId = hook.body.id;
});
afterAll(() => t.close());

interface Target {
  method: string;
  path: string;
  where: 'query' | 'body';
  name: string;
}

type Schema = { format?: string; anyOf?: Schema[]; oneOf?: Schema[]; properties?: Record<string, Schema> };
const isDateTime = (schema: Schema | undefined): boolean => schema?.format === 'date-time' || [...(schema?.anyOf ?? []), ...(schema?.oneOf ?? [])].some(isDateTime);

/** Every `date-time` query parameter and top-level body field of the running app's operations. */
async function dateTimeTargets(): Promise<Target[]> {
  const doc = await t.http.get('/v2/openapi.json');
  expect(doc.status).toBe(200);
  const targets: Target[] = [];
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, { parameters?: { in: string; name: string; schema?: Schema }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } }>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (typeof operation !== 'object' || operation === null) continue;
      for (const parameter of operation.parameters ?? []) {
        if (isDateTime(parameter.schema)) targets.push({ method: method.toUpperCase(), path, where: 'query', name: parameter.name });
      }
      const body = operation.requestBody?.content?.['application/json']?.schema;
      for (const [name, schema] of Object.entries(body?.properties ?? {})) if (isDateTime(schema)) targets.push({ method: method.toUpperCase(), path, where: 'body', name });
    }
  }
  return targets;
}

function send(target: Target, value: string) {
  const path = `/v2${target.path.replace('{id}', String(webhookId))}`;
  if (/\{/.test(path)) throw new Error(`no value for a path parameter of ${target.path}: add one here`);
  return target.where === 'query'
    ? t.http.request(target.method, `${path}?${target.name}=${encodeURIComponent(value)}`, { headers: staff })
    : t.http.request(target.method, path, { headers: staff, json: { [target.name]: value } });
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** `ms` written in an offset of `offsetMin` minutes, with 0 to 6 fraction digits. */
function written(ms: number, offsetMin: number, digits: number): string {
  const local = new Date(ms + offsetMin * 60_000);
  const year = local.getUTCFullYear();
  const fraction = digits === 0 ? '' : `.${pad(local.getUTCMilliseconds(), 3)}000`.slice(0, digits + 1);
  const zone = offsetMin === 0 ? 'Z' : `${offsetMin < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`;
  return `${year < 0 ? '-' : ''}${pad(year, 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${fraction}${zone}`;
}

const offset = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });
const digits = fc.integer({ min: 0, max: 6 });
/** Instants in range, in any offset (the fraction cut, never rounded, so the text stays in range). */
const valid = fc.oneof(
  fc.constantFrom('0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59Z', '2026-06-30T23:59:59Z', '2024-02-29T12:00:00.5+01:00', '0001-01-01T01:00:00+01:00', '9999-12-31T22:59:59-01:00'),
  fc.tuple(fc.integer({ min: EARLIEST, max: LATEST }), offset, digits).map(([ms, minutes, d]) => written(ms, minutes, d)).filter((text) => {
    const at = Date.parse(text);
    return !/^-|^0000/.test(text) && at >= EARLIEST && at <= LATEST && text.slice(0, 4) <= '9999';
  }),
);
/** Leap seconds, year 0000, offsets carrying past either end, impossible fields and garbage. */
const invalid = fc.oneof(
  fc.constantFrom(
    '2026-06-30T23:59:60Z', '2016-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z', '9999-12-31T23:59:59-00:01', '9999-12-31T23:30:00-01:00',
    '0001-01-01T00:00:00+00:01', '2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:00:00', '2026-01-01', '', 'yesterday', '2026-01-01T00:00:00+24:00', '+010000-01-01T00:00:00Z',
  ),
  fc.tuple(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), offset).map(([y, m, d, minutes]) => `${pad(y, 4)}-${pad(m)}-${pad(d)}T23:59:60${minutes === 0 ? 'Z' : written(0, minutes, 0).slice(-6)}`),
  fc.tuple(fc.integer({ min: 0, max: 86_399_999 }), offset, digits).map(([ms, minutes, d]) => `0000${written(Date.parse('2001-01-01T00:00:00Z') + ms, minutes, d).slice(4)}`),
  fc.tuple(fc.integer({ min: 1, max: 23 * 60 + 59 }), fc.integer({ min: 0, max: 59 })).map(([minutes, s]) => `9999-12-31T23:59:${pad(s)}-${pad(Math.trunc(minutes / 60))}:${pad(minutes % 60)}`).filter((text) => Date.parse(text) > LATEST),
  fc.string({ maxLength: 40 }),
);

describe('every date-time parameter', () => {
  it('is found in the OpenAPI document: the event log, orders, deliveries, replays and API keys', async () => {
    const names = (await dateTimeTargets()).map((target) => `${target.method} ${target.path} ${target.name}`);
    expect(names).toEqual(expect.arrayContaining([
      'GET /events created_gte', 'GET /events created_lt', 'GET /orders from', 'GET /orders to',
      'GET /webhooks/{id}/deliveries from', 'GET /webhooks/{id}/deliveries to', 'POST /webhooks/{id}/replay from', 'POST /webhooks/{id}/replay to', 'POST /api-keys expiresAt',
    ]));
  });

  it('refuses what is no instant in range with a 4xx naming it, and takes every instant in range', async () => {
    for (const target of await dateTimeTargets()) {
      await fc.assert(
        fc.asyncProperty(invalid, async (value) => {
          const res = await send(target, value);
          expect(res.status, `${target.method} ${target.path} ${target.name}=${value}: ${res.text}`).toBe(target.where === 'query' ? 400 : 422);
          expect(res.body.errors.map((e: { field: string }) => e.field), `${target.name}=${value}`).toContain(target.name);
        }),
        { numRuns: 40 },
      );
      await fc.assert(
        fc.asyncProperty(valid, async (value) => {
          const res = await send(target, value);
          expect(res.status, `${target.method} ${target.path} ${target.name}=${value}: ${res.text}`).toBeLessThan(500);
          // A body needs its other fields: the instant itself is not what is refused.
          if (target.where === 'query') expect(res.status, `${target.name}=${value}: ${res.text}`).toBe(200);
          else expect((res.body.errors ?? []).map((e: { field: string }) => e.field)).not.toContain(target.name);
        }),
        { numRuns: 40 },
      );
    }
  }, 120_000);
});

describe('the dashboard\'s delivery filter', () => {
  it('refuses year 0000 with the page and a 422 naming the field, and takes 9999-12-31 as the last day', async () => {
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn('admin', t.config.adminPassword!);
    const path = `/dashboard/webhooks/${webhookId}/deliveries`;
    for (const query of ['from=0000-01-01', 'to=0000-12-31', 'from=2026-02-30', 'to=10000-01-01']) {
      const page = await browser.get(`${path}?${query}`);
      expect(page.status, query).toBe(422);
      expect(page.html, query).toContain('must be a date (YYYY-MM-DD) between 0001-01-01 and 9999-12-31');
    }
    for (const query of ['from=0001-01-01&to=9999-12-31', 'to=9999-12-31', 'from=9999-12-31']) {
      const page = await browser.get(`${path}?${query}`);
      expect(page.status, query).toBe(200);
    }
  });
});
