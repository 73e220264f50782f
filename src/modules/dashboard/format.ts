/** How the pages write instants: UTC to the minute, the same for every viewer. */
export function formatTime(iso: string | null, none = '—'): string {
  if (!iso) return none;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** An instant as a page shows it (partials/when.eta): "3 min ago", with the exact UTC time beside it for machines and screen readers. */
export interface When {
  /** ISO 8601, for `<time datetime>`; null when there is no instant. */
  iso: string | null;
  /** "2026-11-29 04:30 UTC". */
  exact: string;
  /** "just now", "3 min ago", "in 2 h", "5 days ago"; the `none` text when there is no instant. */
  relative: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How far `iso` is from `now`, in the largest unit that reads naturally; past a month, the date itself. */
export function relativeTime(iso: string, now: number): string {
  const delta = now - Date.parse(iso);
  const distance = Math.abs(delta);
  if (distance < MINUTE) return 'just now';
  let amount: string;
  if (distance < HOUR) amount = `${Math.floor(distance / MINUTE)} min`;
  else if (distance < DAY) amount = `${Math.floor(distance / HOUR)} h`;
  else if (distance < 30 * DAY) {
    const days = Math.floor(distance / DAY);
    amount = `${days} day${days === 1 ? '' : 's'}`;
  } else return formatTime(iso);
  return delta >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** The view of an instant for partials/when.eta; `now` from the app's clock, so tests move it. */
export function when(iso: string | null | undefined, now: number, none = '—'): When {
  if (!iso) return { iso: null, exact: none, relative: none };
  return { iso, exact: formatTime(iso), relative: relativeTime(iso, now) };
}

/** A form field that a checkbox group sends as one value, several, or none. */
export function listOf(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}
