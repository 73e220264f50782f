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

/** A resolve hook that adds the `@fromagerie/source` export condition (as `--conditions` would). */
const SOURCE_CONDITION_HOOK = `export async function resolve(specifier, context, next) {
  return next(specifier, { ...context, conditions: [...context.conditions, '@fromagerie/source'] });
}`;

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
  // The SDK (packages/sdk, which the developer commands use) from its TypeScript sources, as the
  // checkout has them: its package points at dist/ by default, built only by `npm run build`.
  const { register: registerHooks } = await import('node:module');
  registerHooks(`data:text/javascript,${encodeURIComponent(SOURCE_CONDITION_HOOK)}`);
  await import('../src/cli/main.ts');
}
