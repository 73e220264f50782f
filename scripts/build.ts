/**
 * Production build: `npm run build` compiles src/ to dist/ with tsconfig.build.json (plain tsc,
 * no bundler; the SDK of packages/sdk first, which the developer CLI imports), then copies every file under src/ that is not TypeScript (the dashboard's and the
 * OAuth pages' views and assets, read at run time relative to their module) next to its compiled
 * module, and writes build.json (when the build started). `npm run build -- --out-dir <dir>` builds elsewhere: the directory must sit directly
 * in the project root (as dist/ does), because compiled modules reach ../package.json and the
 * catalogue seeder reaches seed/ by relative paths.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');

function outDirArgument(argv: string[]): string {
  const at = argv.indexOf('--out-dir');
  if (at === -1) return path.join(root, 'dist');
  const value = argv[at + 1];
  if (!value) throw new Error('--out-dir needs a directory');
  const dir = path.resolve(root, value);
  if (path.dirname(dir) !== root) throw new Error(`--out-dir must be a directory directly in ${root} (compiled code reaches ../package.json and ../seed)`);
  return dir;
}

/** Every non-TypeScript file under `dir`, relative to src/. */
function assets(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return assets(full);
    return entry.name.endsWith('.ts') ? [] : [path.relative(src, full)];
  });
}

const outDir = outDirArgument(process.argv.slice(2));
const started = Date.now();
rmSync(outDir, { recursive: true, force: true });
// The developer CLI imports @fromagerie/sdk, which resolves to the package's dist/: built first,
// in place (not emptied first, so a build beside another, the SDK's own `npm pack` in a test,
// never finds it missing).
const sdk = path.join(root, 'packages/sdk');
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(sdk, 'tsconfig.build.json')], { stdio: 'inherit', cwd: sdk });
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit', cwd: root });
const copied = assets(src);
for (const file of copied) {
  mkdirSync(path.dirname(path.join(outDir, file)), { recursive: true });
  cpSync(path.join(src, file), path.join(outDir, file));
}
// bin/fromagerie.js runs dist/ only while no file under src/ is newer than this build's start.
writeFileSync(path.join(outDir, 'build.json'), `${JSON.stringify({ startedAt: started })}\n`);
console.log(`built ${path.relative(root, outDir)}/ in ${((Date.now() - started) / 1000).toFixed(1)} s (${copied.length} non-TypeScript files copied)`);
