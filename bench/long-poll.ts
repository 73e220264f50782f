/**
 * The event log's long poll (docs/performance.md, "Long poll"): how soon a held request answers
 * after the commit that makes its event visible, with 1 and with 200 held requests on one
 * instance, and how often the instance reads the outbox meanwhile (PostgreSQL's statistics of
 * the schema's table). One in-process instance over SQLite, or PostgreSQL with
 * TEST_DATABASE_URL set. Latency is taken from the moment the write's answer arrives (its
 * transaction committed) to the moment the held answer arrives.
 */
import http from 'node:http';
import { sql } from 'kysely';
import { createTestApp } from '../test/helpers/app.js';
import { bearer } from '../test/helpers/http.js';

const ROUNDS = 30;
const t = await createTestApp({ config: { eventsMaxHeldPerAccount: 1000 } });
const staff = bearer(await t.key(['admin']));
const postgres = Boolean(process.env.TEST_DATABASE_URL);

function hold(): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${t.http.baseUrl}/v2/events?after=now&wait=25&type=cheese.new_arrival`, { headers: staff, agent: false }, (response) => {
      response.resume().on('end', () => resolve(performance.now()));
    });
    request.on('error', reject);
  });
}

async function outboxScans(): Promise<number> {
  if (!postgres) return NaN;
  await sql`select pg_stat_force_next_flush()`.execute(t.database.db);
  const { rows } = await sql<{ scans: string }>`select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where schemaname = ${t.config.databaseSchema} and relname = 'outbox'`.execute(t.database.db);
  return Number(rows[0]?.scans ?? 0);
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

console.log(`| held requests | events | p50 ms | p95 ms | max ms | outbox reads/s while idle |\n|---|---|---|---|---|---|`);
for (const listeners of [1, 200]) {
  const samples: number[] = [];
  for (let round = 0; round < (listeners === 1 ? ROUNDS : 5); round++) {
    const held = Array.from({ length: listeners }, hold);
    await pause(listeners === 1 ? 100 : 1000);
    const created = await t.http.post('/v2/cheeses', { headers: staff, json: { name: `Bench ${listeners} ${round} ${Date.now()}`, pricePerKg: 20, stockQuantityKg: 5 } });
    const committed = performance.now();
    if (created.status !== 201) throw new Error(`POST /v2/cheeses: ${created.status}`);
    for (const answered of await Promise.all(held)) samples.push(answered - committed);
  }
  // Idle cost: the same number held with nothing happening for 5 s.
  const idle = Array.from({ length: listeners }, () => { const request = http.get(`${t.http.baseUrl}/v2/events?after=now&wait=25`, { headers: staff, agent: false }); request.on('error', () => undefined); return request; });
  await pause(1000);
  const before = await outboxScans();
  await pause(5000);
  const rate = ((await outboxScans()) - before) / 5;
  idle.forEach((request) => request.destroy());
  await pause(200);
  console.log(`| ${listeners} | ${listeners === 1 ? ROUNDS : 5} | ${percentile(samples, 50).toFixed(1)} | ${percentile(samples, 95).toFixed(1)} | ${Math.max(...samples).toFixed(1)} | ${Number.isNaN(rate) ? 'n/a (SQLite)' : rate.toFixed(1)} |`);
}
await t.close();
