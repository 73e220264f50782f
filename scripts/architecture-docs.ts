/**
 * Writes the inventories of docs/architecture.md (modules, tables and owners, jobs, file roles,
 * ports), each between its two markers, from the code (scripts/architecture-inventory.ts);
 * `--check` fails when the committed page differs. What a table or a file role is for is
 * written here, once: a table or suffix without its line, or a line for one the code no longer
 * has, stops the script.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inventory, type Inventory } from './architecture-inventory.js';

const TABLE_NOTES: Record<string, string> = {
  accounts: 'every login: username, e-mail, password hash (scrypt), role, plan',
  api_keys: '`sk_…` keys: hash only, prefix and last 4, environment, scopes, expiry, last use, roll, revocation',
  login_sessions: 'the sessions that login tokens (JWTs) name, so a token can be revoked',
  browser_sessions: 'the one browser sign-in of the dashboard and the OAuth pages: the cookie\'s hash, when the password was last given (step-up), last seen (idle end), absolute end',
  dashboard_reveals: 'a secret shown once in the dashboard: the reveal id\'s hash, its session, its end (120 s), when it was shown (the secret itself only in the sealed cookie)',
  request_logs: 'a /v2 request an account made: method, route, status, duration, request id, the credential\'s kind and public label, Idempotency-Key, client; headers and the first 16 KB of each body, redacted (REQUEST_LOG_BODIES); pruned after REQUEST_LOG_RETENTION_DAYS',
  oauth_clients: 'registered OAuth clients (confidential or public): redirect URIs, grants, scopes, secret hash',
  oauth_grants: 'one authorization of a client by an account: the family its tokens belong to',
  oauth_tokens: 'authorization codes, access and refresh tokens (hashes), rotation and revocation',
  categories: 'cheese categories',
  tags: 'tag names',
  cheeses: 'the catalogue: stock in grams, prices in cents, `sort_name` and `search_text` kept normalised for sorting and search, months as a bitmask',
  cheese_tags: 'which cheese carries which tag',
  cheese_images: 'uploaded images: storage and thumbnail keys, type, size, dimensions, caption, primary',
  outbox: 'every event, written in the transaction of its change, in commit order (txid, id); read by its consumers from their own positions and by the event log; pruned after EVENT_RETENTION_DAYS',
  outbox_consumers: 'each consumer\'s position in the outbox (today: `webhooks`, the fan-out)',
  customer_profiles: 'a customer\'s profile, favourite cheese, preferences and tier (`customerStatus`)',
  customer_addresses: 'a customer\'s saved addresses',
  orders: 'an order: status, totals, shipping, payment reference, next automatic step, event sequence',
  order_items: 'its lines, with the cheese\'s name, slug and price at placement',
  order_status_changes: 'its timeline: every status, who moved it, when',
  subscriptions: 'cheese-of-the-month subscriptions: grams, shipping, day of month, next order, last problem',
  idempotency_keys: 'Idempotency-Key records: the request\'s fingerprint, its lease while running, the reply to replay',
  webhooks: 'registered URLs, their events, scopes and encrypted secrets',
  webhook_deliveries: 'one event to one webhook: its state and next attempt',
  webhook_attempts: 'the attempt log (kept WEBHOOK_RETENTION_DAYS)',
  deployment: 'facts about the deployments that used this database, by key',
};

const SUFFIX_NOTES: Record<string, string> = {
  '.module.ts': 'the module\'s one entry: its factory, its options and what it provides; where a process without the database needs a module\'s pure code, a second, light entry with nothing that reaches it (`outbox-envelope.module.ts`, `webhook-signing.module.ts`: the developer CLI signs as webhooks do)',
  '.routes.ts': 'Fastify routes: `config.auth`, TypeBox schemas, calling one service method, shaping the reply (the dashboard\'s and OAuth\'s pages too)',
  '.schema.ts': 'TypeBox schemas of requests and resources; the TypeScript types of views derive from them',
  '.service.ts': 'use cases: transactions, rules that need data, events; plain values in, plain values out',
  '.repository.ts': 'all SQL of its tables; functions that take an executor take it first; the dialect stays inside',
  '.table.ts': 'the Kysely types of the module\'s tables, each with its column descriptor (`tableColumns`), matched against the migrated database by a test',
  '.rules.ts': 'pure decisions (stock thresholds, the order state machine, dispatch fairness, token buckets), unit-tested alone',
  '.model.ts': 'pure domain values and conversions (`cheese.model.ts`: units, months, slugs, case folding); `oauth.model.ts` is the model the OAuth library calls, and the token formats',
  '.input.ts': 'turning validated input into a draft (aliases, cross-field checks)',
  '.query.ts': 'turning query parameters into filters, sorts and fieldsets',
  '.mapper.ts': 'stored row → resource view (and event data)',
  '.codec.ts': 'an encoding a client sees that is not JSON (`csv.codec.ts`); pagination cursors are one codec for every list, `src/kernel/pagination.ts`',
  '.ports.ts': 'interfaces a module asks another to implement, and what it offers beyond its services (`identity.ports.ts`: AccountDirectory)',
  '.resolver.ts': 'a `CredentialResolver`: a credential format → the principal it stands for',
  '.job.ts': 'a background `Job`: claims its work with `claimRows`, safe on every instance',
  '.errors.ts': 'the module\'s own domain error classes (subclasses of the kernel\'s)',
  '.access.ts': 'route hooks that refuse a caller before the body is validated (ownership: another customer\'s account is 403 whatever was sent); the service checks again',
  '.capture.ts': 'what a module takes from each request and answer as they pass (the request log\'s entry, redacted)',
  '.hooks.ts': 'request hooks a module adds to every request\'s path (rate limits, Idempotency-Key)',
  '.leases.ts': 'what an instance holds while a request runs, renewed in one batch on the database clock and released on close (Idempotency-Key leases)',
  '.lifecycle.ts': 'a state machine applied to stored rows: every status change of an order, and its worker job',
  '.placement.ts': 'the one way an order is made, shared by both forms and subscriptions, inside the caller\'s transaction',
  '.adapters.ts': 'interfaces to outside providers (payments, courier) with their simulated implementations',
  '.dispatcher.ts': 'a long-running worker (webhook delivery): wakes on commits, claims due work, hands it to the sender',
  '.sender.ts': 'the outbound HTTP client of a worker (one webhook delivery, with its deadline and address pinning)',
  '.guard.ts': 'a safety check on outside input (`address.guard.ts`: which addresses a webhook may reach)',
  '.secrets.ts': 'secrets held for clients: made, encrypted at rest, and signed with (webhook secrets and their signature headers)',
  '.settings.ts': 'a module\'s settings, as `src/config/variables.ts` declares them from the environment',
  '.store.ts': 'where state that is not in the database lives (`bucket.store.ts`: this process; `redis.store.ts`: Redis)',
  '.storage.ts': 'an interface to an outside store (image files), with its local implementation',
  '.interaction.ts': 'protecting a browser interaction (the consent tokens of the OAuth pages)',
  '.context.ts': 'what a family of pages is built from and shares (`dashboard.context.ts`: other modules\' services, the layout, the session)',
  '.openapi.ts': 'a hand-written part of the OpenAPI document (the `webhooks` section, the Idempotency-Key header)',
  '.changes.ts': 'the catalogue\'s write signal, for whoever caches catalogue reads',
  '.seeder.ts': 'loading seed data',
  '.hash.ts': 'password hashing',
  '.writer.ts': 'where a module\'s rows are written: the outbox writer (inside the caller\'s transaction); the request log\'s batches, on the event loop or on a thread of their own',
  '.writer-thread.ts': 'the code a worker thread runs, started by its module\'s `.writer.ts` (the request log\'s batches, on a connection of the thread\'s own)',
  '.recorder.ts': 'a bounded queue written in batches, off the request\'s path (the request log)',
  '.types.ts': 'names and types shared by several files of a module, so they import no circle (`event.types.ts`: event kinds and audiences)',
  '.envelope.ts': 'the one serializer of an event (`outbox.envelope.ts`: webhook bodies and the event log, byte for byte)',
  '.metrics.ts': 'one family of Prometheus metrics (HTTP, database, jobs, limits, backlog, process)',
  '.server.ts': 'a listener of its own beside the app (`metrics.server.ts`: `GET /metrics` on METRICS_PORT)',
  '': 'no suffix: a file that is none of these: `src/app.ts`, the kernel\'s and the HTTP pipeline\'s files, or a helper of one module (`batch.ts` in webhooks: one write per event-loop turn; `rate-limiter.ts` in limits: the plans\' buckets)',
};

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
const code = (text: string) => `\`${text}\``;
const list = (items: readonly string[]) => (items.length > 0 ? items.map(code).join(', ') : '—');

function every(ms: number | null): string {
  if (ms === null) return 'continuously: a worker woken by outbox commits, with a poll (`WEBHOOK_POLL_MS`) behind it';
  if (ms % 3_600_000 === 0) return ms === 3_600_000 ? 'hourly' : `every ${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `every ${ms / 60_000} min`;
  return ms % 1000 === 0 ? `every ${ms / 1000} s` : `every ${ms} ms`;
}

/** Every description matches something in the code and everything in the code has one. */
function noted(kind: string, notes: Record<string, string>, present: readonly string[]): (name: string) => string {
  const missing = present.filter((name) => notes[name] === undefined);
  const stale = Object.keys(notes).filter((name) => !present.includes(name));
  if (missing.length > 0 || stale.length > 0) {
    throw new Error(`scripts/architecture-docs.ts: ${kind} ${missing.length > 0 ? `without a description: ${missing.join(', ')}` : ''}${missing.length > 0 && stale.length > 0 ? '; ' : ''}${stale.length > 0 ? `described but absent from the code: ${stale.join(', ')}` : ''}`);
  }
  return (name) => notes[name]!;
}

export function sections(facts: Inventory): Record<string, string> {
  const tableNote = noted('tables', TABLE_NOTES, facts.tables.map((t) => t.table));
  const suffixNote = noted('file roles', SUFFIX_NOTES, facts.suffixes.map((s) => s.suffix));
  const serves = (m: Inventory['modules'][number]) => [m.routes ? 'routes under `/v2`' : '', m.rootRoutes ? 'routes at the root' : ''].filter(Boolean).join(', ') || '—';
  return {
    modules: [
      '| module | offers (`provides`) | takes (`module.offering`, wired by src/modules.ts) | serves | request stages |',
      '|---|---|---|---|---|',
      ...facts.modules.map((m) => `| \`${m.name}\` | ${list(m.provides)} | ${list(m.takes)} | ${serves(m)} | ${cell(m.stages.join(', ') || '—')} |`),
    ].join('\n'),
    tables: [
      '| table | owner | what |',
      '|---|---|---|',
      ...facts.tables.map((t) => `| \`${t.table}\` | ${t.owner.includes('/') ? code(t.owner) : t.owner} | ${cell(tableNote(t.table))} |`),
    ].join('\n'),
    jobs: [
      `Run by instances whose \`ROLE\` is ${facts.jobRoles.map(code).join(' or ')}, never by \`ROLE=api\`; periods as the default settings make them.`,
      '',
      '| job | module | runs |',
      '|---|---|---|',
      ...facts.jobs.map((j) => `| \`${j.name}\` | ${j.module} | ${every(j.everyMs)} |`),
    ].join('\n'),
    suffixes: [
      '| suffix | files in `src/` | what belongs there |',
      '|---|---|---|',
      ...facts.suffixes.map((s) => `| ${s.suffix ? code(s.suffix) : '(none)'} | ${s.files} | ${cell(suffixNote(s.suffix))} |`),
    ].join('\n'),
    ports: [
      'Every offering the composition root hands one module from another:',
      '',
      '| module | option | given |',
      '|---|---|---|',
      ...facts.wires.map((w) => `| ${w.to} | \`${w.option}\` | \`${w.from}\` |`),
      '',
      'The interfaces modules declare for one another (`*.ports.ts`, and every `…Port`), and the other modules that name them:',
      '',
      '| interface | declared in | named by |',
      '|---|---|---|',
      ...facts.ports.map((p) => `| \`${p.port}\` | ${p.declaredIn} | ${p.usedBy.join(', ') || '— (met structurally, through src/modules.ts)'} |`),
    ].join('\n'),
  };
}

const begin = (name: string) => `<!-- architecture-docs:${name}: generated by \`npm run architecture-docs\` from the code; do not edit -->`;
const end = (name: string) => `<!-- /architecture-docs:${name} -->`;

/** The page with each marked section as the code makes it. */
export function withSections(page: string, generated: Record<string, string>): string {
  let result = page;
  for (const [name, text] of Object.entries(generated)) {
    const from = result.indexOf(begin(name));
    const to = result.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`docs/architecture.md: the markers ${begin(name)} … ${end(name)} are missing`);
    result = `${result.slice(0, from + begin(name).length)}\n${text}\n${result.slice(to)}`;
  }
  return result;
}

if (import.meta.url === pathToFileURL(path.resolve(process.argv[1] ?? '')).href) {
  const target = path.resolve('docs/architecture.md');
  const current = fs.readFileSync(target, 'utf8');
  const updated = withSections(current, sections(await inventory()));
  if (process.argv.includes('--check')) {
    if (updated !== current) {
      console.error('docs/architecture.md is out of date: run `npm run architecture-docs` and commit the result.');
      process.exit(1);
    }
    console.log('docs/architecture.md is up to date');
  } else if (updated !== current) {
    fs.writeFileSync(target, updated);
    console.log('docs/architecture.md: written');
  }
}
