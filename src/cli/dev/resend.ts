import { newWebhookSecret } from '../../modules/webhooks/webhook-signing.module.js';
import { clientOf, connectionOf, EXIT, Exit, exitOf } from './connection.js';
import { durationMs, extraHeaders, forward, forwardTarget, type LoggedEvent } from './forward.js';
import { Output } from './output.js';
import { ListenState } from './state.js';
import type { DevValues } from './options.js';

/** `events resend evt_… --forward-to URL`: one event of the log, signed as `listen` signs, forwarded once. */
export async function resend(values: DevValues, positionals: string[]): Promise<void> {
  const [id, ...rest] = positionals;
  if (!id || rest.length || !/^evt_[0-9a-f]{32}$/.test(id)) throw new Exit(EXIT.usage, 'events resend takes one event id (evt_ and 32 hex digits)');
  const connection = connectionOf(values);
  const target = forwardTarget(values['forward-to']);
  const headers = extraHeaders(values.header);
  const timeoutMs = durationMs(values.timeout, 10_000, '--timeout');
  const secret = new ListenState().secret(newWebhookSecret);
  const out = new Output(values.format === 'json');
  let event: LoggedEvent;
  try {
    event = (await clientOf(connection).events.get(id)) as unknown as LoggedEvent;
  } catch (error) {
    throw exitOf(error);
  }
  out.line('event', `--> ${event.type} ${event.id}`, { type: event.type, id: event.id });
  const outcome = await forward(target, event, secret, { headers, timeoutMs, signal: new AbortController().signal });
  if (!outcome.answered) throw new Exit(EXIT.failed, `${target.href} could not be reached (${outcome.reason})`);
  out.line('answer', `<-- ${outcome.status} ${event.type} ${event.id} ${outcome.ms} ms${outcome.body ? `\n${outcome.body.slice(0, 2000)}` : ''}`, { type: event.type, id: event.id, status: outcome.status, ms: outcome.ms, body: outcome.body.slice(0, 2000) });
}
