import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { variablesOf, type Settings, type Variable } from '../../src/config/variable.js';
import { SETTINGS } from '../../src/config/variables.js';
import { BEGIN, END, withTable } from '../../scripts/config-docs.js';

const variables = variablesOf(SETTINGS);

describe('environment variables, declared once', () => {
  it('the README table is the one the declarations make (names, defaults, meanings): `npm run config-docs` rewrites it', () => {
    const readme = fs.readFileSync(path.resolve('README.md'), 'utf8');
    expect(withTable(readme)).toBe(readme);
    const table = readme.slice(readme.indexOf(BEGIN), readme.indexOf(END));
    const documented = [...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1]);
    expect(documented).toEqual(variables.map((v) => v.name));
  });

  it('names each variable once, documents it, and every written default passes its own rule', () => {
    expect(new Set(variables.map((v) => v.name)).size).toBe(variables.length);
    for (const v of variables) {
      expect(v.doc, v.name).not.toBe('');
      const written = /^`([^`]*)`$/.exec(v.defaultText)?.[1];
      if (written !== undefined) expect(Compile(v.schema).Check(written), `${v.name}=${written}`).toBe(true);
    }
  });

  it('HEAP_GROWING_PERCENT: a whole percentage, 50 by default, 0 for V8\'s own rule; anything else is refused by name', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-docs-'));
    try {
      expect(() => loadConfig({ DATA_DIR: dataDir, HEAP_GROWING_PERCENT: '-5' })).toThrow(/HEAP_GROWING_PERCENT: must match/);
      expect(() => loadConfig({ DATA_DIR: dataDir, HEAP_GROWING_PERCENT: '1e3' })).toThrow(/HEAP_GROWING_PERCENT: must match/);
      // Refused by its pattern, as by a rule: nothing is made, not the app secret's file either.
      expect(fs.existsSync(path.join(dataDir, '.app-secret'))).toBe(false);
      expect(loadConfig({ DATA_DIR: dataDir, HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
      expect(loadConfig({ DATA_DIR: dataDir }).heapGrowingPercent).toBe(50);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses before making any default, so a refused configuration writes no app secret', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-docs-'));
    try {
      expect(() => loadConfig({ DATA_DIR: dataDir, WEBHOOK_RETRY_SCHEDULE_S: '0,60,30' })).toThrow(new ConfigError('invalid configuration: WEBHOOK_RETRY_SCHEDULE_S must not decrease (0,60,30)'));
      expect(() => loadConfig({ DATA_DIR: dataDir, REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' })).toThrow(/HEADERS_TIMEOUT_MS \(6000\) must not exceed REQUEST_TIMEOUT_MS \(5000\)/);
      expect(fs.existsSync(path.join(dataDir, '.app-secret'))).toBe(false);
      expect(loadConfig({ DATA_DIR: dataDir }).appSecret).toBe(fs.readFileSync(path.join(dataDir, '.app-secret'), 'utf8'));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('names every variable to fix at once: missing, malformed and refused', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-docs-'));
    try {
      expect(() => loadConfig({ DATA_DIR: dataDir, CHEESE_ENV: 'production' })).toThrow(
        new ConfigError('invalid configuration: ADMIN_PASSWORD must be set when CHEESE_ENV=production; APP_SECRET (32+ characters) must be set when CHEESE_ENV=production'),
      );
      const refused = (() => {
        try {
          loadConfig({ DATA_DIR: dataDir, CHEESE_ENV: 'production', APP_SECRET: 'short', RATE_LIMIT_MULTIPLIER: '5' });
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(refused).toMatch(/^invalid configuration: APP_SECRET: .*32 characters/);
      expect(refused).toContain('ADMIN_PASSWORD must be set when CHEESE_ENV=production');
      expect(refused).toContain('RATE_LIMIT_MULTIPLIER must be 1 in production');
      expect(refused).not.toContain('APP_SECRET (32+ characters) must be set');
      expect(fs.existsSync(path.join(dataDir, '.app-secret'))).toBe(false);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('computes the defaults the README quotes', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-docs-'));
    try {
      const values = new Map<Variable<unknown>, unknown>();
      const walk = (settings: Settings, config: Record<string, unknown>) => {
        for (const [key, node] of Object.entries(settings)) {
          if (typeof node.parse === 'function') values.set(node as Variable<unknown>, config[key]);
          else walk(node as Settings, config[key] as Record<string, unknown>);
        }
      };
      walk(SETTINGS, loadConfig({ DATA_DIR: dataDir }) as unknown as Record<string, unknown>);
      for (const v of variables) {
        // `16` (a quarter of …): the figure a computed default comes to with everything else unset.
        const quoted = /^`([0-9]+)`/.exec(v.defaultText)?.[1];
        if (quoted !== undefined) expect(values.get(v), v.name).toEqual(v.parse(quoted));
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('derives the defaults that depend on other variables', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-docs-'));
    try {
      const config = loadConfig({ DATA_DIR: dataDir, HOST: '0.0.0.0', PORT: '9000', REQUEST_TIMEOUT_MS: '4000', WEBHOOK_CONCURRENCY: '10', CORS_ORIGINS: ' https://a.example , https://b.example ' });
      expect(config).toMatchObject({ publicUrl: 'http://localhost:9000', headersTimeoutMs: 4000, corsOrigins: ['https://a.example', 'https://b.example'] });
      expect(config.webhooks).toMatchObject({ concurrency: 10, accountConcurrency: 3 });
      expect(config.databaseUrl).toBeUndefined();
      expect(config.rateLimits.enabled).toBe(true);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
