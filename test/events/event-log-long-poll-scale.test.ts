import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { POSTGRES_URL } from '../helpers/database.js';
import { bearer } from '../helpers/http.js';

/**
 * Held long polls cost the database nothing per listener: one watcher per instance reads the
 * log's head (once per tick while anyone waits), whatever the number of held requests.
 * Counted with PostgreSQL's own statistics of the outbox table of this test's schema (scans of
 * it, by index or sequentially), which no other test file touches. PostgreSQL only: SQLite keeps
 * no such counts (the long poll itself is tested on both: event-log-long-poll.test.ts).
 */
const LISTENERS = 100;
/** The watcher's tick, made short so a window of a few ticks is short too. */
const WATCH_MS = 10;
const TICKS = 15;
/** The one kind the listeners wait for: creating a cheese records it. */
const KIND = 'cheese.new_arrival';
let t: TestApp;
let staff: Record<string, string>;

beforeAll(async () => {
  if (!POSTGRES_URL) return;
  t = await createTestApp({ config: { eventsMaxHeldPerAccount: LISTENERS, eventsWatchIntervalMs: WATCH_MS } });
  staff = bearer(await t.key(['admin']));
});
afterAll(() => t?.close());

/** Scans of this schema's outbox so far (statistics flushed first, so the count is current). */
async function outboxScans(): Promise<number> {
  await sql`select pg_stat_force_next_flush()`.execute(t.database.db).catch(() => undefined);
  const { rows } = await sql<{ scans: string }>`select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where schemaname = ${t.config.databaseSchema} and relname = 'outbox'`.execute(t.database.db);
  return Number(rows[0]?.scans ?? 0);
}

/**
 * A listener as the SDK's tail is one: it polls from a fixed position, filtered to the one kind
 * this test makes, and polls again when a wait ends empty, until it receives an event. So a slow
 * arrival of the hundred connections (CI saw over 20 s) or an event of another kind becoming
 * visible late cannot empty the pool of held requests before the count is taken.
 */
function listen(from: string): Promise<number> {
  const url = `${t.http.baseUrl}/v2/events?after=${encodeURIComponent(from)}&type=${KIND}&wait=25`;
  return new Promise<number>((resolve) => {
    const request = http.get(url, { headers: staff, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
        if (response.statusCode !== 200) return resolve(response.statusCode ?? 0);
        const page = JSON.parse(Buffer.concat(chunks).toString()) as { items: unknown[] };
        if (page.items.length > 0) return resolve(200);
        void listen(from).then(resolve);
      });
    });
    request.on('error', () => resolve(0));
  });
}

describe.skipIf(!POSTGRES_URL)(`${LISTENERS} held long polls on one instance`, () => {
  it('read the outbox about as often as one does: the watcher, not each request', async () => {
    const head = await t.http.get('/v2/events?after=now', { headers: staff });
    expect(head.status).toBe(200);
    const from = (head.body as { nextAfter: string }).nextAfter;
    const held = Array.from({ length: LISTENERS }, () => listen(from));
    // Every listener is held once one more request is the 429 of the per-account limit.
    await expect.poll(async () => (await t.http.get(`/v2/events?after=now&type=${KIND}&wait=1`, { headers: staff })).status, { timeout: 60_000, interval: 50 }).toBe(429);
    const before = await outboxScans();
    await new Promise((resolve) => setTimeout(resolve, TICKS * WATCH_MS));
    const during = (await outboxScans()) - before;
    // 15 ticks are about 15 reads of the head; one read per held request per tick would be 1,500.
    // The bound allows for the held requests' own first reads (100), whose statistics another
    // connection may flush during the window (PostgreSQL flushes each backend's at most every second).
    expect(during).toBeLessThan(LISTENERS + 5 * TICKS);
    // And each still answers when an event arrives.
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Scale cheese ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 5 } });
    expect(created.status).toBe(201);
    const statuses = await Promise.all(held);
    expect(statuses.every((status) => status === 200)).toBe(true);
  }, 90_000);
});
