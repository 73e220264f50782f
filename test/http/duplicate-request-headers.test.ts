import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { nodeRequest, portOf, type NodeResponse } from '../helpers/raw.js';

/**
 * A header that takes one value, sent on two lines (issue 28 §1). fetch merges such lines, so
 * these requests go through node:http, which writes one line per array element; Node's server
 * then keeps only the first Authorization, Content-Type or If-Unmodified-Since and joins the
 * others with ", ".
 */
let t: TestApp;
let admin: string;
let readOnly: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
  readOnly = await t.key(['read:cheeses']);
});
afterAll(() => t.close());

type Answer = NodeResponse;
const send = (method: string, path: string, headers: Record<string, string | string[]>, body?: string) => nodeRequest(portOf(t.http.baseUrl), method, path, headers, body);

const cheeseCount = async () => (await t.database.db.selectFrom('cheeses').select('id').execute()).length;
const expectTwice = (answer: Answer, field: string) => {
  expect(answer.status, answer.text).toBe(400);
  // The dashboard's errors are pages, saying the same.
  if (answer.headers['content-type']?.startsWith('text/html')) return expect(answer.text).toMatch(/Send one [\w-]+ header, not several\./);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.body).toMatchObject({ code: 400, type: 'invalid_request', errors: [{ field, message: 'must be sent once' }] });
  expect(answer.body.message).toMatch(/^Send one .+ header, not several\.$/);
};

describe('two Authorization headers are a 400 on every kind of route, whichever comes first', () => {
  const twice = (first: string, second: string) => ({ authorization: [`Bearer ${first}`, `Bearer ${second}`] });

  it('an API write: neither the read-only key nor the admin key acts, nothing is created', async () => {
    const before = await cheeseCount();
    const body = JSON.stringify({ name: 'Two Credentials' });
    for (const [first, second] of [[readOnly, admin], [admin, readOnly]] as const) {
      expectTwice(await send('POST', '/v2/cheeses', { ...twice(first, second), 'content-type': 'application/json' }, body), 'authorization');
    }
    expect(await cheeseCount()).toBe(before);
    // One line of the same key still works.
    expect((await send('POST', '/v2/cheeses', { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body)).status).toBe(201);
  });

  it('an API read, a public operation, an unrouted path, the OAuth token endpoint, the dashboard, the docs', async () => {
    const basic = `Basic ${Buffer.from('client:secret').toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const kinds: [string, string, Record<string, string | string[]>, string?][] = [
      ['GET', '/v2/api-keys', twice(admin, readOnly)],
      ['GET', '/v2/cheeses', twice(readOnly, admin)],
      ['GET', '/v2/health', twice(readOnly, admin)],
      ['GET', '/v2/openapi.json', twice(readOnly, admin)],
      ['GET', '/v2/no-such-thing', twice(readOnly, admin)],
      ['POST', '/oauth/token', { authorization: [basic, `Basic ${Buffer.from('other:secret').toString('base64')}`], ...form }, 'grant_type=client_credentials'],
      ['GET', '/dashboard/login', twice(readOnly, admin)],
      ['GET', '/docs/', twice(readOnly, admin)],
    ];
    for (const [method, path, headers, body] of kinds) expectTwice(await send(method, path, headers, body), 'authorization');
  });
});

describe('every other single-valued request header we read: two lines are a 400 and change nothing', () => {
  const create = async (name: string) => (await t.http.post('/v2/cheeses', { headers: { authorization: `Bearer ${admin}` }, json: { name } })).body;

  it('X-API-Key (Node joins the two into one value, which no key matches)', async () => {
    expectTwice(await send('GET', '/v2/cheeses', { 'x-api-key': [readOnly, admin] }), 'x-api-key');
    expectTwice(await send('GET', '/v2/cheeses', { 'x-api-key': [admin, admin] }), 'x-api-key');
  });

  it('Content-Type: JSON then multipart is not read as JSON', async () => {
    const before = await cheeseCount();
    const headers = { authorization: `Bearer ${admin}`, 'content-type': ['application/json', 'multipart/form-data; boundary=x'] };
    expectTwice(await send('POST', '/v2/cheeses', headers, JSON.stringify({ name: 'Two Types' })), 'content-type');
    expect(await cheeseCount()).toBe(before);
  });

  it('If-Unmodified-Since: a write does not pick one of two dates', async () => {
    const cheese = await create('Two Dates');
    const past = new Date(Date.parse(cheese.updatedAt) - 60_000).toUTCString();
    const future = new Date(Date.now() + 60_000).toUTCString();
    const answer = await send('POST', `/v2/cheeses/${cheese.id}?name=Renamed`, { authorization: `Bearer ${admin}`, 'if-unmodified-since': [future, past] });
    expectTwice(answer, 'if-unmodified-since');
    expect((await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: { authorization: `Bearer ${admin}` } })).body.name).toBe('Two Dates');
  });

  it('Idempotency-Key', async () => {
    const before = await cheeseCount();
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'idempotency-key': ['key-one', 'key-two'] };
    expectTwice(await send('POST', '/v2/orders', headers, JSON.stringify({ items: [] })), 'idempotency-key');
    expect(await cheeseCount()).toBe(before);
  });

  it('Sec-Fetch-Site on a dashboard form', async () => {
    expectTwice(await send('POST', '/dashboard/login', { 'sec-fetch-site': ['same-origin', 'cross-site'], 'content-type': 'application/x-www-form-urlencoded' }, 'username=a&password=b'), 'sec-fetch-site');
  });

  it('list headers are not refused: two If-None-Match lines mean their union (304 when either matches)', async () => {
    const cheese = await create('Listed Twice');
    const read = await t.http.get(`/v2/cheeses/${cheese.id}`, { headers: { authorization: `Bearer ${readOnly}` } });
    const etag = read.headers.get('etag')!;
    const answer = await send('GET', `/v2/cheeses/${cheese.id}`, { authorization: `Bearer ${readOnly}`, 'if-none-match': ['"other"', etag] });
    expect(answer.status).toBe(304);
  });
});
