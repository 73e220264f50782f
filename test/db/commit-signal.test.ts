import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { recordEvent } from '../../src/modules/outbox/outbox.writer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * Issue 20: an outbox insert wakes listeners once its transaction commits, without a NOTIFY in
 * that transaction: at once on the writing instance, on the others through at most one NOTIFY
 * per 100 ms per instance (db/commit-signal.ts). A rolled-back insert wakes no one. On SQLite
 * there is one instance; its driver fires after COMMIT.
 */
let t: TestApp;
let other: Database | undefined;

beforeAll(async () => {
  t = await createTestApp();
  if (t.config.databaseUrl) other = openDatabase({ ...t.config, poolSize: 2 });
}, 60_000);
afterAll(async () => {
  await other?.close();
  await t.close();
});

const context = { requestId: null, environment: 'development' as const, apiVersion: '2' };
const event = (i: number) => ({ type: 'webhook.test' as const, audience: 'staff' as const, aggregateType: 'test', aggregateId: String(i), data: { i } });

async function until(condition: () => boolean, deadlineMs = 5_000): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > deadlineMs) throw new Error('not within the deadline');
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - started;
}

describe('commit signals', () => {
  it('a committed outbox insert wakes the writer and every other instance; a rolled-back one wakes no one', async () => {
    let here = 0;
    let there = 0;
    const stopHere = t.database.afterCommitOf('outbox', () => here++);
    const stopThere = other?.afterCommitOf('outbox', () => there++);
    try {
      await new Promise((r) => setTimeout(r, 300)); // the LISTEN connections are up, their first wake done
      here = 0;
      there = 0;
      await t.database.db
        .transaction()
        .execute(async (trx) => {
          await recordEvent(trx, event(0), context);
          throw new Error('roll back');
        })
        .catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      expect({ here, there }).toEqual({ here: 0, there: 0 });

      await t.database.db.transaction().execute((trx) => recordEvent(trx, event(1), context));
      await until(() => here >= 1);
      if (other) process.stderr.write(`commit signal: the other instance was woken after ${await until(() => there >= 1)} ms\n`);
      const rows = await t.database.db.selectFrom('outbox').select('aggregate_id').where('aggregate_type', '=', 'test').execute();
      expect(rows.map((r) => r.aggregate_id)).toEqual(['1']);
    } finally {
      stopHere();
      stopThere?.();
    }
  });

  it('50 commits in a burst: the writer is woken for each, the other instance by a few coalesced NOTIFYs', async () => {
    let here = 0;
    let there = 0;
    const stopHere = t.database.afterCommitOf('outbox', () => here++);
    const stopThere = other?.afterCommitOf('outbox', () => there++);
    try {
      await new Promise((r) => setTimeout(r, 300));
      here = 0;
      there = 0;
      const started = Date.now();
      for (let i = 0; i < 50; i++) await t.database.db.transaction().execute((trx) => recordEvent(trx, event(100 + i), context));
      const elapsed = Date.now() - started;
      await until(() => here >= 50);
      expect(here).toBe(50);
      if (other) {
        await until(() => there >= 1);
        await new Promise((r) => setTimeout(r, 300)); // the last window's trailing NOTIFY
        // One per 100 ms window, plus the leading one and the trailing one.
        expect(there).toBeLessThanOrEqual(Math.ceil((elapsed + 300) / 100) + 2);
        expect(there).toBeLessThan(50);
      }
    } finally {
      stopHere();
      stopThere?.();
    }
  });
});
