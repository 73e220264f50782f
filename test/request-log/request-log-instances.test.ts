import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, type TestStorage } from '../helpers/database.js';
import { apiKey } from '../helpers/http.js';

/**
 * Two instances on one database record at once, each in its own batches, while a tail on one
 * of them polls forward: every request is listed once, none skipped. On PostgreSQL ids are
 * taken before commit, so a batch that takes its ids first and commits last would fall behind
 * a tail that already moved past the other's (the writer's advisory lock is what prevents it).
 */
describe.each(['event-loop', 'thread'] as const)('the request log with two instances writing (writer on the %s)', (requestLogWriter) => {
  let storage: TestStorage;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    storage = await createTestStorage();
    a = await createTestApp({ storage, config: { requestLogWriter } });
    b = await createTestApp({ storage, config: { requestLogWriter } });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await storage.dispose();
  });

  it('a tail polling forward lists every request of both instances exactly once', async () => {
    const key = apiKey(await a.key(['read:logs', 'read:cheeses'], 'customer'));
    const head = await a.http.get('/v2/request-logs?after=now', { headers: key });
    let after: string = head.body.nextAfter;
    const sent = new Set<string>();
    const seen: string[] = [];
    let sending = true;
    const poller = (async () => {
      while (sending || seen.length < sent.size) {
        const page = await a.http.get(`/v2/request-logs?after=${encodeURIComponent(after)}&limit=100&wait=1`, { headers: key });
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((item: { requestId: string }) => item.requestId));
        after = page.body.nextAfter;
        if (!sending && page.body.items.length === 0 && seen.length < sent.size) {
          await a.app.modules.requestLog.provides.flush();
          await b.app.modules.requestLog.provides.flush();
        }
      }
    })();
    // Both instances answer at once, in rounds, so their batches interleave and overlap.
    for (let round = 0; round < 15; round++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const id = `two-${round}-${i}`;
          sent.add(id);
          return (i % 2 === 0 ? a : b).http.get('/v2/cheeses?limit=1', { headers: { ...key, 'x-request-id': id } });
        }),
      );
    }
    sending = false;
    await Promise.race([poller, new Promise((_, reject) => setTimeout(() => reject(new Error(`the tail listed ${seen.length} of ${sent.size}`)), 20_000))]);
    expect(seen.filter((id) => id.startsWith('two-')).sort()).toEqual([...sent].sort());
  }, 40_000);
});
