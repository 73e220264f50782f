import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROCESS } from '../../vitest.config.js';

/**
 * Tests in tiers (issue 29 §2): `npm run test:fast` runs the unit and http tiers, so a file that
 * starts a process (the CLI, a server, a browser, a private PostgreSQL/Redis/HAProxy) must be
 * listed in PROCESS in vitest.config.ts. This test reads every test file and the test helpers it
 * imports (transitively) and names the ones that start processes outside that list.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const TEST = path.join(ROOT, 'test');

/** What starts a process: child_process and execa (servers, the CLI, private services), a browser. */
const STARTS_PROCESS = [/from\s+['"](?:node:)?child_process['"]/, /from\s+['"]execa['"]/, /require\(\s*['"](?:node:)?child_process['"]\s*\)/, /\bchromium\b/i, /\bpuppeteer\b|\bplaywright\b/];
const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The file itself and the files under test/ it imports, transitively (src/ is the code under test: it starts what the app starts). */
function localClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file) || !file.startsWith(TEST) || !fs.existsSync(file)) return seen;
  seen.add(file);
  for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)) {
    localClosure(path.resolve(path.dirname(file), specifier!.replace(/\.js$/, '.ts')), seen);
  }
  return seen;
}

/** Why `file` counts as a process test: the first file of its closure that starts one, or undefined. */
function startsProcess(file: string): string | undefined {
  for (const dependency of localClosure(file)) {
    const source = fs.readFileSync(dependency, 'utf8');
    const pattern = STARTS_PROCESS.find((p) => p.test(source));
    if (pattern) return `${path.relative(ROOT, dependency)} matches ${pattern}`;
  }
  return undefined;
}

function listed(file: string, patterns: readonly string[]): boolean {
  const relative = path.relative(ROOT, file);
  return patterns.some((pattern) => globMatch(relative, pattern));
}

/** `*` within a segment, `**` across segments, as vitest reads PROCESS (path.matchesGlob is experimental on Node 20). */
function globMatch(file: string, pattern: string): boolean {
  const regex = pattern
    .split(/(\*\*\/|\*)/)
    .map((part) => (part === '**/' ? '(?:.*/)?' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${regex}$`).test(file);
}

describe('test tiers', () => {
  const files = testFiles(TEST);

  it('recognises a process test by what it or its helpers import', () => {
    expect(startsProcess(path.join(TEST, 'platform/build.test.ts'))).toBeDefined();
    // Through a helper: test/helpers/server.ts starts the server.
    expect(startsProcess(path.join(TEST, 'health/drain.test.ts'))).toMatch(/helpers\/server\.ts|child_process/);
    expect(startsProcess(path.join(TEST, 'orders/order-input.test.ts'))).toBeUndefined();
    expect(listed(path.join(TEST, 'platform/cli-admin.test.ts'), ['test/platform/cli-*.test.ts'])).toBe(true);
    expect(listed(path.join(TEST, 'platform/build.test.ts'), ['test/platform/cli-*.test.ts'])).toBe(false);
  });

  it('lists in PROCESS every test file that starts a process, so test:fast starts none', () => {
    const misfiled = files.filter((file) => !listed(file, PROCESS)).flatMap((file) => {
      const why = startsProcess(file);
      return why ? [`${path.relative(ROOT, file)} (${why})`] : [];
    });
    expect(misfiled).toEqual([]);
  });

  it('lists in PROCESS only files that exist', () => {
    const unmatched = PROCESS.filter((pattern) => !files.some((file) => listed(file, [pattern])));
    expect(unmatched).toEqual([]);
  });
});
