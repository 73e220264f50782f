import fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * GET /v2/events (issue 21): the outbox read as a log, through real HTTP on a real database.
 * No dispatcher runs here: the log does not depend on it.
 */
let t: TestApp;
let staff: Record<string, string>;
let alice: Record<string, string>;
let bob: Record<string, string>;
let cheeseId: number;
let run = 0;

const ORDER = (id: number) => ({ items: [{ cheeseId: id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Rue', city: 'Poligny', country: 'FR' } } });
/** A v7 event id recorded `daysAgo` days ago. */
const oldId = (daysAgo: number) => `evt_${(Date.now() - daysAgo * 86_400_000).toString(16).padStart(12, '0')}7abc8${'0'.repeat(15)}`;

async function newCheese(headers = staff, extra: Record<string, string> = {}): Promise<{ id: number }> {
  const res = await t.http.post('/v2/cheeses', { headers: { ...headers, ...extra }, json: { name: `Log cheese ${++run} ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 50 } });
  expect(res.status).toBe(201);
  return res.body as { id: number };
}

async function events(query: string, headers = staff) {
  return t.http.get(`/v2/events${query}`, { headers });
}

/**
 * The list once it holds `count` items. On PostgreSQL an event is listed once no transaction
 * that began writing before it is still open, anywhere on the server (other test files'
 * included): a few milliseconds after its commit, not at once.
 */
async function listed(query: string, count = 1, headers = staff) {
  for (let i = 0; i < 200; i++) {
    const res = await events(query, headers);
    if (res.status !== 200 && res.status !== 304) return res;
    if (res.status === 200 && res.body.items.length >= count) return res;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${query} never listed ${count}`);
}

beforeAll(async () => {
  t = await createTestApp();
  staff = bearer(await t.key(['admin']));
  alice = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
  bob = bearer(await t.key(['read:orders', 'write:orders', 'read:cheeses'], 'customer'));
  cheeseId = (await newCheese()).id;
});
afterAll(() => t.close());

describe('an event', () => {
  it('is the envelope with the object and pending_webhooks, the same in the list and alone; a public one without the Idempotency-Key', async () => {
    const cheese = await newCheese(staff, { 'idempotency-key': 'log-key-1' });
    const list = await listed(`?type=cheese.new_arrival&object_type=cheese&object_id=${cheese.id}`);
    expect(list.status).toBe(200);
    expect(list.headers.get('x-poll-interval')).toBe('5');
    expect(list.body.items).toHaveLength(1);
    const item = list.body.items[0];
    expect(Object.keys(item)).toEqual(['id', 'type', 'created_at', 'data', 'metadata', 'pending_webhooks']);
    expect(item).toMatchObject({ type: 'cheese.new_arrival', data: { cheese_id: String(cheese.id) }, pending_webhooks: 0 });
    // A catalogue event is public: it never carries the request that caused it (issue 28).
    expect(item.metadata).toMatchObject({ object_type: 'cheese', object_id: String(cheese.id), idempotency_key: null, request_id: null, environment: 'development' });

    const one = await t.http.get(`/v2/events/${item.id}`, { headers: staff });
    expect(one.status).toBe(200);
    // Byte for byte: the item in the list's text is the single event's text.
    expect(list.text).toContain(one.text);
    const etag = one.headers.get('etag')!;
    expect((await t.http.get(`/v2/events/${item.id}`, { headers: { ...staff, 'if-none-match': etag } })).status).toBe(304);
  });

  it('has no Idempotency-Key recorded when none was sent', async () => {
    const cheese = await newCheese();
    const list = await listed(`?object_type=cheese&object_id=${cheese.id}`);
    expect(list.body.items[0].metadata.idempotency_key).toBeNull();
  });
});

describe('visibility', () => {
  it('shows a customer its own events and public ones; another\'s is a 404; staff see all', async () => {
    const a = await t.http.post('/v2/orders', { headers: alice, json: ORDER(cheeseId) });
    const b = await t.http.post('/v2/orders', { headers: bob, json: ORDER(cheeseId) });
    expect([a.status, b.status]).toEqual([201, 201]);
    const orderEvent = async (orderId: number) => (await listed(`?type=order.placed&object_type=order&object_id=${orderId}`)).body.items[0];
    const [ea, eb] = [await orderEvent(a.body.id), await orderEvent(b.body.id)];
    expect(ea.metadata.object_id).toBe(String(a.body.id));

    const seen = (await events('?type=order.*&limit=100', alice)).body.items.map((e: { id: string }) => e.id);
    expect(seen).toContain(ea.id);
    expect(seen).not.toContain(eb.id);
    expect((await t.http.get(`/v2/events/${eb.id}`, { headers: alice })).status).toBe(404);
    expect((await t.http.get(`/v2/events/${ea.id}`, { headers: alice })).status).toBe(200);
    // `after` an invisible event is a 404 too.
    expect((await events(`?order=asc&after=${eb.id}`, alice)).status).toBe(404);
    // Public (catalogue) events reach every customer with read:cheeses.
    expect((await events('?type=cheese.new_arrival', alice)).body.items.length).toBeGreaterThan(0);
    const all = (await events('?type=order.placed&limit=100')).body.items.map((e: { id: string }) => e.id);
    expect(all).toEqual(expect.arrayContaining([ea.id, eb.id]));
  });

  it('shows only the kinds the credential\'s scopes cover: an exact kind it may not read is a 403', async () => {
    const reader = bearer(await t.key(['read:cheeses'], 'customer'));
    const res = await events('?type=order.placed', reader);
    expect(res.status).toBe(403);
    expect(res.body.type).toBe('forbidden');
    const everything = await events('?limit=100', reader);
    expect(everything.status).toBe(200);
    expect(everything.body.items.every((e: { type: string }) => e.type.startsWith('cheese.'))).toBe(true);
  });

  it('refuses a request without a credential', async () => {
    expect((await t.http.get('/v2/events')).status).toBe(401);
  });
});

describe('filters and their validation', () => {
  it('takes kinds and wildcards, repeated or comma-separated', async () => {
    const comma = await events('?type=cheese.new_arrival,order.placed&limit=100');
    const repeated = await events('?type=cheese.new_arrival&type=order.placed&limit=100');
    expect(comma.status).toBe(200);
    expect(repeated.text).toBe(comma.text);
    const kinds = new Set(comma.body.items.map((e: { type: string }) => e.type));
    expect([...kinds].sort()).toEqual(['cheese.new_arrival', 'order.placed']);
    const wild = await events('?type=order.*&limit=100');
    expect(wild.body.items.every((e: { type: string }) => e.type.startsWith('order.'))).toBe(true);
  });

  it('filters by time', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    const cheese = await newCheese();
    await listed(`?object_type=cheese&object_id=${cheese.id}`);
    const since = await events(`?created_gte=${before}&type=cheese.new_arrival&limit=100`);
    expect(since.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toContain(String(cheese.id));
    expect((await events(`?created_lt=${before}&object_type=cheese&object_id=${cheese.id}`)).body.items).toEqual([]);
  });

  it.each([
    ['an unknown kind', '?type=order.nope'],
    ['a wildcard matching nothing', '?type=nope.*'],
    ['more than 20 kinds', `?type=${Array.from({ length: 21 }, () => 'order.placed').join(',')}`],
    ['an empty kind', '?type=order.placed,'],
    ['a date that is not one', '?created_gte=yesterday'],
    ['a date range the wrong way round', '?created_gte=2026-01-02T00:00:00Z&created_lt=2026-01-01T00:00:00Z'],
    ['a limit of 0', '?limit=0'],
    ['a limit over 100', '?limit=101'],
    ['a cursor this API did not give', '?cursor=abc.def'],
    ['object_id without object_type', '?object_id=1'],
    ['delivery_success=true', '?delivery_success=true'],
    ['after with order=desc', `?order=desc&after=${oldId(0)}`],
    ['an after that is no event id', '?order=asc&after=evt_123'],
    ['an unknown parameter', '?sort=asc'],
  ])('answers 400 to %s, in the error shape', async (_what, query) => {
    const res = await events(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 400, type: 'invalid_request' });
    expect(typeof res.body.message).toBe('string');
  });

  it('refuses a cursor with other filters than its own', async () => {
    const page = await events('?limit=1&type=cheese.new_arrival');
    expect(page.body.hasMore).toBe(true);
    const other = await events(`?limit=1&type=order.placed&cursor=${page.body.nextCursor}`);
    expect(other.status).toBe(400);
  });

  it('answers 404 for an unknown event and 410 for one older than the log keeps', async () => {
    const unknown = await t.http.get(`/v2/events/${oldId(0)}`, { headers: staff });
    expect(unknown.status).toBe(404);
    expect(unknown.body.type).toBe('not_found');
    const gone = await t.http.get(`/v2/events/${oldId(31)}`, { headers: staff });
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ code: 410, type: 'not_found' });
    expect((await events(`?order=asc&after=${oldId(31)}`)).status).toBe(410);
    expect((await events(`?order=asc&after=${oldId(0)}`)).status).toBe(404);
  });
});

describe('paging and polling', () => {
  it('walks newest first with stable cursors while new events arrive', async () => {
    let last = { id: 0 };
    for (let i = 0; i < 5; i++) last = await newCheese();
    await listed(`?object_type=cheese&object_id=${last.id}`);
    const first = await events('?type=cheese.new_arrival&limit=100');
    const expected = first.body.items.map((e: { id: string }) => e.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await events(`?type=cheese.new_arrival&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      walked.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
      // Events recorded mid-walk land above it, never inside the pages still to come.
      if (++pages === 1) await newCheese();
    } while (cursor);
    expect(walked).toEqual(expected);
    expect(new Set(walked).size).toBe(walked.length);
  });

  it('polls forward with after, answering 304 while nothing is new', async () => {
    const newest = await newCheese();
    const latest = (await listed(`?object_type=cheese&object_id=${newest.id}`)).body.items[0].id as string;
    expect((await events('?limit=1')).body.items[0].id).toBe(latest);
    const empty = await events(`?order=asc&after=${latest}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ items: [], hasMore: false, nextCursor: null, nextAfter: expect.stringMatching(/^pos_/) });
    expect(empty.headers.get('x-poll-interval')).toBe('5');
    const etag = empty.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const again = await events(`?order=asc&after=${latest}`, { ...staff, 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    const a = await newCheese();
    const b = await newCheese();
    const fresh = await listed(`?order=asc&after=${latest}`, 2, { ...staff, 'if-none-match': etag });
    expect(fresh.status).toBe(200);
    expect(fresh.body.items.map((e: { data: { cheese_id: string } }) => e.data.cheese_id)).toEqual([String(a.id), String(b.id)]);
    // Forward by cursor too.
    const one = await events(`?order=asc&after=${latest}&limit=1`);
    expect(one.body.items[0].data.cheese_id).toBe(String(a.id));
    const next = await events(`?order=asc&limit=1&cursor=${one.body.nextCursor}`);
    expect(next.body.items[0].data.cheese_id).toBe(String(b.id));
  });
});

describe('the OpenAPI document', () => {
  it('describes every event of a real page as `Event`, one kind per type', async () => {
    await t.http.post('/v2/orders', { headers: alice, json: ORDER(cheeseId) });
    const page = await listed('?limit=100&type=order.placed,cheese.new_arrival', 2);
    const document = JSON.parse(fs.readFileSync('docs/openapi.json', 'utf8')) as { components: object };
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    const validate = ajv.compile({ $ref: '#/components/schemas/Event', components: document.components });
    for (const item of page.body.items) expect(validate(item), JSON.stringify(validate.errors)).toBe(true);
    // Closed: a field no kind has is refused.
    expect(validate({ ...page.body.items[0], extra: 1 })).toBe(false);
  });
});
