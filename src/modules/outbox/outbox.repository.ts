import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';

export interface StoredEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** Read side of the outbox: the envelope as webhooks will deliver it. */
export class OutboxRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async listSince(afterId: number, limit = 100): Promise<(StoredEvent & { sequence: number })[]> {
    const rows = await this.db
      .selectFrom('outbox')
      .select(['id', 'event_id', 'type', 'data', 'metadata', 'created_at'])
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      sequence: r.id,
      id: r.event_id,
      type: r.type,
      created_at: toIso(r.created_at),
      data: JSON.parse(r.data) as Record<string, unknown>,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
  }
}
