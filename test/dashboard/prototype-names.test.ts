import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * A name a request (or the command line) supplies is looked up among a table's own entries,
 * never among what every object inherits: `constructor`, `__proto__`, `toString`… are names
 * like any other unknown one (404, ignored, "unknown command"), never a 500 nor a stack.
 */
let t: TestApp;
const logLines: string[] = [];
beforeAll(async () => {
  t = await createTestApp({ logLines });
});
afterAll(async () => t?.close());

const INHERITED = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'];

describe('dashboard assets', () => {
  it('answers 404 for every name an object inherits, signed out, with nothing logged as an error', async () => {
    for (const name of INHERITED) {
      const res = await fetch(`${t.http.baseUrl}/dashboard/assets/${name}`);
      expect(res.status, name).toBe(404);
      expect(await res.text(), name).toContain('There is no such file.');
    }
    expect(logLines.filter((line) => /"level":50|dashboard page failed|"stack"/.test(line))).toEqual([]);
  });

  it('still serves the real assets', async () => {
    const res = await fetch(`${t.http.baseUrl}/dashboard/assets/dashboard.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/css/);
  });
});

/** A raw request (fetch merges repeated headers; this sends each line as given). */
function rawGet(path: string, headers: Record<string, string | string[]>): Promise<{ status: number; body: string }> {
  const url = new URL(path, t.http.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('request header and query names', () => {
  it('treats a repeated header named like an inherited property as any other header', async () => {
    for (const name of ['constructor', 'toString', '__proto__', 'valueOf']) {
      const res = await rawGet('/v2/health', { [name]: ['a', 'b'] });
      expect(res.status, `${name}: ${res.body}`).toBe(200);
    }
  });

  it('ignores a repeated query parameter named like an inherited property on a page (not "given more than once")', async () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const res = await fetch(`${t.http.baseUrl}/dashboard/login?${name}=a&${name}=b`);
      expect(res.status, name).toBe(200);
    }
  });
});

describe('OAuth form parameter names', () => {
  it('counts __proto__ sent twice to the token endpoint as a repeated parameter, as any other name', async () => {
    const res = await fetch(`${t.http.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&__proto__=a&__proto__=b',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error_description: string }).error_description).toContain('__proto__');
  });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/fromagerie.js', ...args], { env: { ...process.env, NODE_ENV: 'test' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end('');
  });
}

describe('CLI command names', () => {
  it('refuses a command named like an inherited property as unknown: one line, exit 1, no stack', { timeout: 120_000 }, async () => {
    const outcomes = await Promise.all(['constructor', 'toString', '__proto__'].map((name) => cli([name])));
    for (const [i, outcome] of outcomes.entries()) {
      const name = ['constructor', 'toString', '__proto__'][i]!;
      expect(outcome.code, name).toBe(1);
      expect(outcome.stderr.split('\n')[0], name).toBe(`unknown command "${name}"`);
      expect(outcome.stderr, name).not.toMatch(/\n\s+at /);
    }
  });

  it('answers help for such a name with the general usage, not "undefined"', { timeout: 60_000 }, async () => {
    const outcome = await cli(['constructor', '--help']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).not.toContain('undefined');
    expect(outcome.stdout).toContain('Commands:');
  });
});
