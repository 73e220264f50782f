#!/usr/bin/env node
// Operator CLI entry point. Runs the compiled CLI (dist/cli/main.js, from `npm run build`) with
// plain Node when that build is current: src/ is absent (a production image) or no file in it
// changed since the build started. Otherwise it runs the TypeScript CLI through tsx's loader,
// so a checkout needs no build step and a stale dist/ never runs in place of edited sources.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const compiled = new URL('dist/cli/main.js', root);

/** The newest modification time (ms) under a directory, or 0 when it does not exist. */
function newestUnder(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs);
  }
  return newest;
}

function buildIsCurrent() {
  if (!existsSync(compiled)) return false;
  let startedAt = 0;
  try {
    startedAt = JSON.parse(readFileSync(new URL('dist/build.json', root), 'utf8')).startedAt;
  } catch {
    return false;
  }
  return newestUnder(new URL('src/', root)) <= startedAt;
}

if (buildIsCurrent()) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
