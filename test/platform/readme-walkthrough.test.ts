import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/oauth.js';

/**
 * README's customer and OAuth walk-throughs, run literally in bash against a running app
 * (only the address changed), so "copy-paste runnable" stays true.
 */
const run = promisify(execFile);
let t: TestApp;
let key: string;

function blockAfter(heading: string, language = 'sh'): string {
  const text = fs.readFileSync('README.md', 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(start));
  if (start < 0 || !match) throw new Error(`README.md has no sh block under "${heading}"`);
  return match[1]!.replaceAll('http://127.0.0.1:8080', t.http.baseUrl);
}

const bash = (script: string) => run('bash', ['-euo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH, KEY: key }, timeout: 60_000 });

beforeAll(async () => {
  let auth: Record<string, string>;
  ({ t, auth } = await createAdminTestApp({ seed: true }));
  key = auth.authorization!.replace('Bearer ', '');
});
afterAll(() => t.close());

describe('README', () => {
  it('signs up, logs in, reads the profile and logs out as shown', async () => {
    const { stdout } = await bash(blockAfter('### Customers: sign up, log in, your profile'));
    expect(stdout).toContain('"username":"marie.dupont"');
    expect(stdout).toContain('"favouriteCheese"');
    expect(stdout.trim().endsWith('204')).toBe(true);
  });

  it('places an order as that customer and follows it to delivered as shown', async () => {
    const { stdout } = await bash(blockAfter('### Orders: place one and follow it to delivered'));
    expect(stdout).toContain('"status":"placed"');
    expect(stdout).toMatch(/approved\nshipped\ndelivered\n/);
    expect(stdout).toContain('"trackingNumber":"FRX-');
  });

  it('registers a webhook, and the receiver code verifies its test delivery, as shown', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-receiver-'));
    try {
      fs.writeFileSync(path.join(dir, 'receiver.mjs'), blockAfter('### Webhooks: receive signed events', 'js'));
      const port = await freePort();
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', blockAfter('### Webhooks: receive signed events')], { cwd: dir, env: { PATH: process.env.PATH, KEY: key, RECEIVER_PORT: String(port) }, timeout: 60_000 });
      expect(stdout).toMatch(/verified webhook\.test evt_/);
      expect(stdout).toContain('"outcome":"delivered"');
      expect(stdout).toContain('"statusCode":204');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('registers an OAuth client, gets a token, uses it and revokes it as shown', async () => {
    const { stdout } = await bash(`${blockAfter('### OAuth 2.0: get a token')}\ncurl -s -o /dev/null -w 'after revoke: %{http_code}' "$S/v2/cheeses?limit=2" -H "Authorization: Bearer $ACCESS"`);
    expect(stdout).toContain('"items":[');
    expect(stdout).toContain('after revoke: 401');
  });
});
