import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';

/** Rows per INSERT: 19 columns, well under SQLite's and PostgreSQL's bound parameters. */
const BATCH = 500;

/**
 * `count` request-log entries of the account, straight into the database, spread evenly over
 * the last `hours` (ids in arrival order, as the recorder writes them): 85% 2xx, 3% 3xx, 10%
 * 4xx, 2% 5xx, on a handful of routes; headers small and no bodies, as REQUEST_LOG_BODIES=errors
 * keeps for a success.
 */
export async function seedRequestLog(env: NodeJS.ProcessEnv, accountId: number, count: number, hours: number): Promise<void> {
  const database = openDatabase({ dataDir: env.DATA_DIR!, databaseUrl: env.DATABASE_URL, databaseSchema: env.DATABASE_SCHEMA, poolSize: 2 });
  const { db } = database;
  const now = Date.now();
  const span = hours * 3_600_000;
  const routes = [
    ['GET', '/v2/cheeses', '/v2/cheeses'],
    ['GET', '/v2/orders', '/v2/orders'],
    ['POST', '/v2/orders', '/v2/orders'],
    ['GET', '/v2/orders/:id', '/v2/orders/42'],
  ] as const;
  try {
    for (let start = 0; start < count; start += BATCH) {
      const rows = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => {
        const i = start + k;
        const [method, route, path] = routes[i % routes.length]!;
        const bucket = i % 100;
        const status = bucket < 85 ? (method === 'POST' ? 201 : 200) : bucket < 88 ? 304 : bucket < 98 ? 404 : 503;
        return {
          request_id: `req_bench_${i}`,
          account_id: accountId,
          environment: 'production',
          created_at: new Date(now - span + Math.floor((i * span) / count)).toISOString(),
          method,
          route,
          path,
          query: '',
          status,
          duration_ms: 2 + (i % 17),
          credential_kind: 'api_key',
          credential_label: 'ch_live_bench00',
          idempotency_key: null,
          client_ip: '127.0.0.1',
          user_agent: 'bench',
          request_headers: '{"accept":"application/json"}',
          response_headers: '{"content-type":"application/json"}',
          request_body: null,
          response_body: null,
        };
      });
      await db.insertInto('request_logs').values(rows).execute();
    }
    // As autovacuum would shortly after such a load (see seed() in bench/dashboard.ts).
    if (env.DATABASE_URL) await sql`analyze request_logs`.execute(db);
  } finally {
    await database.close();
  }
}
