import fs from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * `npm install` on every Node.js version package.json's `engines` promises installs without an
 * EBADENGINE warning (issue 32 §7: cookie@2 wanted Node 22 while we promised 20.19): every
 * package the lockfile installs accepts every version our range accepts.
 */
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }> };

describe('engines', () => {
  it('every installed package accepts the first release of each Node.js line package.json promises, and this one', () => {
    const ours = new semver.Range(pkg.engines.node);
    // The first version of each line we promise (20.19.0, 22.16.0, 24.0.0), and the Node.js running the test.
    const versions = [...ours.set.map((comparators) => semver.minVersion(new semver.Range(comparators.map(String).join(' ')))!.version), process.versions.node];
    expect(versions.every((version) => ours.test(version)), versions.join(', ')).toBe(true);
    const refusing = Object.entries(lock.packages).flatMap(([name, entry]) => {
      const wanted = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      if (!wanted) return [];
      return versions.filter((version) => !semver.satisfies(version, wanted)).map((version) => `${name.replace(/^.*node_modules\//, '')} wants node ${wanted}, not ${version}`);
    });
    expect(refusing, `our engines.node is ${pkg.engines.node}`).toEqual([]);
  });
});
