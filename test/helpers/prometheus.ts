import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** Debian's `prometheus` package (promtool and the server), as .ci/run installs it. */
export const ROOT = path.resolve(import.meta.dirname, '../..');
export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = 'promtool';
export const run = promisify(execFile);
export const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Whether `binary --version` runs; when it does not, REQUIRE_PROMETHEUS=1 (.ci/run) makes that a failure. */
export async function prometheusInstalled(binary: string, file: string): Promise<boolean> {
  const installed = await run(binary, ['--version']).then(
    () => true,
    () => false,
  );
  if (installed) return true;
  if (process.env.REQUIRE_PROMETHEUS === '1') throw new Error(`REQUIRE_PROMETHEUS=1 but ${binary} is not installed (apt-get install prometheus)`);
  console.error(`${file}: ${binary} is not installed: skipping (REQUIRE_PROMETHEUS=1 makes this a failure)`);
  return false;
}

const PREFIXES = /^(fromagerie|nodejs|process)_/;

/**
 * The metric names docs/metrics.md documents (backticked), with its shorthand expanded:
 * `nodejs_eventloop_delay_p50_seconds`, `_p99_seconds` is also `nodejs_eventloop_delay_p99_seconds`.
 */
export function documentedMetrics(): Set<string> {
  const names = new Set<string>(['up']);
  for (const line of read('docs/metrics.md').split('\n')) {
    let last: string | undefined;
    for (const [, token] of line.matchAll(/`([a-z_:][a-z0-9_:]*)`/g)) {
      if (PREFIXES.test(token!)) {
        names.add(token!);
        last = token;
      } else if (token!.startsWith('_') && last) {
        const segments = token!.split('_').length - 1;
        names.add(last.split('_').slice(0, -segments).join('_') + token);
      }
    }
  }
  return names;
}

/** The metric names a PromQL expression reads; a histogram's _bucket, _count and _sum are its own name. */
export function metricsOf(expr: string, documented: Set<string>): string[] {
  const found = [...expr.matchAll(/\b(?:up|(?:fromagerie|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[0]);
  return [...new Set(found.map((name) => (documented.has(name) ? name : name.replace(/_(bucket|count|sum)$/, ''))))];
}
