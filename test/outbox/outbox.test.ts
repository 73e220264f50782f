import type { Kysely, Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { DB } from '../../src/db/schema.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { recordEvent } from '../../src/modules/outbox/outbox.writer.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const context = { requestId: 'req-1', environment: 'development' as const, apiVersion: '2.4.0' };
const event = { type: 'cheese.new_arrival' as const, audience: 'public' as const, aggregateType: 'cheese', aggregateId: '1', data: { cheese_id: '1' } };

async function outboxRows() {
  return t.database.db.selectFrom('outbox').select(['event_id', 'type', 'data', 'metadata']).orderBy('id').execute();
}

describe('outbox writer', () => {
  // Checked by the compiler, not at run time: `npm run typecheck` (tsc --noEmit, CI) covers test/,
  // so it fails if recordEvent ever accepts a Kysely outside a transaction. Nothing here runs.
  it('only compiles inside a transaction (a type test: tsc checks it)', () => {
    expectTypeOf(recordEvent).parameter(0).toEqualTypeOf<Transaction<DB>>();
    expectTypeOf<Kysely<DB>>().not.toExtend<Parameters<typeof recordEvent>[0]>();
    // @ts-expect-error a Kysely instance is not a Transaction
    expectTypeOf(recordEvent).toBeCallableWith(t.database.db, event, context);
  });

  it('commits the event with the change and rolls both back together', async () => {
    const before = (await outboxRows()).length;
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await recordEvent(trx, event, context);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await outboxRows()).toHaveLength(before);

    const id = await t.database.db.transaction().execute((trx) => recordEvent(trx, event, context));
    const rows = await outboxRows();
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)!.event_id).toBe(id);
    // A UUIDv7: its first 48 bits are the recording time (issue 21: a pruned id is told from an unknown one).
    expect(id).toMatch(/^evt_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(Math.abs(Number.parseInt(id.slice(4, 16), 16) - Date.now())).toBeLessThan(60_000);
    // A public event: no request identifiers, whichever request recorded it (issue 28).
    expect(JSON.parse(rows.at(-1)!.metadata)).toEqual({ api_version: '2.4.0', environment: 'development', request_id: null, idempotency_key: null, object_type: 'cheese', object_id: '1' });
  });
});

describe('seasonal windows (decisions.md §4)', () => {
  it('announces cheese.back_in_stock once when a window opens, on any number of calls', async () => {
    const admin = await t.key(['admin']);
    const created = await t.http.post('/v2/cheeses', {
      headers: bearer(admin),
      json: { name: 'Vacherin Test', seasonal: true, availableMonths: [9, 10, 11, 12, 1, 2, 3, 4], stockQuantityKg: 20 },
    });
    expect(created.status).toBe(201);
    const year = await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: 'All Year', stockQuantityKg: 20 } });
    expect(year.status).toBe(201);

    expect(await t.runJob('cheese.season_opened', new Date('2026-10-15T00:00:00Z'))).toBe(0); // open, but it opened in September
    expect(await t.runJob('cheese.season_opened', new Date('2026-09-01T00:00:00Z'))).toBe(1);
    expect(await t.runJob('cheese.season_opened', new Date('2026-09-20T00:00:00Z'))).toBe(0); // already announced this September
    expect(await t.runJob('cheese.season_opened', new Date('2027-09-02T00:00:00Z'))).toBe(1); // next year's opening

    const announced = (await outboxRows()).filter((r) => r.type === 'cheese.back_in_stock');
    expect(announced).toHaveLength(2);
    expect(JSON.parse(announced[0]!.data)).toMatchObject({ cheese_id: String(created.body.id), reason: 'season_opened', season_month: 9 });
  });
});
