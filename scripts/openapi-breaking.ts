/**
 * Fails when docs/openapi.json breaks a client of the last released document
 * (docs/openapi/released/<version>.json, the highest version there) and `info.version`'s
 * major part did not move. The rules: docs/openapi/breaking-changes.md.
 *
 *   npm run -s openapi:breaking                      # CI
 *   npm run -s openapi:breaking -- --base a.json --target b.json
 */
import fs from 'node:fs';
import path from 'node:path';
import { judge } from './openapi-breaking/document-diff.js';

const RELEASED = path.resolve('docs/openapi/released');

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function latestReleased(): string {
  const versions = fs.readdirSync(RELEASED).filter((f) => /^\d+\.\d+\.\d+\.json$/.test(f)).map((f) => f.slice(0, -'.json'.length));
  if (versions.length === 0) throw new Error(`no released document in ${RELEASED}`);
  const parts = (v: string) => v.split('.').map(Number);
  versions.sort((a, b) => {
    const [x, y] = [parts(a), parts(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
  return path.join(RELEASED, `${versions.at(-1)!}.json`);
}

const base = option('--base') ?? latestReleased();
const target = option('--target') ?? path.resolve('docs/openapi.json');
const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
const released = read(base);
const current = read(target);
const verdict = judge(released, current);
const versionOf = (document: Record<string, unknown>) => String((document.info as { version?: unknown } | undefined)?.version);

const label = `${path.relative(process.cwd(), target)} (${versionOf(current)}) against ${path.relative(process.cwd(), base)} (${versionOf(released)})`;
for (const change of verdict.changes) console.log(`${change.breaking ? 'BREAKING' : 'note    '} ${change.rule}: ${change.where}: ${change.message}`);
if (verdict.ok) {
  const why = verdict.breaking.length > 0 ? `: ${verdict.breaking.length} breaking change(s), allowed by the new major version` : ': no breaking change';
  console.log(`${label}${why}`);
} else {
  console.error(`${label}: ${verdict.breaking.length} breaking change(s). Keep the old behaviour beside the new (a new field, parameter or operation), or release a new major version (info.version).`);
  process.exit(1);
}
