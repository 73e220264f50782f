import type { Exchange } from './client.js';
import { num, type FinalRead } from './final-read.js';
import type { Load } from './load.js';
import type { World } from './world.js';

/** A fault from `start` to `end` (epoch ms): failures are allowed from `start` to `end` + GRACE_MS. */
export type { FaultWindow } from './client.js';
import type { FaultWindow } from './client.js';
export const GRACE_MS = 5_000;

/** The statuses an order can be seen in after each one: the lifecycle's transitions, closed over. */
const REACHABLE: Record<string, readonly string[]> = {
  placed: ['placed', 'approved', 'shipped', 'delivered', 'cancelled'],
  approved: ['approved', 'shipped', 'delivered', 'cancelled'],
  shipped: ['shipped', 'delivered'],
  delivered: ['delivered'],
  cancelled: ['cancelled'],
};
/** One step of the lifecycle (src/modules/orders/order.rules.ts TRANSITIONS). */
const NEXT: Record<string, readonly string[]> = { placed: ['approved', 'cancelled'], approved: ['shipped', 'cancelled'], shipped: ['delivered'], delivered: [], cancelled: [] };

const STILL_PROCESSING = /still being processed/;

function sample<T>(list: T[], n = 5): string {
  return JSON.stringify(list.slice(0, n)) + (list.length > n ? ` … (${list.length} in all)` : '');
}

/** No oversell: every cheese of the run holds exactly its start minus what orders not cancelled hold, and never less than 0. */
export async function checkStock(read: FinalRead, world: World): Promise<string[]> {
  const cheeses = [world.scarce, ...world.plenty];
  const ids = cheeses.map((c) => c.id).join(',');
  const stock = new Map((await read.rows(`select id, stock_grams from cheeses where id in (${ids})`)).map((r) => [num(r.id), num(r.stock_grams)]));
  const held = new Map(
    (await read.rows(`select oi.cheese_id, sum(oi.grams) as grams from order_items oi join orders o on o.id = oi.order_id where o.status <> 'cancelled' and oi.cheese_id in (${ids}) group by oi.cheese_id`)).map((r) => [num(r.cheese_id), num(r.grams)]),
  );
  const problems: string[] = [];
  for (const cheese of cheeses) {
    const now = stock.get(cheese.id);
    const inOrders = held.get(cheese.id) ?? 0;
    if (now === undefined) problems.push(`cheese ${cheese.id} is gone`);
    else if (now < 0) problems.push(`oversell: cheese ${cheese.id} has ${now} g in stock`);
    if (inOrders > cheese.grams) problems.push(`oversell: orders hold ${inOrders} g of cheese ${cheese.id}, which started with ${cheese.grams} g`);
    if (now !== undefined && now !== cheese.grams - inOrders) problems.push(`stock of cheese ${cheese.id} is ${now} g, but ${cheese.grams} g less ${inOrders} g held by orders is ${cheese.grams - inOrders} g`);
  }
  return problems;
}

/** Every acknowledged order exists with its lines and its customer; one order per Idempotency-Key; no order the load never asked for. */
export async function checkOrders(read: FinalRead, load: Load): Promise<string[]> {
  const orders = await read.rows(`select o.id, o.notes, a.username from orders o left join accounts a on a.id = o.account_id where o.notes like 'chaos-%'`);
  const lines = await read.rows(`select oi.order_id, oi.cheese_id, oi.grams from order_items oi join orders o on o.id = oi.order_id where o.notes like 'chaos-%'`);
  const linesOf = new Map<number, string[]>();
  for (const l of lines) linesOf.set(num(l.order_id), [...(linesOf.get(num(l.order_id)) ?? []), `${num(l.cheese_id)}:${num(l.grams)}`]);
  const byKey = new Map<string, number[]>();
  for (const o of orders) byKey.set(String(o.notes), [...(byKey.get(String(o.notes)) ?? []), num(o.id)]);
  const byId = new Map(orders.map((o) => [num(o.id), o]));
  const problems: string[] = [];

  const duplicated = [...byKey].filter(([, ids]) => ids.length > 1);
  if (duplicated.length > 0) problems.push(`more than one order for an Idempotency-Key: ${sample(duplicated)}`);
  const asked = new Set(load.orders.map((o) => o.key));
  const phantoms = [...byKey.keys()].filter((key) => !asked.has(key));
  if (phantoms.length > 0) problems.push(`orders under keys the load never sent: ${sample(phantoms)}`);

  const lost: string[] = [];
  const wrong: string[] = [];
  for (const intent of load.orders) {
    if (intent.acknowledged === undefined) continue;
    const row = byId.get(intent.acknowledged);
    if (!row) {
      lost.push(`${intent.key} → order ${intent.acknowledged}`);
      continue;
    }
    const expected = intent.lines.map((l) => `${l.cheeseId}:${l.grams}`).sort().join(',');
    const actual = (linesOf.get(intent.acknowledged) ?? []).sort().join(',');
    if (row.notes !== intent.key || row.username !== intent.customer || expected !== actual) {
      wrong.push(`${intent.key}: order ${intent.acknowledged} is ${String(row.notes)} of ${String(row.username)} with ${actual}, expected ${intent.customer} with ${expected}`);
    }
  }
  // The client gave up on these while their key was still taken: a request cut off by a fault
  // holds its key for as long as the client retried (some 10 s).
  const held = load.orders.filter((o) => o.lastStatus === 409 && STILL_PROCESSING.test(o.lastAnswer ?? ''));
  if (held.length > 0) problems.push(`Idempotency-Keys still "being processed" when their clients gave up: ${sample(held.map((o) => `${o.key} retried for ${(o.lastAt ?? 0) - (o.firstAt ?? 0)} ms`))}`);
  if (lost.length > 0) problems.push(`acknowledged orders missing from the database: ${sample(lost)}`);
  if (wrong.length > 0) problems.push(`acknowledged orders that differ from what was asked: ${sample(wrong)}`);
  return problems;
}

/** The status history of every order of the run is a path through the lifecycle, ending in the order's status. */
export async function checkLifecycles(read: FinalRead): Promise<string[]> {
  const current = new Map((await read.rows(`select id, status from orders where notes like 'chaos-%'`)).map((r) => [num(r.id), String(r.status)]));
  const changes = await read.rows(`select c.order_id, c.status from order_status_changes c join orders o on o.id = c.order_id where o.notes like 'chaos-%' order by c.order_id, c.id`);
  const history = new Map<number, string[]>();
  for (const c of changes) history.set(num(c.order_id), [...(history.get(num(c.order_id)) ?? []), String(c.status)]);
  const bad: string[] = [];
  for (const [id, status] of current) {
    const steps = history.get(id) ?? [];
    const valid = steps[0] === 'placed' && steps.every((s, i) => i === 0 || NEXT[steps[i - 1]!]!.includes(s)) && steps.at(-1) === status;
    if (!valid) bad.push(`order ${id}: ${steps.join(' → ')} (now ${status})`);
  }
  return bad.length > 0 ? [`order histories that are no path through the lifecycle: ${sample(bad)}`] : [];
}

/** What clients saw: an order read after another answer finished is never in an earlier state (a stale instance or cache). */
export function checkObservedLifecycles(record: Exchange[]): string[] {
  const seen = new Map<number, { t0: number; t1: number; status: string }[]>();
  for (const e of record) {
    let id: number | undefined;
    let status: string | undefined;
    if (e.op === 'read-order' && e.status === 200) {
      id = num((e.body as { id: number }).id);
      status = String((e.body as { status: string }).status);
    } else if (e.op === 'cancel' && e.status === 204) {
      id = num(e.path.split('/').at(-1));
      status = 'cancelled';
    }
    if (id !== undefined && status !== undefined) seen.set(id, [...(seen.get(id) ?? []), { t0: e.t0, t1: e.t1, status }]);
  }
  const bad: string[] = [];
  for (const [id, views] of seen) {
    for (const a of views) for (const b of views) if (a.t1 < b.t0 && !REACHABLE[a.status]!.includes(b.status)) bad.push(`order ${id}: ${a.status} (answered at ${a.t1}) then ${b.status} (asked at ${b.t0})`);
  }
  return bad.length > 0 ? [`orders seen going backwards: ${sample(bad)}`] : [];
}

/** No 5xx and no request without an answer outside a fault window plus GRACE_MS; no Idempotency-Key held after one. */
export function checkFailures(record: Exchange[], windows: FaultWindow[], startedAt: number): string[] {
  const inWindow = (e: Exchange) => windows.some((w) => e.t1 >= w.start && e.t0 <= w.end + GRACE_MS);
  const describe = (e: Exchange) => `${e.method} ${e.path} → ${e.status || e.error} via ${e.server ?? '?'} at +${e.t0 - startedAt}..${e.t1 - startedAt} ms${e.idempotencyKey ? ` key ${e.idempotencyKey}#${e.attempt}` : ''}`;
  const failed = record.filter((e) => (e.status === 0 || e.status >= 500) && !inWindow(e));
  const held = record.filter((e) => e.status === 409 && STILL_PROCESSING.test(JSON.stringify(e.body ?? '')) && !inWindow(e));
  const problems: string[] = [];
  if (failed.length > 0) problems.push(`failed requests outside fault windows (+${GRACE_MS} ms): ${sample(failed.map(describe))}`);
  if (held.length > 0) problems.push(`Idempotency-Keys still held (409 "still being processed") outside fault windows (+${GRACE_MS} ms): ${sample(held.map(describe))}`);
  return problems;
}

/** Every cheese the load renamed bears its last acknowledged name, or one sent after it (a rename whose answer was lost). */
export async function checkRenames(read: FinalRead, load: Load): Promise<string[]> {
  const cheeseIds = [...new Set(load.renames.map((r) => r.cheeseId))];
  if (cheeseIds.length === 0) return [];
  const names = new Map((await read.rows(`select id, name from cheeses where id in (${cheeseIds.join(',')})`)).map((r) => [num(r.id), String(r.name)]));
  const bad: string[] = [];
  for (const id of cheeseIds) {
    const sent = load.renames.filter((r) => r.cheeseId === id);
    const lastAcked = sent.map((r) => r.acknowledged).lastIndexOf(true);
    if (lastAcked === -1) continue;
    const allowed = sent.slice(lastAcked).map((r) => r.name);
    if (!allowed.includes(names.get(id) ?? '')) bad.push(`cheese ${id} is named ${names.get(id)}, its last acknowledged name was ${sent[lastAcked]!.name}`);
  }
  return bad.length > 0 ? [`acknowledged catalogue edits lost: ${sample(bad)}`] : [];
}

/** Counts for the report: answers by operation and status. */
export function summary(load: Load): string {
  const counts = new Map<string, Map<string, number>>();
  for (const e of load.record) {
    const byStatus = counts.get(e.op) ?? counts.set(e.op, new Map()).get(e.op)!;
    const status = String(e.status || e.error);
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }
  const ops = [...counts].map(([op, byStatus]) => `${op} ${[...byStatus].map(([s, n]) => `${s}×${n}`).join(' ')}`).join('; ');
  // Who failed them: an instance (X-Chaos-Server), or HAProxy itself (no server: none was up).
  const failedBy = new Map<string, number>();
  for (const e of load.record) if (e.status === 0 || e.status >= 500) failedBy.set(`${e.status || e.error} by ${e.server || (e.status ? 'haproxy' : 'nobody')}`, (failedBy.get(`${e.status || e.error} by ${e.server || (e.status ? 'haproxy' : 'nobody')}`) ?? 0) + 1);
  const acked = load.orders.filter((o) => o.acknowledged).length;
  return `${load.record.length} requests (${ops}); failures ${JSON.stringify(Object.fromEntries(failedBy))}; ${load.orders.length} orders asked, ${acked} acknowledged; ${load.renames.length} renames`;
}
