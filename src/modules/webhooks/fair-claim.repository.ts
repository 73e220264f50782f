import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toIso } from '../../db/columns.js';
import type { ClaimBounds, DueRow, HiddenQueue } from './dispatch.rules.js';

/**
 * The reads behind a fair claim (DeliveryRepository.claimDue, dispatch.rules.ts). The index is
 * (state, next_attempt_at), with nothing per webhook or account: ranking every due delivery by
 * account on each claim cost 0.6 µs a row (6 ms with 10,000 due, on SQLite), which a backlog
 * pays on every claim. So the claim reads a bounded window of the oldest, and looks past it,
 * counting per webhook without sorting, only when the window may hide an account.
 */

/** Due deliveries of active webhooks and accounts below their cap, less the accounts in `skip`. */
function due(trx: Transaction<DB>, now: string, bounds: ClaimBounds, skip: readonly number[]) {
  let query = trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .where('d.state', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    // A paused webhook's deliveries wait for it.
    .where('w.active', '=', true);
  if (bounds.fullWebhooks.length > 0) query = query.where('d.webhook_id', 'not in', bounds.fullWebhooks);
  const accounts = [...bounds.fullAccounts, ...skip];
  if (accounts.length > 0) query = query.where('w.account_id', 'not in', accounts);
  return query;
}

/** The oldest `size` due deliveries: one stretch of the (state, next_attempt_at) index. */
export async function dueWindow(trx: Transaction<DB>, now: string, bounds: ClaimBounds, size: number): Promise<DueRow[]> {
  const rows = await due(trx, now, bounds, [])
    .select(['d.id', 'd.webhook_id', 'w.account_id', 'd.next_attempt_at'])
    // Not also by id: a fan-out writes its deliveries with one time, and PostgreSQL would sort
    // the whole batch to break ties the pick breaks anyway.
    .orderBy('d.next_attempt_at')
    .limit(size)
    .execute();
  return rows.map((row) => ({ id: Number(row.id), webhookId: Number(row.webhook_id), accountId: Number(row.account_id), dueAt: toIso(row.next_attempt_at) }));
}

/** Per webhook, the due deliveries of accounts other than `known`: how many, and the oldest. */
export async function hiddenQueues(trx: Transaction<DB>, now: string, bounds: ClaimBounds, known: readonly number[]): Promise<HiddenQueue[]> {
  const rows = await due(trx, now, bounds, known)
    .select((eb) => ['d.webhook_id', 'w.account_id', eb.fn.countAll<number | string>().as('count'), eb.fn.min('d.next_attempt_at').as('oldest')])
    .groupBy(['d.webhook_id', 'w.account_id'])
    .execute();
  return rows.map((row) => ({ webhookId: Number(row.webhook_id), accountId: Number(row.account_id), count: Number(row.count), oldest: toIso(row.oldest) }));
}

/** The `n` oldest due deliveries of each hidden webhook in `takes`, each read from its oldest on. */
export async function oldestOf(trx: Transaction<DB>, now: string, takes: ReadonlyMap<number, number>, queues: readonly HiddenQueue[]): Promise<number[]> {
  const oldest = new Map(queues.map((queue) => [queue.webhookId, queue.oldest]));
  const parts = [...takes].map(([webhookId, n], i) =>
    trx
      .selectFrom(
        trx
          .selectFrom('webhook_deliveries')
          .select(['id', 'next_attempt_at'])
          .where('state', '=', 'pending')
          .where('next_attempt_at', '>=', oldest.get(webhookId)!)
          .where('next_attempt_at', '<=', now)
          .where('webhook_id', '=', webhookId)
          .orderBy('next_attempt_at')
          .limit(n)
          .as(`w${i}`),
      )
      .select('id'),
  );
  if (parts.length === 0) return [];
  const rows = await parts.slice(1).reduce((query, part) => query.unionAll(part), parts[0]!).execute();
  return rows.map((row) => Number(row.id));
}
