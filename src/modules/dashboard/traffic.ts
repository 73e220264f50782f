import type { HourlyCount } from '../request-log/request-log.module.js';
import type { ChartSeries, StackedColumn } from './charts.js';

const HOUR_MS = 3_600_000;
export const HOURS = 24;

/** The status classes drawn, bottom up, each with its class in dashboard.css. */
export const STATUS_CLASSES: readonly (ChartSeries & { statusClass: number })[] = [
  { statusClass: 2, label: '2xx', className: 'chart-2xx' },
  { statusClass: 3, label: '3xx', className: 'chart-3xx' },
  { statusClass: 4, label: '4xx', className: 'chart-4xx' },
  { statusClass: 5, label: '5xx', className: 'chart-5xx' },
];

/** The window the overview draws: the 24 whole hours ending with the current one (UTC), `to` being now. */
export function trafficWindow(now: number): { from: string; to: string; firstHour: number } {
  const firstHour = Math.floor(now / HOUR_MS) * HOUR_MS - (HOURS - 1) * HOUR_MS;
  return { from: new Date(firstHour).toISOString(), to: new Date(now).toISOString(), firstHour };
}

export interface HourRow {
  /** "04:00" (UTC). */
  label: string;
  /** The hour's start, ISO. */
  iso: string;
  /** Per status class, in STATUS_CLASSES' order. */
  counts: number[];
  total: number;
}

/** Every hour of the window, the empty ones too, oldest first; 1xx and unknown classes are left out. */
export function hourRows(counts: readonly HourlyCount[], firstHour: number): HourRow[] {
  const byKey = new Map(counts.map((c) => [`${c.hour} ${c.statusClass}`, c.count]));
  return Array.from({ length: HOURS }, (_, i) => {
    const start = new Date(firstHour + i * HOUR_MS).toISOString();
    const hour = start.slice(0, 13);
    const row = STATUS_CLASSES.map((s) => byKey.get(`${hour} ${s.statusClass}`) ?? 0);
    return { label: `${start.slice(11, 13)}:00`, iso: start, counts: row, total: row.reduce((a, b) => a + b, 0) };
  });
}

/** The chart's columns: a label under every sixth hour. */
export function trafficColumns(rows: readonly HourRow[]): StackedColumn[] {
  return rows.map((row, i) => ({ label: row.label, tick: i % 6 === 0, values: row.counts }));
}

const number = (n: number) => n.toLocaleString('en-US');

/** The chart's one-line summary (its accessible name): the totals per class and the busiest hour. */
export function trafficSummary(rows: readonly HourRow[]): string {
  const totals = STATUS_CLASSES.map((_, s) => rows.reduce((sum, row) => sum + row.counts[s]!, 0));
  const all = totals.reduce((a, b) => a + b, 0);
  if (all === 0) return 'Requests per hour, last 24 hours: none.';
  const busiest = rows.reduce((best, row) => (row.total > best.total ? row : best), rows[0]!);
  const classes = STATUS_CLASSES.map((s, i) => `${number(totals[i]!)} ${s.label}`).join(', ');
  return `Requests per hour, last 24 hours: ${number(all)} in all (${classes}); busiest hour ${busiest.label} UTC with ${number(busiest.total)}.`;
}
