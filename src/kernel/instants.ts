/**
 * What an instant or a date a client sends must be (decisions.md, issue 28): RFC 3339 text
 * that names a real instant both databases store and print back. The JSON Schema formats
 * admit a leap second (`23:59:60`, which no clock here represents), year 0000 (PostgreSQL has
 * no year 0) and offsets that carry 9999-12-31 into year 10000 (printed `+010000-…`): each of
 * those answered 500. The validation layer registers these as the `date-time` and `date`
 * formats, so every parameter declaring one is checked, and no route can forget.
 */

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the instants we accept, both included. */
export const EARLIEST_INSTANT_MS = Date.parse('0001-01-01T00:00:00Z');
export const LATEST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

export const INSTANT_MESSAGE = 'must be an instant in RFC 3339 form with a time zone (2026-06-30T23:59:59Z), between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z; no leap second (:60)';
export const DATE_MESSAGE = 'must be a date (YYYY-MM-DD) between 0001-01-01 and 9999-12-31';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** The instant's milliseconds, or null when the text is not one we accept (see above). */
export function instantOf(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  if (m[7] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS ? ms : null;
}

export function isInstantText(text: string): boolean {
  return instantOf(text) !== null;
}

/** A calendar day (UTC) as YYYY-MM-DD: its first instant's milliseconds, or null. */
export function dayOf(text: string): number | null {
  const m = DATE.exec(text);
  if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) return null;
  return Date.parse(`${text}T00:00:00Z`);
}

export function isDateText(text: string): boolean {
  return dayOf(text) !== null;
}
