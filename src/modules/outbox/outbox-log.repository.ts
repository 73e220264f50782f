import { sql, type Kysely, type OperandExpression } from 'kysely';
import type { DB } from '../../db/schema.js';
import { isPostgres } from '../../db/dialect.js';
import { beyond, recordOf, RECORD_COLUMNS, settled, type LogPosition, type OutboxRecord } from './outbox-position.js';

/** What a page of the log asks for; every filter is optional but the deployment's environment. */
export interface LogQuery {
  environment: string;
  /** The audiences the reader may see (`public`, `account:<id>`); null: every one (staff). */
  audiences: readonly string[] | null;
  /** Exact kinds; null: every kind. */
  types: readonly string[] | null;
  createdGte?: string;
  createdLt?: string;
  object?: { type: string; id?: string };
  /** Only the events of this request (`metadata.request_id`); bound the page by time too, as nothing indexes it. */
  requestId?: string;
  /**
   * Only the rows whose id this subquery yields (another module's selection: the events with a
   * webhook delivery not delivered yet), so the page stays one statement however many it holds.
   */
  outboxIdsIn?: OperandExpression<number>;
  order: 'asc' | 'desc';
  /** Exclusive: the page starts past this position, in the order's direction. */
  from?: LogPosition;
  limit: number;
}

/**
 * The event log's reads (GET /v2/events): pages of the outbox in (txid, id) order through its
 * settled prefix only, so a reader polling forward never sees a row commit behind it, and a
 * page walked backwards never gains a row it has passed.
 */
export class OutboxLogRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async page(query: LogQuery): Promise<OutboxRecord[]> {
    if (query.types?.length === 0 || query.audiences?.length === 0) return [];
    const postgres = isPostgres(this.db);
    const direction = query.order === 'asc' ? 'asc' : 'desc';
    const rows = await this.db
      .selectFrom('outbox')
      .select(RECORD_COLUMNS)
      .where('environment', '=', query.environment)
      .where((eb) => settled(eb, postgres))
      .$if(query.audiences !== null, (q) => q.where('audience', 'in', [...query.audiences!]))
      .$if(query.types !== null, (q) => q.where('type', 'in', [...query.types!]))
      .$if(query.createdGte !== undefined, (q) => q.where('created_at', '>=', query.createdGte!))
      .$if(query.createdLt !== undefined, (q) => q.where('created_at', '<', query.createdLt!))
      .$if(query.object !== undefined, (q) => q.where('aggregate_type', '=', query.object!.type))
      .$if(query.object?.id !== undefined, (q) => q.where('aggregate_id', '=', query.object!.id!))
      .$if(query.requestId !== undefined, (q) => q.where(postgres ? sql<string>`(metadata::jsonb ->> 'request_id')` : sql<string>`json_extract(metadata, '$.request_id')`, '=', query.requestId!))
      .$if(query.outboxIdsIn !== undefined, (q) => q.where('id', 'in', query.outboxIdsIn!))
      .$if(query.from !== undefined, (q) => q.where((eb) => beyond(eb, direction === 'asc' ? '>' : '<', query.from!)))
      .orderBy('txid', direction)
      .orderBy('id', direction)
      .limit(query.limit)
      .execute();
    return rows.map(recordOf);
  }

  /** The last settled row's place, of every environment (the log's head); undefined while the log is empty. */
  async head(): Promise<LogPosition | undefined> {
    const postgres = isPostgres(this.db);
    const row = await this.db.selectFrom('outbox').select(['txid', 'id']).where((eb) => settled(eb, postgres)).orderBy('txid', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return row ? { txid: Number(row.txid), id: Number(row.id) } : undefined;
  }

  /** Settled rows past `from` (every row when undefined), of every environment, in log order: what a watcher of the head has not seen yet. */
  async settledBeyond(from: LogPosition | undefined, limit: number): Promise<OutboxRecord[]> {
    const postgres = isPostgres(this.db);
    const rows = await this.db
      .selectFrom('outbox')
      .select(RECORD_COLUMNS)
      .where((eb) => settled(eb, postgres))
      .$if(from !== undefined, (q) => q.where((eb) => beyond(eb, '>', from!)))
      .orderBy('txid', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(recordOf);
  }

  /** One event by its envelope id, settled or not (a reader may hold the id of a row past the prefix: a webhook told it). */
  async byEventId(eventId: string, environment: string): Promise<OutboxRecord | undefined> {
    const row = await this.db.selectFrom('outbox').select(RECORD_COLUMNS).where('event_id', '=', eventId).where('environment', '=', environment).executeTakeFirst();
    return row ? recordOf(row) : undefined;
  }
}
