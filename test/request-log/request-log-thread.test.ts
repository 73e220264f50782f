import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Capture } from '../../src/modules/request-log/request-log.capture.js';
import { ThreadWriter } from '../../src/modules/request-log/request-log.writer.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { createTestStorage, type TestStorage } from '../helpers/database.js';
import { apiKey } from '../helpers/http.js';

/**
 * The request log's writer thread (request-log.writer.ts), as servers run it: batches written on
 * a connection of the thread's own, seen by the app's connection, its commits told to the app's
 * listeners; a refused batch or a thread that cannot start loses only its batch.
 */
let storage: TestStorage;
let t: TestApp;
let reader: Database;

beforeAll(async () => {
  storage = await createTestStorage();
  // Watched every minute only: a held tail that answers at once was woken by the thread's commit.
  t = await createTestApp({ storage, config: { requestLogWriter: 'thread', eventsWatchIntervalMs: 60_000 } });
  reader = t.database;
});
afterAll(async () => {
  await t.close();
  await storage.dispose();
});

let n = 0;
function capture(overrides: Partial<Record<'url' | 'method' | 'status', unknown>> = {}): Capture {
  return [`req_thread_${++n}`, 1, 'test', Date.parse('2026-11-29T10:00:01.500Z'), 1500, ('method' in overrides ? overrides.method : 'GET') as string, '/v2/orders/:id', (overrides.url ?? '/v2/orders/7?api_key=sk_test_0123456789abcdef') as string, (overrides.status ?? 200) as number, 'api_key', 'sk_test_01234567', null, '127.0.0.1', 'vitest', null, null, null, null, null];
}

async function rowsOf(requestIds: string[]) {
  return reader.db.selectFrom('request_logs').selectAll().where('request_id', 'in', requestIds).orderBy('id').execute();
}

describe('ThreadWriter', () => {
  it('writes each batch in the thread, as entryOf makes entries, and tells of each commit', async () => {
    let commits = 0;
    const writer = new ThreadWriter(t.database.reach, () => commits++);
    try {
      const first = [capture(), capture({ status: 404 })];
      await writer.write(first);
      const second = [capture({ method: 'POST', url: '/v2/orders' })];
      await writer.write(second);
      expect(commits).toBe(2);
      const rows = await rowsOf([...first, ...second].map((c) => c[0]));
      expect(rows.map((row) => [row.request_id, row.method, Number(row.status), row.path, row.query])).toEqual([
        [first[0]![0], 'GET', 200, '/v2/orders/7', 'api_key=[redacted]'],
        [first[1]![0], 'GET', 404, '/v2/orders/7', 'api_key=[redacted]'],
        [second[0]![0], 'POST', 200, '/v2/orders', ''],
      ]);
      // Arrival: the answer's time less its duration.
      expect(new Date(rows[0]!.created_at as string).toISOString()).toBe('2026-11-29T10:00:00.000Z');
    } finally {
      await writer.close();
    }
  });

  it('a batch the database refuses fails alone: the thread writes the next one', async () => {
    const writer = new ThreadWriter(t.database.reach, () => {});
    try {
      const refused = [capture(), capture({ method: null })];
      await expect(writer.write(refused)).rejects.toThrow(/null|NOT NULL/i);
      expect(await rowsOf(refused.map((c) => c[0]))).toEqual([]);
      const next = [capture()];
      await writer.write(next);
      expect(await rowsOf(next.map((c) => c[0]))).toHaveLength(1);
    } finally {
      await writer.close();
    }
  });

  it('a thread that cannot open the database fails its batch, and the next batch starts it anew', async () => {
    // A directory that is not there: the thread's first statement (opening the file) throws and
    // the thread ends. The writer reads its location at each start, so fixing it here is what
    // the next thread gets.
    const missing = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-thread-')), 'gone', 'deeper');
    const location: { dataDir: string; databaseUrl?: string | undefined; databaseSchema?: string | undefined } = { dataDir: missing };
    const writer = new ThreadWriter(location, () => {});
    try {
      await expect(writer.write([capture()])).rejects.toThrow(/writer thread/);
      Object.assign(location, t.database.reach);
      const batch = [capture()];
      await expect(writer.write(batch)).resolves.toBeUndefined();
      expect(await rowsOf(batch.map((c) => c[0]))).toHaveLength(1);
    } finally {
      await writer.close();
    }
  });
});

describe('an app whose request log is written by its thread', () => {
  it('wakes a held tail with the thread\'s commit, and writes what is queued when it closes', async () => {
    const key = apiKey(await t.key(['read:logs', 'read:cheeses'], 'customer'));
    const head = await t.http.get('/v2/request-logs?after=now', { headers: key });
    const held = t.http.get(`/v2/request-logs?after=${encodeURIComponent(head.body.nextAfter)}&wait=20&status=404`, { headers: key });
    // Only the commit signal can answer it before the watcher's next read, a minute away. Not a
    // wait for correctness: a request not yet held when the 404 is written finds the entry in its
    // own first read and passes too; 200 ms only makes that path rare (the test failed every time
    // with the signal removed).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const missing = await t.http.get('/v2/cheeses/987654321', { headers: { ...key, 'x-request-id': 'thread-404' } });
    expect(missing.status).toBe(404);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item: { requestId: string }) => item.requestId)).toEqual(['thread-404']);

    // A second app on the same storage: its last request is queued when it closes, and written.
    const other = await createTestApp({ storage, config: { requestLogWriter: 'thread' } });
    await other.http.get('/v2/cheeses?limit=1', { headers: { ...key, 'x-request-id': 'thread-at-close' } });
    await other.close();
    const fresh = openDatabase(testConfig(storage));
    try {
      expect(await fresh.db.selectFrom('request_logs').select('request_id').where('request_id', '=', 'thread-at-close').execute()).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  }, 30_000);
});
