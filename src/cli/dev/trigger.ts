import { randomBytes, randomUUID } from 'node:crypto';
import type { Fromagerie } from '@fromagerie/sdk';
import { clientOf, connectionOf, EXIT, Exit, exitOf, FromagerieError } from './connection.js';
import { interpolate, loadFixtures, type Fixture } from './fixtures.js';
import type { LoggedEvent } from './forward.js';
import { Output } from './output.js';
import type { DevValues } from './options.js';

/** Environments where `trigger` may write (GET /v2/health's `environment`): never production. */
const TRIGGERABLE = new Set(['development', 'sandbox']);

export async function trigger(values: DevValues, positionals: string[]): Promise<void> {
  const fixtures = loadFixtures();
  const out = new Output(values.format === 'json');
  if (values.list) {
    for (const fixture of fixtures) {
      const text = fixture.onlyBy ? `${fixture.kind}\t(no fixture: caused only by ${fixture.onlyBy})` : `${fixture.kind}\t${fixture.description}`;
      out.line('fixture', text, { type: fixture.kind, description: fixture.description, ...(fixture.onlyBy ? { onlyBy: fixture.onlyBy } : {}) });
    }
    return;
  }
  const [kind, ...rest] = positionals;
  if (!kind || rest.length) throw new Exit(EXIT.usage, 'trigger takes one event kind (fromagerie trigger --list lists them)');
  const fixture = fixtures.find((f) => f.kind === kind);
  if (!fixture) throw new Exit(EXIT.usage, `no fixture for "${kind}": fromagerie trigger --list lists the kinds`);
  if (fixture.onlyBy) throw new Exit(EXIT.usage, `no API call causes ${kind}: only ${fixture.onlyBy}`);
  const connection = connectionOf(values);
  if (connection.apiKey.startsWith('sk_live_')) throw new Exit(EXIT.failed, 'trigger refuses live keys (sk_live_): it writes test data, in development or sandbox only');
  const sdk = clientOf(connection);
  try {
    await refuseProduction(sdk);
    await run(sdk, fixture, out);
  } catch (error) {
    throw exitOf(error);
  }
}

async function refuseProduction(sdk: Fromagerie): Promise<void> {
  const { data, error, response } = await sdk.raw.GET('/health');
  if (!response.ok) throw new FromagerieError(response, error);
  const environment = (data as { environment?: string }).environment ?? 'unknown';
  if (!TRIGGERABLE.has(environment)) throw new Exit(EXIT.failed, `trigger runs only against a development or sandbox API: this one is ${environment}`);
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

async function call(sdk: Fromagerie, method: Method, path: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
  const request = (sdk.raw as unknown as Record<Method, (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>>)[method];
  const { data, error, response } = await request(path, { ...(body === undefined ? {} : { body }), headers });
  if (!response.ok) throw new FromagerieError(response, error);
  return data ?? null;
}

/** Polls of a second each that may pass with nothing new before the fixture's own kind is given up. */
const MAX_EMPTY_POLLS = 15;

async function run(sdk: Fromagerie, fixture: Fixture, out: Output): Promise<void> {
  // Where the log is before the first call: the events printed are those after it.
  const head = (await sdk.events.list({ after: 'now', wait: 0 } as never)) as unknown as { nextAfter: string | null };
  const answers: Record<string, unknown> = { random: randomBytes(4).toString('hex') };
  const touched = new Set<string>();
  for (const step of fixture.steps) {
    const path = String(interpolate(step.path, answers));
    const headers: Record<string, string> = {};
    if (step.method === 'POST') headers['idempotency-key'] = randomUUID();
    if (step.auth === 'none') headers.authorization = null as unknown as string;
    else if (step.auth) headers.authorization = `Bearer ${String(interpolate(step.auth, answers))}`;
    const answer = await call(sdk, step.method, path, step.body === undefined ? undefined : interpolate(step.body, answers), headers);
    out.line('call', `${step.method} ${path}`, { method: step.method, path });
    if (step.name) answers[step.name] = answer;
    const id = (answer as { id?: unknown } | null)?.id;
    if (step.object && id !== undefined) touched.add(`${step.object}/${String(id)}`);
  }
  let after = head.nextAfter ?? 'now';
  let printed = 0;
  let sawKind = false;
  let emptyPolls = 0;
  // Until the fixture's own kind is shown and a poll then stays empty for a second. On PostgreSQL
  // the log shows an event only once no older transaction is open (a long one elsewhere can hold
  // it for seconds); the log's head moves in commit order, so once the last step's event is
  // visible every earlier one is too. An event of that kind that never shows (another account's,
  // to a customer key) is given up after MAX_EMPTY_POLLS seconds.
  for (;;) {
    const page = (await sdk.events.list({ after, wait: 1, limit: 100 } as never)) as unknown as { items: (LoggedEvent & { metadata: { object_type: string; object_id: string } })[]; nextAfter: string | null };
    for (const event of page.items) {
      if (!touched.has(`${event.metadata.object_type}/${event.metadata.object_id}`)) continue;
      printed++;
      if (event.type === fixture.kind) sawKind = true;
      out.line('event', `${event.type} ${event.id} (${event.metadata.object_type} ${event.metadata.object_id})`, { type: event.type, id: event.id, objectType: event.metadata.object_type, objectId: event.metadata.object_id });
    }
    if (page.nextAfter) after = page.nextAfter;
    if (page.items.length > 0) continue;
    if (sawKind || ++emptyPolls >= MAX_EMPTY_POLLS) break;
  }
  if (printed === 0) out.warn('no_events', 'no event of the objects it touched is visible to this key (customer events of another account need a staff key)');
}
