/**
 * Charts drawn on the server as inline SVG markup (issue 31): no chart script, no style
 * attribute (the CSP refuses style=); shapes take their colour from classes in dashboard.css,
 * so dark mode applies. Pure functions of their numbers: test/dashboard/charts-rules.test.ts.
 * Every chart is role="img" labelled by a one-line summary the page shows (its id given here),
 * and the page gives the same numbers in a table.
 */

export interface ChartSeries {
  /** Class of its shapes (`chart-2xx`), defined in dashboard.css. */
  className: string;
  label: string;
}

export interface StackedColumn {
  /** Under the column when `tick` is set ("04:00"). */
  label: string;
  tick?: boolean;
  /** One value per series, in the series' order. */
  values: readonly number[];
}

export interface StackedBarChart {
  /** The id of the element whose text is the chart's accessible name. */
  labelledBy: string;
  series: readonly ChartSeries[];
  columns: readonly StackedColumn[];
  width?: number;
  height?: number;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text and attribute values as SVG (XML) takes them. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}

/** Coordinates to two decimals: enough for a screen, short in the page. */
export const coord = (n: number): string => String(Math.round(n * 100) / 100);

/** An id as an attribute value takes it (ids are ours, but never trusted to be clean). */
const idOf = (id: string) => escapeXml(id.replace(/[^A-Za-z0-9_-]/g, '-'));

/** The axis's top: the maximum rounded up to 1, 2 or 5 times a power of ten (at least 1). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

const PAD = { left: 48, right: 8, top: 8, bottom: 22 };

/**
 * Columns of stacked rectangles (one per series, bottom up), a baseline, the axis's top value
 * and the ticked columns' labels. A zero value draws nothing; an empty chart draws its axes.
 */
export function stackedBarChart(chart: StackedBarChart): string {
  const width = chart.width ?? 720;
  const height = chart.height ?? 200;
  const plotW = width - PAD.left - PAD.right;
  const plotH = height - PAD.top - PAD.bottom;
  const totals = chart.columns.map((column) => column.values.reduce((sum, v) => sum + Math.max(0, v), 0));
  const top = niceMax(Math.max(0, ...totals));
  const slot = chart.columns.length > 0 ? plotW / chart.columns.length : plotW;
  const barW = Math.max(1, slot * 0.8);
  const baseline = PAD.top + plotH;
  const parts: string[] = [];
  chart.columns.forEach((column, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    let y = baseline;
    column.values.forEach((value, s) => {
      const series = chart.series[s];
      if (!series || !(value > 0)) return;
      const h = (value / top) * plotH;
      y -= h;
      parts.push(`<rect class="${escapeXml(series.className)}" x="${coord(x)}" y="${coord(y)}" width="${coord(barW)}" height="${coord(h)}"/>`);
    });
    if (column.tick) parts.push(`<text class="chart-label" x="${coord(PAD.left + i * slot + slot / 2)}" y="${coord(height - 6)}" text-anchor="middle">${escapeXml(column.label)}</text>`);
  });
  return [
    `<svg class="chart" role="img" aria-labelledby="${idOf(chart.labelledBy)}" viewBox="0 0 ${width} ${height}" focusable="false">`,
    `<line class="chart-axis" x1="${PAD.left}" y1="${coord(baseline)}" x2="${coord(width - PAD.right)}" y2="${coord(baseline)}"/>`,
    `<line class="chart-grid" x1="${PAD.left}" y1="${PAD.top}" x2="${coord(width - PAD.right)}" y2="${PAD.top}"/>`,
    `<text class="chart-label" x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${escapeXml(String(top))}</text>`,
    `<text class="chart-label" x="${PAD.left - 4}" y="${coord(baseline)}" text-anchor="end">0</text>`,
    ...parts,
    '</svg>',
  ].join('');
}

/** A horizontal bar filled to `fraction` (0 to 1, clamped): a success rate at a glance. */
export function meter(labelledBy: string, fraction: number, fillClass: string, width = 320, height = 20): string {
  const share = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  return [
    `<svg class="chart meter" role="img" aria-labelledby="${idOf(labelledBy)}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" focusable="false">`,
    `<rect class="chart-track" x="0" y="0" width="${width}" height="${height}"/>`,
    share > 0 ? `<rect class="${escapeXml(fillClass)}" x="0" y="0" width="${coord(width * share)}" height="${height}"/>` : '',
    '</svg>',
  ].join('');
}
