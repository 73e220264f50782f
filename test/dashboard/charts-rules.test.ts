import { describe, expect, it } from 'vitest';
import { escapeXml, meter, niceMax, stackedBarChart } from '../../src/modules/dashboard/charts.js';
import { hourRows, trafficColumns, trafficSummary, trafficWindow } from '../../src/modules/dashboard/traffic.js';

/** The overview's SVG charts as pure functions (issue 31): geometry, escaping, the hours of the window. */

const rects = (svg: string) => [...svg.matchAll(/<rect class="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"\/>/g)].map((m) => ({ cls: m[1], x: Number(m[2]), y: Number(m[3]), w: Number(m[4]), h: Number(m[5]) }));
const series = [
  { className: 'chart-2xx', label: '2xx' },
  { className: 'chart-4xx', label: '4xx' },
];

describe('niceMax', () => {
  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, -3, Number.NaN, 0.3, 1, 3, 7, 10, 11, 40, 99, 101, 4000].map(niceMax)).toEqual([1, 1, 1, 0.5, 1, 5, 10, 10, 20, 50, 100, 200, 5000]);
  });
});

describe('stackedBarChart', () => {
  it('stacks each column\'s series bottom up, in proportion to the axis top, and labels the ticked columns', () => {
    const svg = stackedBarChart({ labelledBy: 'summary', series, columns: [{ label: 'a', tick: true, values: [6, 4] }, { label: 'b', values: [0, 5] }], width: 240, height: 130 });
    // Plot: x 48..232 (184 wide, 92 per column), y 8..108 (100 high); the top is 10.
    expect(rects(svg)).toEqual([
      { cls: 'chart-2xx', x: 57.2, y: 48, w: 73.6, h: 60 },
      { cls: 'chart-4xx', x: 57.2, y: 8, w: 73.6, h: 40 },
      // A zero draws nothing; the next series starts at the baseline.
      { cls: 'chart-4xx', x: 149.2, y: 58, w: 73.6, h: 50 },
    ]);
    expect(svg).toContain('<text class="chart-label" x="94" y="124" text-anchor="middle">a</text>');
    expect(svg).not.toContain('>b</text>');
    expect(svg).toContain('text-anchor="end">10</text>');
    expect(svg.startsWith('<svg class="chart" role="img" aria-labelledby="summary" viewBox="0 0 240 130" focusable="false">')).toBe(true);
    expect(svg).not.toMatch(/style=/);
  });

  it('draws the axes alone when there is nothing, or no column', () => {
    for (const columns of [[], [{ label: 'a', values: [0, 0] }]]) {
      const svg = stackedBarChart({ labelledBy: 's', series, columns });
      expect(rects(svg)).toEqual([]);
      expect(svg).toContain('<line class="chart-axis"');
      expect(svg).toContain('text-anchor="end">1</text>');
    }
  });

  it('escapes labels, classes and ids: no markup of its own can be injected', () => {
    const svg = stackedBarChart({ labelledBy: 'x" onload="alert(1)', series: [{ className: 'a"b', label: '<b>' }], columns: [{ label: '<script>&"\'', tick: true, values: [1] }] });
    expect(svg).toContain('&lt;script&gt;&amp;&quot;&#39;');
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('aria-labelledby="x--onload--alert-1-"');
    expect(svg).toContain('class="a&quot;b"');
    expect(escapeXml('<&>"\'')).toBe('&lt;&amp;&gt;&quot;&#39;');
  });
});

describe('meter', () => {
  it('fills the share given, clamped to 0..1', () => {
    expect(meter('m', 0.25, 'chart-2xx', 200, 10)).toContain('<rect class="chart-2xx" x="0" y="0" width="50" height="10"/>');
    expect(meter('m', 3, 'chart-2xx', 200, 10)).toContain('width="200" height="10"/></svg>');
    expect(meter('m', -1, 'chart-2xx', 200, 10)).not.toContain('chart-2xx');
    expect(meter('m', Number.NaN, 'chart-2xx', 200, 10)).not.toContain('chart-2xx');
  });
});

describe('the traffic window', () => {
  it('is the 24 whole hours ending with the current one, every hour present, oldest first', () => {
    const now = Date.parse('2026-11-29T10:05:00.000Z');
    const window = trafficWindow(now);
    expect(window).toEqual({ from: '2026-11-28T11:00:00.000Z', to: '2026-11-29T10:05:00.000Z', firstHour: Date.parse('2026-11-28T11:00:00.000Z') });
    const rows = hourRows(
      [
        { hour: '2026-11-28T11', statusClass: 2, count: 3 },
        { hour: '2026-11-28T11', statusClass: 5, count: 1 },
        { hour: '2026-11-29T10', statusClass: 4, count: 2 },
        // 1xx is not drawn; an hour outside the window is not either.
        { hour: '2026-11-29T10', statusClass: 1, count: 9 },
        { hour: '2026-11-28T10', statusClass: 2, count: 9 },
      ],
      window.firstHour,
    );
    expect(rows).toHaveLength(24);
    expect(rows[0]).toEqual({ label: '11:00', iso: '2026-11-28T11:00:00.000Z', counts: [3, 0, 0, 1], total: 4 });
    expect(rows[23]).toEqual({ label: '10:00', iso: '2026-11-29T10:00:00.000Z', counts: [0, 0, 2, 0], total: 2 });
    expect(rows.slice(1, 23).every((row) => row.total === 0)).toBe(true);
    expect(trafficColumns(rows).filter((c) => c.tick).map((c) => c.label)).toEqual(['11:00', '17:00', '23:00', '05:00']);
    expect(trafficSummary(rows)).toBe('Requests per hour, last 24 hours: 6 in all (3 2xx, 0 3xx, 2 4xx, 1 5xx); busiest hour 11:00 UTC with 4.');
    expect(trafficSummary(hourRows([], window.firstHour))).toBe('Requests per hour, last 24 hours: none.');
  });
});
