/**
 * The inventories docs/architecture.md prints, read from the code: the modules the app builds
 * (what each offers and takes), the tables and their owners, the jobs and workers, the file
 * roles in use and the ports between modules. scripts/architecture-docs.ts renders them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { SETTINGS } from '../src/config/variables.js';
import { runsBackgroundWork } from '../src/jobs.js';
import type { FeatureModule } from '../src/kernel/module.js';
import { tableOwners } from './table-owners.js';

export interface ModuleFacts {
  name: string;
  provides: string[];
  /** `module.offering` this module is given by the composition root. */
  takes: string[];
  routes: boolean;
  rootRoutes: boolean;
  stages: string[];
}

export interface JobFacts {
  name: string;
  module: string;
  /** Milliseconds between runs, or null for a worker (a loop woken by commits). */
  everyMs: number | null;
}

export interface Inventory {
  modules: ModuleFacts[];
  tables: { table: string; owner: string }[];
  jobs: JobFacts[];
  /** The `ROLE` values whose instances run the jobs and workers. */
  jobRoles: string[];
  suffixes: { suffix: string; files: number }[];
  ports: { port: string; declaredIn: string; module: string; usedBy: string[] }[];
  wires: Wire[];
}

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The text of the call's parentheses that starts at `open` (its `(`). */
function argumentsAt(source: string, open: number): string {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === '(') depth++;
    else if (source[i] === ')' && --depth === 0) return source.slice(open + 1, i);
  }
  throw new Error('src/modules.ts: unbalanced parentheses');
}

/** An object literal's entries as `[key, expression]` (`{ db, outbox: outbox.provides.outbox }`). */
function entriesOf(literal: string): [string, string][] {
  const body = literal.replace(/(^|\s)\/\/.*$/gm, '$1').trim().replace(/^\{/, '').replace(/\}$/, '');
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if ('([{'.includes(body[i]!)) depth++;
    else if (')]}'.includes(body[i]!)) depth--;
    else if (body[i] === ',' && depth === 0) {
      entries.push(body.slice(start, i));
      start = i + 1;
    }
  }
  entries.push(body.slice(start));
  return entries.map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const keyed = /^(\w+)\s*:\s*([\s\S]*)$/.exec(entry);
    return keyed ? [keyed[1]!, keyed[2]!] : [entry, entry];
  });
}

export interface Wire {
  /** The module given the offering, and under which option (or offering of its own) it takes it. */
  to: string;
  option: string;
  /** `module.offering`. */
  from: string;
}

/**
 * What the composition root hands each module: every `other.provides.x` named in an option of
 * its `create…Module({…})` call or its `module.wire({…})`, directly or through a holder bound later (`holder.port =
 * other.provides.x`), or passed to one of its own offerings once built
 * (`module.provides.f(other.provides.x)`).
 */
export function wiringOf(source: string, modules: readonly string[]): Wire[] {
  const known = new Set(modules);
  const holders = new Map<string, string>();
  for (const [, holder, field, module, key] of source.matchAll(/\b(\w+)\.(\w+)\s*=\s*(\w+)\.provides\.(\w+);/g)) {
    if (known.has(module!)) holders.set(`${holder}.${field}`, `${module}.${key}`);
  }
  const offerings = (text: string) => [
    ...[...text.matchAll(/\b(\w+)\.provides\.(\w+)/g)].filter(([, module]) => known.has(module!)).map(([, module, key]) => `${module}.${key}`),
    ...[...text.matchAll(/\b(\w+\.\w+)!?\./g)].flatMap(([, holder]) => (holders.has(holder!) ? [holders.get(holder!)!] : [])),
  ];
  const wires: Wire[] = [];
  for (const call of source.matchAll(/\bcreate(\w+)Module\(/g)) {
    // createOAuthModule builds `oauth`, createRequestLogModule `requestLog`.
    const to = modules.find((module) => module.toLowerCase() === call[1]!.toLowerCase()) ?? call[1]!;
    if (!known.has(to)) throw new Error(`src/modules.ts: create${call[1]}Module builds no module of Modules`);
    for (const [option, expression] of entriesOf(argumentsAt(source, call.index + call[0].length - 1))) {
      for (const from of new Set(offerings(expression))) if (!from.startsWith(`${to}.`)) wires.push({ to, option, from });
    }
  }
  // The second phase: `module.wire({ port: other.provides.x })`.
  for (const call of source.matchAll(/^\s*(\w+)\.wire\(/gm)) {
    const to = call[1]!;
    if (!known.has(to)) continue;
    for (const [option, expression] of entriesOf(argumentsAt(source, call.index + call[0].length - 1))) {
      for (const from of new Set(offerings(expression))) if (!from.startsWith(`${to}.`)) wires.push({ to, option, from });
    }
  }
  for (const [, to, own, argument] of source.matchAll(/^\s*(\w+)\.provides\.(\w+)\(([^;]*)\);/gm)) {
    if (known.has(to!)) for (const from of offerings(argument!)) wires.push({ to: to!, option: `provides.${own}(…)`, from });
  }
  return wires;
}

/** A file's role: `cheese.repository.ts` → `.repository.ts`; a plain `batch.ts` has none. */
export function suffixOf(file: string): string | null {
  const parts = path.basename(file).split('.');
  return parts.length >= 3 ? `.${parts.slice(-2).join('.')}` : null;
}

function suffixCounts(): { suffix: string; files: number }[] {
  const counts = new Map<string, number>();
  for (const file of sourceFiles(path.join(ROOT, 'src'))) {
    const suffix = suffixOf(file) ?? '';
    counts.set(suffix, (counts.get(suffix) ?? 0) + 1);
  }
  return [...counts].map(([suffix, files]) => ({ suffix, files })).sort((a, b) => b.files - a.files || a.suffix.localeCompare(b.suffix));
}

/** Interfaces one module declares for another: every export of a `*.ports.ts`, and every `…Port` interface. */
function portsBetweenModules(modules: readonly string[]): Inventory['ports'] {
  // A module's folder is its name in kebab case: `requestLog` lives in src/modules/request-log.
  const folder = (module: string) => module.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  const files = new Map(modules.map((module) => [module, sourceFiles(path.join(ROOT, 'src/modules', folder(module))).map((file) => ({ file, text: fs.readFileSync(file, 'utf8') }))]));
  const ports: Inventory['ports'] = [];
  for (const [module, sources] of files) {
    for (const { file, text } of sources) {
      for (const [, port] of text.matchAll(/^export interface (\w+)/gm)) {
        if (!file.endsWith('.ports.ts') && !port!.endsWith('Port')) continue;
        const named = new RegExp(`\\b${port}\\b`);
        const usedBy = modules.filter((other) => other !== module && files.get(other)!.some((source) => named.test(source.text)));
        ports.push({ port: port!, declaredIn: path.relative(ROOT, file), module, usedBy });
      }
    }
  }
  return ports.sort((a, b) => a.module.localeCompare(b.module) || a.port.localeCompare(b.port));
}

/** Builds the app as `npm start` would with the default settings (on a throw-away SQLite file) and reads its registries. */
export async function inventory(): Promise<Inventory> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-architecture-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: 'http://localhost:8080', LOG_LEVEL: 'silent', APP_SECRET: 'x'.repeat(32) });
    const app = await buildApp(config, { logger: false });
    try {
      const entries = Object.entries(app.modules) as [string, FeatureModule<object>][];
      const names = entries.map(([name]) => name);
      const wires = wiringOf(read('src/modules.ts'), names);
      const modules = entries.map(([name, module]): ModuleFacts => ({
        name,
        provides: Object.keys(module.provides),
        takes: [...new Set(wires.filter((wire) => wire.to === name).map((wire) => wire.from))].sort(),
        routes: module.routes !== undefined,
        rootRoutes: module.rootRoutes !== undefined,
        stages: (module.stages ?? []).map((stage) => `${stage.name} (${stage.at})`),
      }));
      const jobs = entries.flatMap(([name, module]): JobFacts[] => [
        ...module.jobs.map((job) => ({ name: job.name, module: name, everyMs: job.everyMs })),
        ...(module.workers ?? []).map((worker) => ({ name: worker.name, module: name, everyMs: null })),
      ]);
      const roles = (SETTINGS.role.schema as { enum: ('api' | 'worker' | 'all')[] }).enum;
      return {
        modules,
        tables: [...tableOwners(read('src/db/schema.ts'))].map(([table, owner]) => ({ table, owner })),
        jobs,
        jobRoles: roles.filter(runsBackgroundWork),
        suffixes: suffixCounts(),
        ports: portsBetweenModules(names),
        wires,
      };
    } finally {
      await app.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
