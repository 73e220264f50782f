import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Tests move time instead of waiting for it (docs/decisions/pending-i-clock.md): a test polls
 * for its condition or advances a ManualClock (src/kernel/clock.ts). A literal sleep of 500 ms
 * or more is allowed only where it waits on an outside process (a child process, a private
 * PostgreSQL, Redis or HAProxy), with `// outside process: <why>` on its line or the line above.
 * And src/ reads the time only through the clock (lint says so too; this states the rule).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const THIS_FILE = path.relative(ROOT, import.meta.filename);
/** setTimeout(resolve, 1_500), sleep(2000), delay(600), setTimeoutPromise(800): a fixed wait of a literal duration. */
const SLEEP = /\b(?:setTimeout\(\s*(?:r|resolve|res|done)\s*,|sleep\(|delay\(|wait\(|setTimeoutPromise\()\s*([0-9][0-9_]*)\s*\)/g;
const REASON = /\/\/ outside process: \S/;
function filesUnder(dir: string, pattern: RegExp): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => pattern.test(file)).map((file) => path.join(dir, file));
}

/** `file:line: text` of every fixed sleep of `minMs` or more without its reason. */
export function unexplainedSleeps(source: string, file: string, minMs = 500): string[] {
  const lines = source.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    for (const match of line.matchAll(SLEEP)) {
      if (Number(match[1]!.replaceAll('_', '')) < minMs) continue;
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
  });

  it('no test sleeps 500 ms or more but on an outside process, with its reason', () => {
    const found = filesUnder(path.join(ROOT, 'test'), /\.ts$/)
      .filter((file) => path.relative(ROOT, file) !== THIS_FILE)
      .flatMap((file) => unexplainedSleeps(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file)));
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
