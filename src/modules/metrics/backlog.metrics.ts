import { Gauge, type Registry } from 'prom-client';
import type { Backlog, BacklogRepository } from './backlog.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** An answer serves every scrape for this long: scrapers (several Prometheus, a curl) never add load. */
const CACHE_MS = 2000;
/** PostgreSQL cancels the statements after this; a scrape waits no longer for them. */
const QUERY_TIMEOUT_MS = 1000;

/**
 * The backlog, read when scraped: at most one query in flight, its answer (or failure) kept
 * CACHE_MS, and a scrape waits at most QUERY_TIMEOUT_MS for it. A database that is down or
 * slow makes these gauges NaN and `fromagerie_backlog_query_success` 0; every other metric
 * still answers.
 */
class BacklogReader {
  #answer: { at: number; backlog: Backlog | undefined } | undefined;
  #reading: Promise<Backlog | undefined> | undefined;

  constructor(
    private readonly repository: BacklogRepository,
    private readonly clock: Clock,
  ) {}

  async current(): Promise<Backlog | undefined> {
    if (this.#answer && this.clock.now() - this.#answer.at < CACHE_MS) return this.#answer.backlog;
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), QUERY_TIMEOUT_MS)));
    try {
      return await Promise.race([this.#reading, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #read(): Promise<Backlog | undefined> {
    let backlog: Backlog | undefined;
    try {
      backlog = await this.repository.read(this.clock.iso(), QUERY_TIMEOUT_MS);
    } catch {
      backlog = undefined;
    }
    this.#answer = { at: this.clock.now(), backlog };
    return backlog;
  }
}

/** Outbox lag and webhook backlog, as gauges set when scraped. */
export function backlogMetrics(registry: Registry, repository: BacklogRepository, clock: Clock = systemClock): void {
  const reader = new BacklogReader(repository, clock);
  const gauge = (name: string, help: string, value: (backlog: Backlog) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const backlog = await reader.current();
        this.set(backlog ? value(backlog) : Number.NaN);
      },
    });
  new Gauge({
    name: 'fromagerie_backlog_query_success',
    help: '1 when the backlog gauges come from a query of the last 2 s; 0 when it failed or took over 1 s (they read NaN then).',
    registers: [registry],
    async collect() {
      this.set((await reader.current()) ? 1 : 0);
    },
  });
  gauge('fromagerie_outbox_undispatched_events', 'Events recorded but not yet fanned out to webhooks by the dispatcher.', (b) => b.undispatched);
  gauge('fromagerie_outbox_lag_seconds', 'Age of the oldest event not yet fanned out (0 when none waits): how far the dispatcher is behind.', (b) =>
    b.oldestUndispatchedAt === null ? 0 : Math.max(0, (clock.now() - Date.parse(b.oldestUndispatchedAt)) / 1000),
  );
  new Gauge({
    name: 'fromagerie_webhook_deliveries',
    help: 'Webhook deliveries by state: pending (awaiting an attempt or a retry) or dead (every attempt failed; kept WEBHOOK_RETENTION_DAYS).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const backlog = await reader.current();
      this.set({ state: 'pending' }, backlog ? backlog.pending : Number.NaN);
      this.set({ state: 'dead' }, backlog ? backlog.dead : Number.NaN);
    },
  });
  gauge('fromagerie_webhook_deliveries_due', 'Pending deliveries whose next attempt is due now: the dispatcher\'s backlog (the other pending ones wait for their retry time).', (b) => b.due);
  // The backlog's count alone cannot tell a burst being drained from a dispatcher that stopped: its age can.
  gauge('fromagerie_webhook_oldest_due_seconds', 'How long the longest-waiting due delivery has been due (0 when none is due): the age of the webhook backlog.', (b) =>
    b.oldestDueAt === null ? 0 : Math.max(0, (clock.now() - Date.parse(b.oldestDueAt)) / 1000),
  );
}
