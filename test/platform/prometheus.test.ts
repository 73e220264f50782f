import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { freePort } from '../helpers/oauth.js';
import { PROMETHEUS, prometheusInstalled, read, ROOT } from '../helpers/prometheus.js';
import { startServer } from '../helpers/server.js';

/**
 * Debian's Prometheus with deploy/prometheus.yml (its targets pointed at one real server
 * process's METRICS_PORT on 127.0.0.1, scraping and evaluating every second) and
 * deploy/alerts.yml: the target is up, every rule is evaluated and healthy over the real
 * metrics, none fires while the instance is well, and FromagerieInstanceDown becomes pending
 * once the instance is gone. Skipped with a message without Prometheus, unless
 * REQUIRE_PROMETHEUS=1 (.ci/run).
 */
interface ApiAnswer<T> {
  status: string;
  data: T;
}
interface Target {
  scrapeUrl: string;
  health: string;
  lastError: string;
}
interface RuleState {
  name: string;
  health: string;
  lastEvaluation: string;
  lastError?: string;
  state: string;
}
interface Alert {
  labels: Record<string, string>;
  state: string;
}

const installed = await prometheusInstalled(PROMETHEUS, 'prometheus.test.ts');

describe.skipIf(!installed)(`Prometheus scraping a real instance with deploy/alerts.yml (${DIALECT})`, () => {
  let storage: TestStorage;
  let server: ChildProcess & { output(): string };
  let prometheus: ChildProcess;
  let prometheusOutput = '';
  let dir: string;
  let metricsPort: number;
  let api: string;
  const get = async <T>(endpoint: string): Promise<T> => {
    const res = await fetch(`${api}/api/v1/${endpoint}`);
    const body = (await res.json()) as ApiAnswer<T>;
    expect(body.status, `${endpoint}: ${JSON.stringify(body)}\n${prometheusOutput}`).toBe('success');
    return body.data;
  };
  const rules = async () => (await get<{ groups: { rules: RuleState[] }[] }>('rules')).groups.flatMap((group) => group.rules);

  beforeAll(async () => {
    storage = await createTestStorage();
    const [port, promPort] = [await freePort(), await freePort()];
    metricsPort = await freePort();
    server = await startServer(processEnvFor(storage, { METRICS_PORT: String(metricsPort) }), port);
    // A request, so that the request histogram has a series to read.
    expect((await fetch(`http://127.0.0.1:${port}/v2/health`)).status).toBe(200);

    dir = mkdtempSync(path.join(os.tmpdir(), 'fromagerie-prometheus-'));
    const config = parse(read('deploy/prometheus.yml')) as { global: Record<string, string>; rule_files: string[]; scrape_configs: { static_configs: { targets: string[] }[] }[] };
    config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '1s' };
    config.rule_files = config.rule_files.map((file) => path.join(ROOT, 'deploy', file));
    config.scrape_configs[0]!.static_configs = [{ targets: [`127.0.0.1:${metricsPort}`] }];
    writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
    api = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(PROMETHEUS, [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ]);
    prometheus.stdout!.on('data', (d) => (prometheusOutput += d));
    prometheus.stderr!.on('data', (d) => (prometheusOutput += d));
    // expect.poll belongs in tests: a plain poll of its readiness endpoint here.
    const deadline = performance.now() + 30_000;
    while ((await fetch(`${api}/-/ready`).then((res) => res.status, () => 0)) !== 200) {
      if (performance.now() > deadline || prometheus.exitCode !== null) throw new Error(`Prometheus did not start:\n${prometheusOutput}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 120_000);

  afterAll(async () => {
    for (const child of [prometheus, server]) {
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
    await storage?.dispose();
  });

  it('sees the instance\'s metrics port as a target that is up', async () => {
    await expect
      .poll(async () => (await get<{ activeTargets: Target[] }>('targets')).activeTargets.map((t) => ({ url: t.scrapeUrl, health: t.health, error: t.lastError })), { timeout: 20_000, interval: 200 })
      .toEqual([{ url: `http://127.0.0.1:${metricsPort}/metrics`, health: 'up', error: '' }]);
    const up = await get<{ result: { value: [number, string] }[] }>(`query?query=${encodeURIComponent('up{job="fromagerie"}')}`);
    expect(up.result.map((r) => r.value[1])).toEqual(['1']);
  });

  it('has the metrics the alerts read, as scraped', async () => {
    const names = [
      'fromagerie_http_request_duration_seconds_bucket',
      'fromagerie_webhook_deliveries_due',
      'fromagerie_webhook_oldest_due_seconds',
      'fromagerie_webhook_deliveries',
      'fromagerie_outbox_lag_seconds',
      'fromagerie_backlog_query_success',
      'fromagerie_rate_limit_fallbacks_total',
      'fromagerie_rate_limit_fail_closed_total',
      'fromagerie_request_log_dropped_total',
      // The metric's `job` label, renamed by Prometheus (FromagerieJobFailing reads it so).
      'fromagerie_job_runs_total{exported_job="order-lifecycle"}',
      // The pool exists on PostgreSQL only (docs/metrics.md).
      ...(DIALECT === 'postgres' ? ['fromagerie_db_pool_waiting', 'fromagerie_db_pool_max_connections'] : []),
    ];
    await expect
      .poll(
        async () => {
          const missing = [];
          for (const name of names) if ((await get<{ result: unknown[] }>(`query?query=${encodeURIComponent(name)}`)).result.length === 0) missing.push(name);
          return missing;
        },
        { timeout: 20_000, interval: 200 },
      )
      .toEqual([]);
  });

  it('evaluates every rule of deploy/alerts.yml over them: healthy, and none firing while the instance is well', async () => {
    const alertNames = (parse(read('deploy/alerts.yml')) as { groups: { rules: { alert: string }[] }[] }).groups.flatMap((g) => g.rules.map((r) => r.alert));
    await expect
      .poll(async () => (await rules()).filter((rule) => rule.health === 'ok' && !rule.lastEvaluation.startsWith('0001-')).map((rule) => rule.name), { timeout: 20_000, interval: 200 })
      .toEqual(alertNames);
    for (const rule of await rules()) expect(rule.lastError ?? '', rule.name).toBe('');
    expect((await get<{ alerts: Alert[] }>('alerts')).alerts).toEqual([]);
  });

  it('turns FromagerieInstanceDown pending once the instance is gone', async () => {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
    await expect
      .poll(async () => (await get<{ alerts: Alert[] }>('alerts')).alerts.map((alert) => [alert.labels.alertname, alert.labels.instance, alert.state]), { timeout: 20_000, interval: 200 })
      .toContainEqual(['FromagerieInstanceDown', `127.0.0.1:${metricsPort}`, 'pending']);
  });
});
