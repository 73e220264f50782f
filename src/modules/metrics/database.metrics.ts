import { Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../../db/database.js';
import { LATENCY_BUCKETS } from './http.metrics.js';

/**
 * PostgreSQL's connection pool: connections open, idle and busy, requests waiting for one,
 * and how long each wait lasted. SQLite has no pool (one connection, taken in turn by the
 * group-commit driver): nothing is registered there. Returns the unsubscribe function.
 */
export function databaseMetrics(registry: Registry, database: Database): () => void {
  const pool = database.pool;
  if (!pool) return () => {};
  new Gauge({
    name: 'fromagerie_db_pool_connections',
    help: 'PostgreSQL connections of this instance\'s pool, by state: idle or busy (checked out by a query or transaction).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { total, idle } = pool.stats();
      this.set({ state: 'idle' }, idle);
      this.set({ state: 'busy' }, total - idle);
    },
  });
  new Gauge({
    name: 'fromagerie_db_pool_max_connections',
    help: 'The pool\'s size: busy connections never exceed it (10 on a server).',
    registers: [registry],
    collect() {
      this.set(pool.stats().max);
    },
  });
  new Gauge({
    name: 'fromagerie_db_pool_waiting',
    help: 'Queries and transactions waiting for a connection right now (the pool is exhausted when above 0).',
    registers: [registry],
    collect() {
      this.set(pool.stats().waiting);
    },
  });
  const waits = new Histogram({
    name: 'fromagerie_db_pool_acquire_seconds',
    help: 'How long each query or transaction waited for a pool connection (a new connection\'s setup included, a failed wait too).',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return pool.onAcquired((seconds) => waits.observe(seconds));
}
