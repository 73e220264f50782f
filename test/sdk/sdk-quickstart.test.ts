import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ seed: true });
});
afterAll(() => t.close());

// The quick-start is type-checked (strict, NodeNext) with the fixtures by sdk-types.test.ts; here it runs, as the README says, against a real server.
it("the README's SDK quick-start runs: lists cheeses, places an order, reads the order's events", async () => {
  const key = await t.key(['read:cheeses', 'write:orders', 'read:orders'], 'customer');
  const env = { ...process.env, FROMAGERIE_API_KEY: key, FROMAGERIE_BASE_URL: `${t.http.baseUrl}/v2` };
  const args = ['--conditions=@fromagerie/source', '--import', 'tsx', 'examples/sdk-quickstart.ts'];
  const { stdout } = await promisify(execFile)(process.execPath, args, { env, timeout: 60_000 });
  const orderId = /^order (\d+): placed, [\d.]+ USD$/m.exec(stdout)?.[1];
  expect(stdout).toMatch(/^\d+ cheeses; first: .+$/m);
  expect(stdout).toMatch(/^\d+ hard cheeses available$/m);
  expect(orderId).toBeDefined();
  const placed = await t.database.db.selectFrom('outbox').select(['event_id']).where('type', '=', 'order.placed').where('aggregate_id', '=', orderId!).executeTakeFirstOrThrow();
  expect(stdout).toMatch(new RegExp(`^${placed.event_id} order\\.placed at \\S+, order ${orderId}$`, 'm'));
});

it("the README shows the quick-start file as it is", async () => {
  const [readme, file] = await Promise.all([readFile('README.md', 'utf8'), readFile('examples/sdk-quickstart.ts', 'utf8')]);
  expect(readme).toContain(`\n\`\`\`ts\n${file}\`\`\`\n`);
});

/** The SDK README's ts blocks, one script (later blocks use the first one's `sdk`), against this server. */
function sdkReadmeScript(): string {
  const readme = fs.readFileSync('packages/sdk/README.md', 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks.join('\n').replaceAll('http://127.0.0.1:8080', t.http.baseUrl);
}

it("the SDK README's examples run as shown: browse, order the first cheese in stock, then tail the order's events until Ctrl-C", async () => {
  const key = await t.key(['read:cheeses', 'write:orders', 'read:orders'], 'customer');
  const auth = { authorization: `Bearer ${key}` };
  // Inside node_modules, so '@fromagerie/sdk' resolves as it does for a user's project.
  const dir = fs.mkdtempSync(path.join('node_modules', '.sdk-readme-'));
  try {
    const file = path.join(dir, 'readme.mts');
    fs.writeFileSync(file, sdkReadmeScript());
    const child = spawn(process.execPath, ['--conditions=@fromagerie/source', '--import', 'tsx', file], { env: { ...process.env, FROMAGERIE_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await expect.poll(() => /^order (\d+): placed$/m.exec(stdout)?.[1], { timeout: 30_000, interval: 100 }).toBeDefined();
      const orderId = /^order (\d+): placed$/m.exec(stdout)![1]!;
      expect(stdout).toMatch(/Bleu|Roquefort|Gorgonzola|Stilton|blue/i);
      // The tail's first poll (after=now, not held) is in the request log once answered: from then on no event is missed.
      const logs = { authorization: `Bearer ${await t.key(['admin'], 'admin')}` };
      const tailing = async () => {
        // This in-process app writes its request log when told (no background workers here).
        await t.app.modules.requestLog.provides.flush();
        return (await t.http.get<{ items: Array<{ query: string }> }>('/v2/request-logs?path=/v2/events&limit=5', { headers: logs })).body.items.some((entry) => entry.query.includes('after=now'));
      };
      await expect.poll(tailing, { timeout: 30_000, interval: 100 }).toBe(true);
      for (let step = 0; step < 2; step++) expect((await t.http.post(`/v2/sandbox/orders/${orderId}/advance`, { headers: auth })).status).toBe(200);
      await expect.poll(() => stdout, { timeout: 10_000, interval: 50 }).toMatch(/^FRX-\S+$/m);
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(0);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`, { cause: error });
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
