import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Tracing off costs nothing at start (docs/operations.md, "Traces"): OpenTelemetry is imported
 * by src/kernel/opentelemetry.ts alone, and that file is loaded only by the dynamic import in
 * src/kernel/start-tracing.ts's startTracing, never statically (test/platform/tracing-process.test.ts
 * checks the running process).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const OTEL_FILE = 'src/kernel/opentelemetry.ts';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs|cjs)$/.test(entry.name) ? [path.relative(ROOT, full)] : [];
  });
}

const files = sourceFiles(path.join(ROOT, 'src')).map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), 'utf8') }));

describe('OpenTelemetry stays behind the tracing port', () => {
  it('is imported by src/kernel/opentelemetry.ts only', () => {
    const importers = files.filter(({ text }) => /['"]@opentelemetry\//.test(text)).map(({ file }) => file);
    expect(importers).toEqual([OTEL_FILE]);
  });

  it('whose file is never imported statically, and dynamically by src/kernel/start-tracing.ts only', () => {
    const statically = files.filter(({ text }) => /(?:^|\n)\s*(?:import|export)\b[^;(]*?from\s*['"][^'"]*\/opentelemetry(?:\.js)?['"]/.test(text)).map(({ file }) => file);
    expect(statically).toEqual([]);
    const dynamically = files.filter(({ text }) => /import\(\s*['"][^'"]*\/opentelemetry(?:\.js)?['"]\s*\)/.test(text)).map(({ file }) => file);
    expect(dynamically).toEqual(['src/kernel/start-tracing.ts']);
  });
});
