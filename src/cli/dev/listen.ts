import type { Fromagerie } from '@fromagerie/sdk';
import { newWebhookSecret } from '../../modules/webhooks/webhook-signing.module.js';
import { clientOf, connectionOf, EXIT, Exit, exitOf, FromagerieError, POLL_MARGIN_MS, stopOnSignals, transient, WAIT_S } from './connection.js';
import { durationMs, extraHeaders, forward, forwardTarget, type LoggedEvent } from './forward.js';
import { backoffMs, Output, pause } from './output.js';
import { ListenState } from './state.js';
import type { DevValues } from './options.js';

const PAGE = 100;
const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/** Where --resume's cursor is kept: per API and key (its prefix: the key itself is never written). */
const cursorScope = (apiBase: string, apiKey: string) => `${apiBase.replace(/\/+$/, '')} ${apiKey.slice(0, 16)}`;


export async function listen(values: DevValues): Promise<void> {
  const state = new ListenState();
  const secret = state.secret(newWebhookSecret);
  if (values['print-secret']) {
    process.stdout.write(`${secret}\n`);
    return;
  }
  const connection = connectionOf(values);
  const target = forwardTarget(values['forward-to']);
  const headers = extraHeaders(values.header);
  const timeoutMs = durationMs(values.timeout, 10_000, '--timeout');
  const types = (values.events ?? []).flatMap((list) => list.split(',')).map((type) => type.trim()).filter(Boolean);
  if (values.after !== undefined && values.resume) throw new Exit(EXIT.usage, '--after and --resume exclude each other');
  if (values.after !== undefined && values.after !== 'now' && !EVENT_ID.test(values.after)) throw new Exit(EXIT.usage, `--after ${values.after}: expected an event id (evt_ and 32 hex digits) or now`);
  const scope = cursorScope(connection.apiBase, connection.apiKey);
  let after = values.after ?? 'now';
  if (values.resume) {
    const saved = state.cursor(scope);
    if (saved) after = saved;
  }
  const out = new Output(values.format === 'json');
  // The SDK retries nothing here: this loop does, for ever, with its own backoff.
  const sdk: Fromagerie = clientOf(connection, { maxRetries: 0, timeoutMs: WAIT_S * 1000 + POLL_MARGIN_MS });

  const stop = stopOnSignals();
  out.line('secret', `Webhook signing secret: ${secret} (kept in ${state.secretFile}; \`fromagerie listen --print-secret\` prints it alone)`, { secret });
  out.line('starting', `Listening to ${connection.apiBase}/events${types.length ? ` (${types.join(', ')})` : ''} from ${after}, forwarding to ${target.href}`, { apiBase: connection.apiBase, forwardTo: target.href, after, types });

  let ready = false;
  let failures = 0;
  try {
    while (!stop.signal.aborted) {
      let page: { items: LoggedEvent[]; nextAfter?: string | null };
      try {
        // The first poll answers at once (nothing held), so Ready comes as soon as the log answered.
        const query = { after, wait: ready ? WAIT_S : 0, limit: PAGE, ...(types.length ? { type: types } : {}) };
        const { data, error, response } = await sdk.raw.GET('/events', { params: { query: query as never }, signal: stop.signal });
        if (!response.ok) throw new FromagerieError(response, error);
        page = data as unknown as typeof page;
      } catch (error) {
        if (stop.signal.aborted) break;
        if (transient(error)) {
          const delay = backoffMs(failures++);
          out.warn('poll_failed', `poll failed (${(error as Error).message}); retrying in ${delay / 1000} s`, { error: (error as Error).message, retryInMs: delay });
          await pause(delay, stop.signal);
          continue;
        }
        if (error instanceof FromagerieError && error.status === 400) throw new Exit(EXIT.usage, `${error.message}${ready ? '' : ' (nothing was forwarded)'}`);
        if (error instanceof FromagerieError && error.status === 404 && after !== 'now') throw new Exit(EXIT.usage, `--after ${after}: ${error.message}`);
        throw exitOf(error);
      }
      if (failures > 0) out.warn('poll_recovered', `the event log answers again after ${failures} failed poll(s)`, { failures });
      failures = 0;
      if (!ready) {
        ready = true;
        out.line('ready', `Ready: forwarding events to ${target.href} (Ctrl-C to stop)`, { forwardTo: target.href });
      }
      for (const event of page.items) {
        if (!(await deliver(event))) break;
        after = event.id;
        state.saveCursor(scope, event.id);
      }
      if (stop.signal.aborted) break;
      if (page.nextAfter) after = page.nextAfter;
    }
  } finally {
    stop.release();
  }
  out.line('stopped', `Stopped; the last event answered is saved for --resume`, {});

  /** Forwards one event until the receiver answers (any status); false when stopped first. */
  async function deliver(event: LoggedEvent): Promise<boolean> {
    out.line('event', `--> ${event.type} ${event.id}`, { type: event.type, id: event.id });
    for (let attempt = 0; ; attempt++) {
      let outcome;
      try {
        outcome = await forward(target, event, secret, { headers, timeoutMs, signal: stop.signal });
      } catch (error) {
        if (stop.signal.aborted) return false;
        throw error;
      }
      if (outcome.answered) {
        out.line('answer', `<-- ${outcome.status} ${event.type} ${event.id} ${outcome.ms} ms`, { type: event.type, id: event.id, status: outcome.status, ms: outcome.ms });
        return true;
      }
      const delay = backoffMs(attempt);
      out.warn('unreachable', `!!! ${target.href} unreachable for ${event.id} (${outcome.reason}); retrying in ${delay / 1000} s`, { id: event.id, error: outcome.reason, retryInMs: delay });
      await pause(delay, stop.signal);
      if (stop.signal.aborted) return false;
    }
  }
}
