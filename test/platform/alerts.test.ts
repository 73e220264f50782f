import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { documentedMetrics, metricsOf, prometheusInstalled, PROMTOOL, read, ROOT, run } from '../helpers/prometheus.js';

/**
 * deploy/prometheus.yml, deploy/alerts.yml (with its unit tests, deploy/alerts.test.yml) and
 * deploy/grafana-dashboard.json: promtool checks and tests them (Debian's `prometheus`
 * package; REQUIRE_PROMETHEUS=1, as in .ci/run, makes its absence a failure), and every metric
 * they read is one docs/metrics.md documents. test/platform/prometheus.test.ts runs a real
 * Prometheus with them against a real instance.
 */
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test: { eval_time: string; alertname: string; exp_alerts: unknown[] }[];
}
const rules = (parse(read('deploy/alerts.yml')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);
const ruleTests = (parse(read('deploy/alerts.test.yml')) as { tests: RuleTest[] }).tests.flatMap((test) => test.alert_rule_test);
const documented = documentedMetrics();

/** The figures issue 32 §4 asks an alert (and a dashboard panel) for, by the metric each reads. */
const COVERED = [
  'up',
  'fromagerie_http_request_duration_seconds',
  'fromagerie_webhook_deliveries_due',
  'fromagerie_webhook_oldest_due_seconds',
  'fromagerie_webhook_deliveries',
  'fromagerie_outbox_lag_seconds',
  'fromagerie_db_pool_waiting',
  'fromagerie_rate_limit_fallbacks_total',
];

async function promtool(args: string[]): Promise<string> {
  const { stdout, stderr } = await run(PROMTOOL, args, { cwd: ROOT });
  return stdout + stderr;
}

describe('deploy/alerts.yml', () => {
  it('gives every alert a for:, a severity, a summary, a description and a runbook with its link', () => {
    expect(rules.length).toBeGreaterThanOrEqual(9);
    for (const rule of rules) {
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
      expect(rule.annotations?.runbook, rule.alert).toMatch(/\S.* docs\/operations\.md#alerts$/);
      expect(rule.annotations?.runbook_url, rule.alert).toBe('docs/operations.md#alerts');
    }
  });

  it('reads only metrics docs/metrics.md documents, and covers each figure the issue names', () => {
    const read = new Set(rules.flatMap((rule) => metricsOf(rule.expr, documented)));
    for (const name of read) expect(documented, name).toContain(name);
    for (const name of COVERED) expect(read, name).toContain(name);
    expect(read).toContain('fromagerie_rate_limit_fail_closed_total');
  });

  it('has unit tests of each alert: series that fire it and series that do not', () => {
    for (const rule of rules) {
      const tests = ruleTests.filter((test) => test.alertname === rule.alert);
      expect(tests.some((test) => test.exp_alerts.length > 0), `${rule.alert} fires in a test`).toBe(true);
      expect(tests.some((test) => test.exp_alerts.length === 0), `${rule.alert} stays silent in a test`).toBe(true);
    }
  });

  it('is listed in docs/operations.md#alerts, each alert with its runbook line', () => {
    const docs = read('docs/operations.md');
    const section = docs.slice(docs.indexOf('\n## Alerts\n'));
    expect(section.length).toBeLessThan(docs.length);
    for (const rule of rules) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${rule.alert}\` |`));
      expect(row, rule.alert).toBeDefined();
      expect(row, rule.alert).toContain(rule.annotations!.runbook!.replace(/ docs\/operations\.md#alerts$/, ''));
    }
  });

  it('passes promtool check config, check rules and test rules', async (context) => {
    if (!(await prometheusInstalled(PROMTOOL, 'alerts.test.ts'))) return context.skip();
    expect(await promtool(['check', 'config', 'deploy/prometheus.yml'])).toContain('SUCCESS: deploy/prometheus.yml is valid prometheus config file syntax');
    expect(await promtool(['check', 'rules', 'deploy/alerts.yml'])).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(await promtool(['test', 'rules', 'deploy/alerts.test.yml'])).toContain('SUCCESS');
  });
});

describe('deploy/prometheus.yml', () => {
  it('scrapes the three compose instances on their metrics port and loads the alerts', () => {
    const config = parse(read('deploy/prometheus.yml')) as { rule_files: string[]; scrape_configs: { job_name: string; metrics_path?: string; static_configs: { targets: string[] }[] }[] };
    expect(config.rule_files).toEqual(['alerts.yml']);
    const job = config.scrape_configs.find((scrape) => scrape.job_name === 'fromagerie')!;
    expect(job.metrics_path ?? '/metrics').toBe('/metrics');
    expect(job.static_configs.flatMap((c) => c.targets)).toEqual(['app1:9464', 'app2:9464', 'app3:9464']);
    // The compose instances serve their metrics there, and compose's Prometheus mounts both files beside each other.
    const compose = parse(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, { environment?: Record<string, string>; volumes?: string[]; profiles?: string[] }> };
    for (const app of ['app1', 'app2', 'app3']) expect(compose.services[app]!.environment!.METRICS_PORT, app).toBe('9464');
    expect(compose.services.prometheus!.profiles).toEqual(['monitoring']);
    expect(compose.services.prometheus!.volumes).toEqual(expect.arrayContaining(['./prometheus.yml:/etc/prometheus/prometheus.yml:ro', './alerts.yml:/etc/prometheus/alerts.yml:ro']));
  });
});

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

describe('deploy/grafana-dashboard.json', () => {
  const dashboard = JSON.parse(read('deploy/grafana-dashboard.json')) as { title: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.targets?.length);
  const exprs = panels.flatMap((panel) => panel.targets!.map((target) => target.expr));

  it('parses, with a Prometheus data source to choose and a query in every panel', () => {
    expect(dashboard.title).toMatch(/Fromagerie/);
    expect(dashboard.templating.list.find((variable) => variable.type === 'datasource')).toBeTruthy();
    expect(panels.length).toBeGreaterThanOrEqual(7);
    for (const expr of exprs) expect(expr.trim()).not.toBe('');
  });

  it('queries only metrics docs/metrics.md documents, and shows each figure the alerts watch', () => {
    const read = new Set(exprs.flatMap((expr) => metricsOf(expr, documented)));
    for (const name of read) expect(documented, name).toContain(name);
    for (const name of [...COVERED, 'fromagerie_db_pool_connections', 'fromagerie_db_pool_max_connections']) expect(read, name).toContain(name);
  });

  it('has queries PromQL accepts (promtool check rules, Grafana\'s $__rate_interval as 5m)', async (context) => {
    if (!(await prometheusInstalled(PROMTOOL, 'alerts.test.ts'))) return context.skip();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fromagerie-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard-queries.yml');
      const recorded = exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr: expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m') }));
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: recorded }] }));
      expect(await promtool(['check', 'rules', file])).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
