import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inventory, suffixOf, wiringOf } from '../../scripts/architecture-inventory.js';
import { sections, withSections } from '../../scripts/architecture-docs.js';

/** docs/architecture.md's inventories are the code's (CI runs `npm run architecture-docs -- --check` too). */
describe('docs/architecture.md', () => {
  it('prints the modules, tables, jobs, file roles and ports the code has: `npm run architecture-docs` rewrites them', async () => {
    const facts = await inventory();
    const page = fs.readFileSync(path.resolve('docs/architecture.md'), 'utf8');
    expect(withSections(page, sections(facts))).toBe(page);
    expect(facts.tables.find((t) => t.table === 'browser_sessions')?.owner).toBe('identity');
    expect(facts.jobs.map((j) => j.name)).toContain('browser-session-pruning');
    expect(facts.jobRoles).toEqual(['worker', 'all']);
  }, 60_000);

  it('reads a file\'s role from its name', () => {
    expect(suffixOf('src/modules/idempotency/idempotency.leases.ts')).toBe('.leases.ts');
    expect(suffixOf('src/modules/webhooks/batch.ts')).toBeNull();
  });

  it('follows the composition root\'s wiring, through late-bound holders and after-build calls', () => {
    const source = [
      'const a = createAlphaModule({ db, port: { f: (x) => holder.port!.f(x) } });',
      'const b = createBetaModule({ alpha: a.provides.x, // a comment, with a comma',
      '  both: { y: a.provides.y } });',
      'holder.port = b.provides.p;',
      'a.provides.listen(b.provides.q);',
    ].join('\n');
    expect(wiringOf(source, ['alpha', 'beta', 'a', 'b']).map((w) => `${w.to}.${w.option} ← ${w.from}`)).toEqual([
      'alpha.port ← b.p',
      'beta.alpha ← a.x',
      'beta.both ← a.y',
      'a.provides.listen(…) ← b.q',
    ]);
  });
});
