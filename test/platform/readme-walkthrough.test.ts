import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { processEnvFor } from '../helpers/database.js';
import { authorizeThroughForms, freePort } from '../helpers/oauth.js';

/**
 * README's walk-through, every shell block from "Your first API key" to the webhooks, run
 * literally in one bash (`-euo pipefail`), in order, as a reader pasting them into one shell
 * would, against a running app (only the address changed), and then run a second time on the
 * same data, as a reader trying it again would: so "copy-paste runnable" stays true.
 *
 * Not run: "Run it" (npm install && npm start: the app is already running), "Tests" and
 * "Operator CLI" (reference lists, not steps). Test-only adjustments: `npm` runs in the clone,
 * NODE_PATH finds the clone's node_modules for the `node -e` lines, and the test plays the
 * browser's part in the PKCE block (it signs in through the forms and follows the redirect to
 * the catcher).
 *
 * The script runs in a fresh temporary directory holding only receiver.mjs, saved there as
 * the Webhooks section tells the reader to: the walk-through writes its files into a directory
 * of its own (`W=$(mktemp -d)`), so after each run that directory must hold nothing more.
 */
const REPO = process.cwd();
const PASSWORD = 'correct horse battery staple';

/** The walk-through's headings, in README order: each has exactly one sh block. */
const HEADINGS = [
  '### Your first API key',
  '## A walk through with curl',
  '### Customers: sign up, log in, your profile',
  '### Rate limits and plans (staff)',
  '### OAuth clients (staff)',
  '### OAuth 2.0: get a token',
  "### OAuth 2.0: a customer's app, authorization code with PKCE",
  '### Orders: place one and follow it to delivered',
  '### Webhooks: receive signed events',
  '### Polling the event log',
  '### Your request log',
  '## Local development: listen, trigger, logs',
];

/** Checks the test runs after a block, in the same shell. */
const AFTER: Record<string, string> = {
  // Where the walk-through put its files: the test checks them there, then removes them.
  '## A walk through with curl': 'echo "walk-through files in: $W"',
  '### OAuth 2.0: get a token': `curl -s -o /dev/null -w 'after revoke: %{http_code}\\n' "$S/v2/cheeses?limit=2" -H "Authorization: Bearer $ACCESS"`,
};

let t: TestApp;
let workDir: string;
/** The temporary directories the walk-through made (`W`), removed afterwards. */
const writtenDirs: string[] = [];

function readme(): string {
  return fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
}

function blockAfter(heading: string, language = 'sh'): string {
  const text = readme();
  const start = text.indexOf(`\n${heading}\n`);
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(start));
  if (start < 0 || !match) throw new Error(`README.md has no ${language} block under "${heading}"`);
  return match[1]!.replaceAll('http://127.0.0.1:8080', t.http.baseUrl);
}

function walkThrough(): string {
  const shim = `npm() { (cd ${JSON.stringify(REPO)} && command npm "$@"); }\n`;
  return shim + HEADINGS.map((heading) => `# ---- ${heading}\n${blockAfter(heading)}${AFTER[heading] ? `${AFTER[heading]}\n` : ''}`).join('\n');
}

/**
 * Runs the script in bash; whenever the PKCE block's catcher asks for a browser, signs in
 * through the forms as the customer it names and follows the redirect to the catcher.
 */
function runPlayingBrowser(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    // The whole process group: a background receiver or catcher left running must not hold the pipes open.
    const killAll = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } };
    let stdout = '';
    let stderr = '';
    let handled = 0;
    const timer = setTimeout(killAll, 120_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const asks = [...stderr.matchAll(/Sign in as (\S+) and allow\n(?:[\s\S]*?)Open in a browser: (\S+)\n/g)];
      for (; handled < asks.length; handled++) {
        const [, username, url] = asks[handled]!;
        void (async () => {
          const outcome = await authorizeThroughForms(new URL(url!), username!, PASSWORD);
          expect([302, 303]).toContain(outcome.status);
          await fetch(outcome.location!).then((r) => r.text());
        })().catch((error: unknown) => {
          stderr += `\n[test browser] ${String(error)}\n`;
          killAll();
        });
      }
    });
    child.on('error', reject);
    child.on('exit', () => setTimeout(killAll, 500));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({ seed: true, config: { port, publicUrl: `http://127.0.0.1:${port}` } });
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walkthrough-'));
  fs.writeFileSync(path.join(workDir, 'receiver.mjs'), blockAfter('### Webhooks: receive signed events', 'js'));
});
afterAll(async () => {
  await t.close();
  fs.rmSync(workDir, { recursive: true, force: true });
  for (const dir of writtenDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('README walk-through', () => {
  it('has no shell block the walk-through skips', () => {
    const text = readme();
    // The SDK's section ends the walk-through: its block builds and runs examples/sdk-quickstart.ts, which test/sdk/sdk-quickstart.test.ts runs.
    const localLoop = text.indexOf('\n## Local development: listen, trigger, logs\n');
    const part = text.slice(text.indexOf('\n### Your first API key\n'), text.indexOf('\n## The TypeScript SDK\n')) + text.slice(localLoop, text.indexOf('\n## ', localLoop + 1));
    expect(part.match(/```sh\n/g)?.length).toBe(HEADINGS.length);
    // Every curl fails loudly, and no value is cut out of JSON with sed.
    // A line meant to fail prints its status instead, and says so (`# 404`).
    for (const line of part.split('\n').filter((l) => /(^|\$\(|\| )curl /.test(l.trim()) && !/-w '%\{http_code\}\\n'.*# 4\d\d$/.test(l))) expect(line).toMatch(/curl -sS --fail-with-body /);
    expect(part).not.toMatch(/\| sed /);
  });

  it('runs every block in order, twice over on the same data, as shown', async () => {
    const receiverPort = await freePort();
    const callbackPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...processEnvFor({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl, databaseSchema: t.config.databaseSchema }),
      NODE_PATH: path.join(REPO, 'node_modules'),
      RECEIVER_PORT: String(receiverPort),
      CALLBACK_PORT: String(callbackPort),
      APP_PORT: String(await freePort()),
      // listen keeps its signing secret there: the test's own, not the user's ~/.config
      XDG_CONFIG_HOME: path.join(workDir, '.config'),
    };
    delete env.KEY;
    const script = walkThrough();
    for (const round of [1, 2]) {
      const { code, stdout, stderr } = await runPlayingBrowser(script, env);
      const context = `round ${round}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
      const filesDir = /^walk-through files in: (\/.+)$/m.exec(stdout)?.[1];
      if (filesDir && path.resolve(filesDir) !== path.resolve(workDir)) writtenDirs.push(filesDir);
      expect(code, context).toBe(0);
      // Nothing new in the directory the walk-through ran from: its files went into its own.
      expect(fs.readdirSync(workDir).filter((name) => name !== '.config'), context).toEqual(['receiver.mjs']);
      expect(filesDir, context).toBeDefined();
      expect(fs.readdirSync(filesDir!).sort(), context).toEqual(['page1.json', 'photo.jpg']);
      // Your first API key, and the browse with the next page
      expect(stdout, context).toMatch(/^KEY=sk_test_/m);
      expect(stdout, context).toContain('"nextCursor":');
      // Customers
      expect(stdout, context).toMatch(/"username":"marie\.dupont\.\d+"/);
      expect(stdout, context).toContain('"favouriteCheese"');
      expect(stdout, context).toMatch(/^204$/m);
      // OAuth: client credentials, then the code flow with PKCE and a refresh
      expect(stdout, context).toContain('"items":[');
      expect(stdout, context).toContain('after revoke: 401');
      expect(stdout, context).toMatch(/^read:profile read:orders$/m);
      // Orders
      expect(stdout, context).toContain('"status":"placed"');
      expect(stdout, context).toMatch(/approved\nshipped\ndelivered\n/);
      expect(stdout, context).toContain('"trackingNumber":"FRX-');
      // Webhooks: delivered to the receiver, dead-lettered while it is down, replayed, deleted
      expect(stdout, context).toMatch(/verified webhook\.test evt_/);
      expect(stdout, context).toContain('"outcome":"delivered"');
      expect(stdout, context).toContain('"statusCode":204');
      expect(stdout, context).toContain('"outcome":"dead_lettered"');
      expect(stdout, context).toMatch(/"requeued":[1-9]/);
      expect(stdout, context).toMatch(/"requeued":[1-9]\d*}\n[\s\S]*^204$/m);
      // The event log: the order's events, an empty poll, a 304, then the new cheese's event
      expect(stdout, context).toContain('"type":"order.placed"');
      expect(stdout, context).toMatch(/\{"items":\[\],"hasMore":false,"nextCursor":null,"nextAfter":"pos_[\w.-]+"\}/);
      expect(stdout, context).toContain('304, poll again in 5 s');
      expect(stdout, context).toMatch(/cheese\.new_arrival\n/);
      // The request log: the 404 tailed, then read by its request id with the key redacted
      expect(stdout, context).toMatch(/^404\n404\n\[redacted\]$/m);
      // The local loop: listen forwarded the trigger's events, signed with the listen secret the app checked; logs tail showed the 404
      expect(stdout, context).toMatch(/^verified order\.shipped evt_/m);
      expect(stdout, context).toMatch(/^<-- 204 order\.placed evt_\S+ \d+ ms$/m);
      expect(stdout, context).toMatch(/^\S+Z\s+404 GET\s+\/v2\/orders\/999999999\s/m);
    }
    // Nothing written into the clone.
    expect(fs.existsSync(path.join(REPO, 'photo.jpg'))).toBe(false);
    expect(fs.existsSync(path.join(REPO, 'page1.json'))).toBe(false);
  }, 360_000);
});
