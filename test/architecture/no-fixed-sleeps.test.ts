import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Tests move time instead of waiting for it (docs/decisions/pending-i-clock.md): a test polls
 * for its condition or advances a ManualClock (src/kernel/clock.ts). A literal sleep of 500 ms
 * or more is allowed only where it waits on an outside process (a child process, a private
 * PostgreSQL, Redis or HAProxy), with `// outside process: <why>` on its line or the line above.
 * Nor does a test bound the time it measured ("took less than N ms"): it asserts behaviour, or
 * says why the duration is the behaviour (`// elapsed time is the behaviour: <why>`).
 * And src/ reads the time only through the clock (lint says so too; this states the rule).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const THIS_FILE = path.relative(ROOT, import.meta.filename);
/** setTimeout(resolve, 1_500), sleep(2000), delay(600), setTimeoutPromise(800): a fixed wait of a literal duration. */
const SLEEP = /\b(?:setTimeout\(\s*(?:r|resolve|res|done)\s*,|sleep\(|delay\(|wait\(|setTimeoutPromise\()\s*([0-9][0-9_]*)\s*\)/g;
/** The same waits whose duration is a sum or product of names (`sleep(TTL_MS + 100)`), resolved from the file's numeric constants. */
const SLEEP_EXPRESSION = /\b(?:setTimeout\(\s*(?:r|resolve|res|done)\s*,|sleep\(|delay\(|wait\(|setTimeoutPromise\()\s*([A-Za-z_][\w\s+\-*/.]*?)\s*\)/g;
const NUMERIC_CONSTANT = /\bconst\s+([A-Za-z_]\w*)\s*=\s*([0-9][0-9_]*(?:\.[0-9]+)?)\s*;/g;
const REASON = /\/\/ outside process: \S/;

/** The value of `expression` (names, numbers, + - * / and parentheses) with the file's numeric constants, or undefined. */
function durationOf(expression: string, constants: ReadonlyMap<string, number>): number | undefined {
  let unresolved = false;
  const arithmetic = expression.replace(/[A-Za-z_]\w*/g, (name) => {
    const value = constants.get(name);
    if (value === undefined) unresolved = true;
    return String(value);
  });
  if (unresolved || !/^[\d\s+\-*/.()]+$/.test(arithmetic)) return undefined;
  const value: unknown = new Function(`return (${arithmetic});`)();
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
/** `performance.now() - started`, `Date.now() - t0`: the time elapsed since a reading of the clock. */
const ELAPSED = /\b(?:performance\.now|Date\.now)\(\)\s*-\s*[\w(]/;
/** `name = performance.now()` (a reading) or `name = (Date.now() - t0) / 1000` (an elapsed time). */
const NAMED_TIME = /\b(\w+)\s*=\s*\(?\s*(?:performance\.now|Date\.now)\(\)\s*(-)?/g;
/** `expect(<subject>, message?).toBeLessThan(` and the three other bounds: group 1 is the subject. */
const BOUNDED = /\bexpect\((.*)\)\s*\.(?:not\.)?toBe(?:Less|Greater)Than(?:OrEqual)?\(/;
const ELAPSED_REASON = /\/\/ elapsed time is the behaviour: \S/;

/**
 * `file:line: text` of every assertion that bounds a time elapsed in the test ("took less than
 * N ms") without its reason: such a bound fails on a loaded machine, or proves nothing on an idle
 * one. Assert the behaviour instead (the answer, the order of events, a clock moved); where the
 * duration is the behaviour (a delay a server must wait out), say so on the line or the one above.
 */
export function unexplainedElapsedAssertions(source: string, file: string): string[] {
  const elapsedNames = new Set<string>();
  const readingNames = new Set<string>();
  for (const match of source.matchAll(NAMED_TIME)) (match[2] ? elapsedNames : readingNames).add(match[1]!);
  const lines = source.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const subject = BOUNDED.exec(line)?.[1];
    if (subject === undefined) return;
    const words = new Set(subject.match(/\w+/g));
    const elapsed =
      ELAPSED.test(subject) || [...elapsedNames].some((name) => words.has(name)) || [...readingNames].some((name) => new RegExp(`-\\s*${name}\\b`).test(subject));
    if (!elapsed || ELAPSED_REASON.test(line) || ELAPSED_REASON.test(lines[i - 1] ?? '')) return;
    found.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return found;
}

function filesUnder(dir: string, pattern: RegExp): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => pattern.test(file)).map((file) => path.join(dir, file));
}

/** `file:line: text` of every fixed sleep of `minMs` or more without its reason. */
export function unexplainedSleeps(source: string, file: string, minMs = 500): string[] {
  const constants = new Map([...source.matchAll(NUMERIC_CONSTANT)].map((m) => [m[1]!, Number(m[2]!.replaceAll('_', ''))] as const));
  const lines = source.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const durations = [...[...line.matchAll(SLEEP)].map((m) => Number(m[1]!.replaceAll('_', ''))), ...[...line.matchAll(SLEEP_EXPRESSION)].map((m) => durationOf(m[1]!, constants))];
    for (const ms of durations) {
      if (ms === undefined || ms < minMs) continue;
      if (REASON.test(line) || REASON.test(lines[i - 1] ?? '')) continue;
      found.push(`${file}:${i + 1}: ${line.trim()}`);
    }
  });
  return found;
}

describe('time in tests and in src/', () => {
  it('the scanner finds a bare fixed sleep and accepts one waiting on an outside process', () => {
    expect(unexplainedSleeps('  await new Promise((r) => setTimeout(r, 5100));', 'x.ts')).toHaveLength(1);
    expect(unexplainedSleeps('  await sleep(1_200);', 'x.ts')).toHaveLength(1);
    expect(unexplainedSleeps('  await sleep(499);', 'x.ts')).toHaveLength(0);
    expect(unexplainedSleeps('  // outside process: PostgreSQL restarts\n  await sleep(1500);', 'x.ts')).toHaveLength(0);
    // A duration named by the file's constants counts as its value.
    expect(unexplainedSleeps('const TTL_MS = 400;\n  await sleep(TTL_MS + 100);', 'x.ts')).toHaveLength(1);
    expect(unexplainedSleeps('const LEASE_MS = 1_500;\n  await new Promise((r) => setTimeout(r, LEASE_MS * 2));', 'x.ts')).toHaveLength(1);
    expect(unexplainedSleeps('const TICKS = 15;\nconst WATCH_MS = 10;\n  await sleep(TICKS * WATCH_MS);', 'x.ts')).toHaveLength(0);
    expect(unexplainedSleeps('  await sleep(ms);', 'x.ts')).toHaveLength(0);
  });

  it('no test sleeps 500 ms or more but on an outside process, with its reason', () => {
    const found = filesUnder(path.join(ROOT, 'test'), /\.ts$/)
      .filter((file) => path.relative(ROOT, file) !== THIS_FILE)
      .flatMap((file) => unexplainedSleeps(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file)));
    expect(found).toEqual([]);
  });

  it('the elapsed-time scanner finds a bound on a time measured in the test, and accepts one with its reason', () => {
    const found = (source: string) => unexplainedElapsedAssertions(source, 'x.ts');
    expect(found('    expect(performance.now() - started).toBeLessThan(3000);')).toHaveLength(1);
    expect(found('    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2500);')).toHaveLength(1);
    expect(found('  const freeAfter = Date.now() - diedAt;\n  expect(freeAfter).toBeLessThan(6500);')).toHaveLength(1);
    expect(found('  const seconds = (performance.now() - began) / 1000;\n  expect(seconds, why).toBeLessThan(4);')).toHaveLength(1);
    expect(found('  const started = Date.now();\n  expect(quick!.at - started).toBeLessThan(1500);')).toHaveLength(1);
    // Not elapsed times: a deadline in the future, a count, a time stored by the app.
    expect(found('  expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3_600_000);')).toHaveLength(0);
    expect(found('  const started = Date.now();\n  expect(replacedAt).toBeLessThanOrEqual(started + HOUR);')).toHaveLength(0);
    expect(found('  expect(notifications).toBeLessThan(50);')).toHaveLength(0);
    expect(found('  // elapsed time is the behaviour: the drain delay\n  expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2500);')).toHaveLength(0);
  });

  it('no test bounds an elapsed time but with its reason (bench/ measures, and is not under test/)', () => {
    const found = filesUnder(path.join(ROOT, 'test'), /\.ts$/)
      .filter((file) => path.relative(ROOT, file) !== THIS_FILE)
      .flatMap((file) => unexplainedElapsedAssertions(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file)));
    expect(found).toEqual([]);
  });

  it('src/ reads the time only through the clock (src/kernel/clock.ts)', () => {
    const found = filesUnder(path.join(ROOT, 'src'), /\.ts$/)
      .filter((file) => path.relative(ROOT, file) !== path.join('src', 'kernel', 'clock.ts'))
      .flatMap((file) =>
        fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, i) => (/\bDate\.now\(\)|\bnew Date\(\)/.test(line) ? [`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });
});
