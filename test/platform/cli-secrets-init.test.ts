import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { runCli } from '../helpers/server.js';

/**
 * `fromagerie secrets init` (issue 32 §2): the deployment's secrets file, written once with
 * mode 0600 and never overwritten, holds values the production configuration accepts; the
 * README's commands can run twice without changing a secret.
 */
let dir: string;
let file: string;
const env = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: dir });
const parse = (text: string) => Object.fromEntries(text.split('\n').filter((line) => /^[A-Z_]+=/.test(line)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-init-'));
  file = path.join(dir, 'deploy', 'secrets.env');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('fromagerie secrets init', () => {
  it('writes APP_SECRET, ADMIN_PASSWORD and POSTGRES_PASSWORD once, mode 0600, printing no secret', async () => {
    const first = await runCli(env(), ['secrets', 'init', '--file', file]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${file} (mode 0600)`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const secrets = parse(fs.readFileSync(file, 'utf8'));
    expect(Object.keys(secrets).sort()).toEqual(['ADMIN_PASSWORD', 'APP_SECRET', 'POSTGRES_PASSWORD']);
    for (const value of Object.values(secrets)) expect(first.stdout).not.toContain(value);
    // What the instances will be given passes the production configuration's rules.
    const config = loadConfig({ CHEESE_ENV: 'production', DATA_DIR: dir, APP_SECRET: secrets.APP_SECRET, ADMIN_PASSWORD: secrets.ADMIN_PASSWORD });
    expect(config.appSecret).toBe(secrets.APP_SECRET);
  });

  it('keeps the file unchanged when run again, and refuses to trust one others can read', async () => {
    const before = fs.readFileSync(file, 'utf8');
    const again = await runCli(env(), ['secrets', 'init', '--file', file]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${file} exists: kept unchanged`);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    fs.chmodSync(file, 0o644);
    const loose = await runCli(env(), ['secrets', 'init', '--file', file]);
    expect(loose.code).toBe(1);
    expect(loose.stderr).toContain('readable by others (mode 0644)');
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });

  it('makes different secrets for different files', async () => {
    const other = path.join(dir, 'other.env');
    expect((await runCli(env(), ['secrets', 'init', '--file', other])).code).toBe(0);
    expect(parse(fs.readFileSync(other, 'utf8')).APP_SECRET).not.toBe(parse(fs.readFileSync(file, 'utf8')).APP_SECRET);
  });
});
