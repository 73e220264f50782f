/**
 * Writes docs/events.md, the reference of webhook events, from the schemas of their `data`
 * (src/modules/outbox/event-data.schema.ts); `--check` fails when the committed file differs.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { EVENT_TYPES, type EventType } from '../src/modules/outbox/outbox.writer.js';
import { EVENT_DATA_SCHEMAS, EVENT_TRIGGERS, Metadata } from '../src/modules/outbox/event-data.schema.js';

/** The JSON Schema keywords this generator reads; TypeBox schemas are plain JSON Schema. */
interface Schema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  title?: string;
  description?: string;
  examples?: unknown[];
}

const target = path.resolve('docs/events.md');
const check = process.argv.includes('--check');
const API_VERSION = '2.4.0';
const CREATED_AT = '2026-06-12T10:15:00.000Z';
const asSchema = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Schema;
const cell = (text: string) => text.replaceAll('|', '\\|');
const code = (value: unknown) => `\`${JSON.stringify(value)}\``;

function typeOf(schema: Schema): string {
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  const base = schema.type ?? 'string';
  if (schema.const !== undefined) return `${base}, always ${code(schema.const)}`;
  if (schema.enum) return `${base}: ${schema.enum.map(code).join(', ')}`;
  if (base === 'array') return `array of ${schema.items ? typeOf(schema.items) : 'anything'}${schema.minItems ? ` (at least ${schema.minItems})` : ''}`;
  const bounds = [
    schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '',
    schema.minimum !== undefined && schema.maximum !== undefined ? `${schema.minimum} to ${schema.maximum}` : schema.minimum !== undefined ? `≥ ${schema.minimum}` : '',
  ].filter(Boolean);
  if (schema.format) bounds.unshift(schema.format);
  return bounds.length > 0 ? `${base} (${bounds.join(', ')})` : base;
}

/** One row per field, nested objects (array items included) flattened as `items[].name`. */
function rows(schema: Schema, prefix = ''): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const item = field.type === 'array' && field.items?.type === 'object' ? field.items : null;
    const row = `| \`${prefix}${name}\` | ${cell(item ? 'array of object' : typeOf(field))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(field.description ?? '')} |`;
    return [row, ...(item ? rows(item, `${prefix}${name}[].`) : field.type === 'object' ? rows(field, `${prefix}${name}.`) : [])];
  });
}

function table(schema: Schema): string {
  return ['| Field | Type | Required | Description |', '|---|---|---|---|', ...rows(schema)].join('\n');
}

function withoutExamples(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExamples);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'examples').map(([key, inner]) => [key, withoutExamples(inner)]));
}

const json = (value: unknown) => ['```json', JSON.stringify(value, null, 2), '```'].join('\n');

/** Order events as the worker records them (no request), the others as a request does; sequences as in a real order's life. */
const SEQUENCE: Partial<Record<EventType, number>> = { 'order.placed': 1, 'order.confirmed': 2, 'order.shipped': 3, 'order.delivered': 4, 'order.cancelled': 2 };
const BY_JOB = new Set<EventType>(['order.confirmed', 'order.shipped', 'order.delivered', 'api_key.expiring']);

function envelope(type: EventType, data: Record<string, unknown>): unknown {
  const hash = createHash('sha256').update(`${type}:${JSON.stringify(data)}`).digest('hex');
  const byJob = BY_JOB.has(type) || data.reason === 'season_opened';
  const requestId = `${hash.slice(32, 40)}-${hash.slice(40, 44)}-4${hash.slice(45, 48)}-a${hash.slice(49, 52)}-${hash.slice(52, 64)}`;
  const sequence = SEQUENCE[type];
  return {
    id: `evt_${hash.slice(0, 32)}`,
    type,
    created_at: CREATED_AT,
    data,
    metadata: {
      api_version: API_VERSION,
      environment: 'production',
      request_id: byJob ? null : requestId,
      ...(sequence === undefined ? {} : { sequence, order_id: data.order_id }),
    },
  };
}

function section(type: EventType): string {
  const schema = asSchema(EVENT_DATA_SCHEMAS[type]);
  const variants = schema.anyOf ?? [schema];
  const parts = [`## \`${type}\``, `**Trigger.** ${EVENT_TRIGGERS[type]}`, schema.description ?? ''];
  for (const variant of variants) {
    if (variants.length > 1) parts.push(`### ${variant.title ?? 'Variant'}`, variant.description ?? '');
    parts.push(table(variant));
  }
  const examples = (schema.examples ?? []) as Record<string, unknown>[];
  parts.push(examples.length > 1 ? 'Example envelopes:' : 'Example envelope:', ...examples.map((example) => json(envelope(type, example))));
  parts.push(`<details><summary>JSON Schema of <code>data</code></summary>\n\n${json(withoutExamples(schema))}\n\n</details>`);
  return parts.filter(Boolean).join('\n\n');
}

const INTRO = `# Webhook events

<!-- Generated by \`npx tsx scripts/events.ts\` from src/modules/outbox/event-data.schema.ts: do not edit by hand. -->

Every change worth reacting to records an event in the transactional outbox, in the same
transaction as the change itself (decisions.md §8): an event exists exactly when its change
was committed. Webhooks deliver each event as a JSON \`POST\`. A delivery can be retried, so
an event may arrive more than once, and events may arrive out of order: deduplicate on \`id\`,
and order an order's events by \`metadata.sequence\`.

## The envelope

| Field | Type | Description |
|---|---|---|
| \`id\` | string | \`evt_\` followed by 32 hex characters. The same on every retry and replay: use it to deduplicate. |
| \`type\` | string | The event kind, one of those below. |
| \`created_at\` | string (date-time) | When the event was recorded (when its change was committed), UTC. |
| \`data\` | object | The event's own fields, described below for each kind. Keys are snake_case and ids are strings (int64 ids, decisions.md §2). |
| \`metadata\` | object | Where the event comes from (below). |

### \`metadata\`

${table(asSchema(Metadata))}

## Signatures

Each delivery is signed twice with the endpoint's secret (\`whsec_\` followed by base64),
over the **raw body** exactly as received: verify before parsing the JSON, since
re-serialising it changes the bytes. While a secret is being rotated, both the new and the
old secret sign (newest first), so either one verifies.

| Header | Value |
|---|---|
| \`X-Cheese-Signature\` | \`sha256=<hex>\`: the lowercase hex HMAC-SHA256 of the raw body, keyed with the whole secret text (\`whsec_…\`, as UTF-8). During a rotation, two of them, comma-separated. |
| \`webhook-id\` | The event's \`id\` (\`evt_…\`), the same on every attempt. |
| \`webhook-timestamp\` | When this attempt was signed, in Unix seconds. |
| \`webhook-signature\` | [Standard Webhooks](https://www.standardwebhooks.com/): \`v1,<base64>\`, the HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<raw body>\` keyed with the base64-decoded part of the secret after \`whsec_\`. During a rotation, two of them, space-separated. |

Compare signatures in constant time, and refuse a \`webhook-timestamp\` more than a few minutes
from your clock, so that a captured delivery cannot be replayed later. Checking
\`X-Cheese-Signature\` in Node.js:

\`\`\`js
import { createHmac, timingSafeEqual } from 'node:crypto';

function verified(rawBody, header, secret) {
  const expected = Buffer.from(\`sha256=\${createHmac('sha256', secret).update(rawBody).digest('hex')}\`);
  return (header ?? '').split(',').map((part) => Buffer.from(part.trim())).some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
\`\`\`

The Standard Webhooks headers can be checked with any of that specification's libraries,
which take the \`whsec_…\` secret as it is.

## The events

| Event | Trigger |
|---|---|
${EVENT_TYPES.map((type) => `| [\`${type}\`](#${type.replaceAll('.', '')}) | ${cell(EVENT_TRIGGERS[type])} |`).join('\n')}`;

const document = `${[INTRO, ...EVENT_TYPES.map(section)].join('\n\n')}\n`;

if (check) {
  const committed = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (committed !== document) {
    console.error('docs/events.md is out of date: run `npx tsx scripts/events.ts` and commit the result.');
    process.exit(1);
  }
  console.log('docs/events.md is up to date');
} else {
  fs.writeFileSync(target, document);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}
