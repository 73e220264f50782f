import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fromagerie, FromagerieError, type RequestLogEntry } from '../../packages/sdk/src/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let sdk: Fromagerie;

beforeAll(async () => {
  t = await createTestApp();
  sdk = new Fromagerie({ apiKey: await t.key(['read:logs', 'read:cheeses', 'read:orders'], 'customer'), baseUrl: t.http.baseUrl, maxRetries: 0 });
});
afterAll(() => t.close());

describe('the request log through the SDK', () => {
  it('tail yields each new request as it is recorded, with its filters; get reads one; list pages', async () => {
    const controller = new AbortController();
    const seen: RequestLogEntry[] = [];
    // Where the tail starts: the log's head now, so what follows is all it yields.
    const head = await sdk.requestLogs.list({ after: 'now' });
    const tail = (async () => {
      for await (const entry of sdk.requestLogs.tail({ after: head.nextAfter!, filters: { status: '4xx' }, signal: controller.signal, waitSeconds: 10 })) {
        seen.push(entry);
        if (seen.length === 2) controller.abort();
      }
    })();
    await sdk.cheeses.list({ limit: 1 });
    await expect(sdk.orders.get(987654)).rejects.toBeInstanceOf(FromagerieError);
    await expect(sdk.orders.get(987655)).rejects.toBeInstanceOf(FromagerieError);
    await tail;
    expect(seen.map((entry) => [entry.status, entry.path])).toEqual([
      [404, '/v2/orders/987654'],
      [404, '/v2/orders/987655'],
    ]);
    const one = await sdk.requestLogs.get(seen[0]!.requestId);
    expect(one).toEqual(seen[0]);
    expect(one.credential.kind).toBe('api_key');
    const page = await sdk.requestLogs.list({ limit: 1, method: 'GET' });
    expect(page.items).toHaveLength(1);
    expect(page.hasMore).toBe(true);
  });
});
