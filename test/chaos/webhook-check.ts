import { ms, num, type FinalRead } from './final-read.js';
import { sleep } from './load.js';
import type { WebhookSink } from './webhook-sink.js';

function iso(value: unknown): string {
  return value === null || value === undefined ? 'none' : new Date(ms(value)).toISOString();
}

/**
 * Waits until no order has a lifecycle step due (the worker still makes events after the load
 * stops), every event is fanned out and the webhook has no pending delivery (retries and
 * dead-lettering done), or `timeoutMs`.
 */
export async function settleWebhooks(read: FinalRead, webhookId: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await read.rows(`select count(*) as n from webhook_deliveries where webhook_id = ${webhookId} and state = 'pending'`);
    const pending = num(row!.n);
    // Past the fan-out's position in the log (issue 21: outbox consumers replaced dispatched_at).
    const [undispatched] = await read.rows(
      `select count(*) as n from outbox o join outbox_consumers c on c.name = 'webhooks@' || o.environment where (o.txid, o.id) > (c.position_txid, c.position_id)`,
    );
    const [moving] = await read.rows(`select count(*) as n from orders where next_step_at is not null`);
    if ((pending === 0 && num(undispatched!.n) === 0 && num(moving!.n) === 0) || Date.now() > deadline) return pending;
    await sleep(250);
  }
}

/**
 * Every event after `outboxMark` reached the webhook: delivered (the receiver answered it at least
 * once and the log has the delivered attempt) or dead-lettered with each of its attempts logged;
 * never two attempts of one delivery at once, neither in the attempt log (numbers repeated, or
 * intervals [logged - latency, logged] overlapping) nor at the receiver.
 */
export async function checkWebhooks(read: FinalRead, webhookId: number, outboxMark: number, sink: WebhookSink): Promise<string[]> {
  const deliveries = await read.rows(`select id, event_id, state, attempts, max_attempts, next_attempt_at, lease_until, created_at from webhook_deliveries where webhook_id = ${webhookId}`);
  const attempts = await read.rows(`select delivery_id, attempt, outcome, latency_ms, created_at from webhook_attempts where webhook_id = ${webhookId} order by id`);
  const events = await read.rows(`select event_id, type from outbox where id > ${outboxMark} and (type like 'order.%' or type like 'cheese.%')`);
  const logOf = new Map<number, { attempt: number; outcome: string; start: number; end: number }[]>();
  for (const a of attempts) {
    const end = ms(a.created_at);
    logOf.set(num(a.delivery_id), [...(logOf.get(num(a.delivery_id)) ?? []), { attempt: num(a.attempt), outcome: String(a.outcome), start: end - num(a.latency_ms), end }]);
  }
  const received = sink.delivered();
  const problems: string[] = [];
  const note = (what: string, list: string[]) => list.length > 0 && problems.push(`${what}: ${JSON.stringify(list.slice(0, 5))}${list.length > 5 ? ` … (${list.length})` : ''}`);

  const covered = new Set(deliveries.map((d) => String(d.event_id)));
  note('events never given to the webhook', events.filter((e) => !covered.has(String(e.event_id))).map((e) => `${String(e.type)} ${String(e.event_id)}`));
  note('deliveries still pending', deliveries.filter((d) => d.state === 'pending').map((d) => `${String(d.event_id)} after ${num(d.attempts)} attempts (created ${iso(d.created_at)}, next attempt ${iso(d.next_attempt_at)}, lease until ${iso(d.lease_until)}, now ${new Date().toISOString()})`));

  const unreceived: string[] = [];
  const unlogged: string[] = [];
  const repeated: string[] = [];
  const overlapping: string[] = [];
  for (const d of deliveries) {
    const id = num(d.id);
    const log = logOf.get(id) ?? [];
    if (d.state === 'delivered') {
      if (!received.has(String(d.event_id))) unreceived.push(String(d.event_id));
      if (!log.some((a) => a.outcome === 'delivered')) unlogged.push(`${String(d.event_id)}: delivered without a delivered attempt`);
    } else if (d.state === 'dead') {
      if (log.length !== num(d.attempts) || log.at(-1)?.outcome !== 'dead_lettered' || num(d.attempts) !== num(d.max_attempts)) {
        unlogged.push(`${String(d.event_id)}: dead after ${num(d.attempts)} of ${num(d.max_attempts)} attempts, log ${log.map((a) => `${a.attempt}:${a.outcome}`).join(' ')}`);
      }
    }
    const numbers = log.map((a) => a.attempt);
    if (new Set(numbers).size !== numbers.length) repeated.push(`${String(d.event_id)}: attempts ${numbers.join(',')}`);
    for (let i = 0; i < log.length; i++) {
      for (let j = i + 1; j < log.length; j++) {
        if (log[i]!.start < log[j]!.end && log[j]!.start < log[i]!.end) overlapping.push(`${String(d.event_id)}: attempts ${log[i]!.attempt} and ${log[j]!.attempt}`);
      }
    }
  }
  note('delivered events the receiver never answered', unreceived);
  note('deliveries whose attempts are not all logged', unlogged);
  note('attempt numbers logged twice for one delivery (two claims of one attempt)', repeated);
  note('attempts of one delivery at once (attempt log)', overlapping);
  note('attempts of one delivery at once (at the receiver)', sink.overlaps().map((o) => `${o.eventId}: attempt ${o.first.attempt} ${o.first.arrivedAt}..${o.first.answeredAt}, attempt ${o.second.attempt} at ${o.second.arrivedAt}`));
  return problems;
}
