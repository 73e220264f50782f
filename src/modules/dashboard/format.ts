/** How the pages write instants: UTC to the minute, the same for every viewer. */
export function formatTime(iso: string | null, none = '—'): string {
  if (!iso) return none;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A form field that a checkbox group sends as one value, several, or none. */
export function listOf(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}
