import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest, migrations } from '../../src/db/migrate.js';
import { OutboxConsumerRepository } from '../../src/modules/outbox/outbox-consumer.repository.js';
import { DIALECT, openTestDatabase } from '../helpers/database.js';

/**
 * Migration 0021 across the switch from `dispatched_at` to consumer positions: every event
 * fanned out before stays behind the 'webhooks' position, every one not yet fanned out is
 * ahead of it (on PostgreSQL even one with a lower id than a fanned-out one: it committed
 * late), so none is lost and none fanned out twice. Old events gain their object in metadata.
 */
let database: Database;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ database, dispose } = await openTestDatabase());
});
afterAll(() => dispose());

describe('0021_event_log', () => {
  it('starts the webhook fan-out past exactly the events already fanned out', async () => {
    const db = database.db as never;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(database.schema ? { migrationTableSchema: database.schema } : {}) });
    expect((await migrator.migrateTo('0020_webhook_attempt_detail')).error).toBeUndefined();
    const at = '2026-06-01T10:00:00.000Z';
    const row = (n: number, dispatched: boolean) =>
      sql`insert into outbox (event_id, type, aggregate_type, aggregate_id, data, metadata, audience, created_at, dispatched_at)
          values (${`evt_${String(n).padStart(32, '0')}`}, 'cheese.new_arrival', 'cheese', ${String(n)}, '{}', ${`{"api_version":"2.4.0","environment":"sandbox","request_id":null}`}, 'public', ${at}, ${dispatched ? at : null})`.execute(database.db);
    await row(1, true);
    // On PostgreSQL a row can commit after a later id was fanned out: it is still undispatched.
    await row(2, DIALECT === 'sqlite');
    await row(3, true);
    await row(4, false);
    await row(5, false);

    await migrateToLatest(db, database.schema);
    const taken = await database.db.transaction().execute((trx) => new OutboxConsumerRepository(database.db, 'sandbox').consume(trx, 'webhooks', 100));
    const ahead = taken.events.map((event) => event.eventId.slice(-1));
    expect(ahead).toEqual(DIALECT === 'sqlite' ? ['4', '5'] : ['2', '4', '5']);

    const rows = await database.db.selectFrom('outbox').select(['event_id', 'environment', 'metadata']).orderBy('id').execute();
    expect(rows.map((r) => r.environment)).toEqual(['sandbox', 'sandbox', 'sandbox', 'sandbox', 'sandbox']);
    // Appended as text: the bytes before stay, the object and key follow.
    expect(rows[0]!.metadata).toBe('{"api_version":"2.4.0","environment":"sandbox","request_id":null,"idempotency_key":null,"object_type":"cheese","object_id":"1"}');
  });
});
