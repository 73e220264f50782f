import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { variablesOf } from '../../src/config/variable.js';
import { SETTINGS } from '../../src/config/variables.js';
import { envExample } from '../../scripts/config-docs.js';

describe('.env.example', () => {
  const text = fs.readFileSync(path.resolve('.env.example'), 'utf8');

  it('is the one the declarations make (`npm run config-docs` rewrites it), every variable once, in the README\'s order', () => {
    expect(text).toBe(envExample());
    const named = [...text.matchAll(/^(?:# )?([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]);
    expect(named).toEqual(variablesOf(SETTINGS).map((v) => v.name));
  });

  it('as written, is a valid configuration that changes nothing: each value set is the default', () => {
    const set = Object.fromEntries([...text.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((match) => [match[1]!, match[2]!]));
    expect(set).toMatchObject({ PORT: '8080', CHEESE_ENV: 'development', RATE_LIMIT_FREE_BURST: '10' });
    // Computed or empty defaults are commented out.
    expect(text).toMatch(/^# RATE_LIMIT_MULTIPLIER=$/m);
    expect(text).toMatch(/^# APP_SECRET=$/m);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'env-example-'));
    try {
      const fixed = { DATA_DIR: dataDir, APP_SECRET: 'env-example-test-secret-0123456789abcdef' };
      expect(loadConfig({ ...set, ...fixed })).toEqual(loadConfig(fixed));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
