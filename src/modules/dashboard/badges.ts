/**
 * Status badges (issue 31): a word and a tone, drawn by partials/badge.eta. The word always says
 * it (colour is never the only signal); the tone only colours it. The words come from the
 * modules that own the states: this file only chooses the colour.
 */
import type { KeyState } from '../identity/identity.module.js';

export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'neutral';

export interface Badge {
  text: string;
  tone: Tone;
}

export const badge = (text: string, tone: Tone): Badge => ({ text, tone });

/** "200", "404", "503": 2xx ok, 3xx info, 4xx warn, 5xx bad. */
export function httpStatusBadge(status: number | null): Badge {
  if (status === null) return badge('No answer', 'bad');
  if (status >= 500) return badge(String(status), 'bad');
  if (status >= 400) return badge(String(status), 'warn');
  if (status >= 300) return badge(String(status), 'info');
  return badge(String(status), 'ok');
}

const ORDER_TONES: Record<string, Tone> = { placed: 'info', approved: 'info', shipped: 'info', delivered: 'ok', cancelled: 'neutral' };

/** An order's status in the words of the orders module. */
export function orderStatusBadge(status: string, text = status): Badge {
  return badge(text, ORDER_TONES[status] ?? 'neutral');
}

/** A delivery attempt or a webhook's health: succeeded/failing/pending and the like. */
export function outcomeBadge(text: string, outcome: 'succeeded' | 'failed' | 'pending' | 'dead' | 'disabled'): Badge {
  const tones: Record<typeof outcome, Tone> = { succeeded: 'ok', failed: 'warn', pending: 'info', dead: 'bad', disabled: 'neutral' };
  return badge(text, tones[outcome]);
}

const KEY_BADGES: Record<KeyState, Tone> = { active: 'ok', retiring: 'warn', expired: 'neutral', revoked: 'bad' };

/** A key's state (identity's keyState) as a badge: "Active", "Rolled", "Expired", "Revoked". */
export function keyStatusBadge(state: KeyState): Badge {
  const words: Record<KeyState, string> = { active: 'Active', retiring: 'Rolled', expired: 'Expired', revoked: 'Revoked' };
  return badge(words[state], KEY_BADGES[state]);
}

/** A webhook's health: Active, Paused (by its owner), Disabled (by the receiver's 410). */
export function webhookHealthBadge(status: string): Badge {
  const tones: Record<string, Tone> = { Active: 'ok', Paused: 'neutral', Disabled: 'bad' };
  return badge(status, tones[status] ?? 'neutral');
}

/** An attempt's outcome as the log words it (Delivered, Failed, Pending, Dead-lettered). */
export function attemptBadge(status: string): Badge {
  const outcomes: Record<string, 'succeeded' | 'failed' | 'pending' | 'dead'> = { Delivered: 'succeeded', Failed: 'failed', Pending: 'pending', 'Dead-lettered': 'dead' };
  return outcomeBadge(status, outcomes[status] ?? 'failed');
}
