import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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
