import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks } from '../../scripts/doc-links.js';

/** The Markdown's relative links resolve (CI runs `npm run docs:links` too); the checker finds what is broken. */
describe('Markdown links', () => {
  it('finds a missing file and a missing heading, and ignores links in code', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-links-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.md'), '# A\n\n## Brute force: logins, sign-ups\n\n[x](b.md#nope) [y](#brute-force-logins-sign-ups) [z](missing.md) `[q](no.md)`\n\n```\n[r](none.md)\n```\n');
      fs.writeFileSync(path.join(dir, 'b.md'), '# B\n');
      expect(brokenLinks([path.join(dir, 'a.md')]).map((line) => line.replace(/^.*a\.md:\d+: /, ''))).toEqual(['b.md#nope (no such heading)', 'missing.md (no such file)']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes GitHub\'s anchors, repeats numbered', () => {
    expect([...anchorsOf('## Who owns a table, and how that is checked\n## Data ownership: no module queries another module\'s tables\n## A\n## A\n')]).toEqual([
      'who-owns-a-table-and-how-that-is-checked',
      'data-ownership-no-module-queries-another-modules-tables',
      'a',
      'a-1',
    ]);
  });
});
