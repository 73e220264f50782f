/**
 * Screenshots of the developer dashboard's main pages for the README (`npm run screenshots`):
 * the real app over a throwaway database with the sample data (as the tests start it), a
 * loopback webhook receiver, Debian's Chromium; signs in as the sandbox's test customer and as
 * staff, makes keys, a webhook with delivered and dead-lettered attempts, advances orders, and
 * writes docs/screenshots/<page>-<width>.png at 1280x800 and 390x844, and the same in dark mode
 * (prefers-color-scheme: dark) as docs/screenshots/<page>-dark-<width>.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { TEST_CUSTOMER } from '../src/bootstrap.js';
import { createTestApp } from '../test/helpers/app.js';
import { CHROMIUM, launchChromium } from '../test/helpers/browser.js';
import { addWebhook, createKey, nav, openPage, sendTestEvent, signIn } from '../test/helpers/dashboard-browser.js';
import { Receiver } from '../test/helpers/receiver.js';

const OUT = path.resolve('docs/screenshots');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

if (!fs.existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  process.exit(1);
}
fs.mkdirSync(OUT, { recursive: true });

const t = await createTestApp({ seed: true, workers: true });
const receiver = await new Receiver().start();
const browser = await launchChromium();
const base = t.http.baseUrl;
const failures: string[] = [];

const SCHEMES = [
  { colorScheme: 'light', suffix: '' },
  { colorScheme: 'dark', suffix: '-dark' },
] as const;

/** The page as it is now, at each size and in each colour scheme (emulated, not reloaded: a secret shown once stays shown). */
async function shoot(page: Page, name: string): Promise<void> {
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme.colorScheme });
    for (const size of SIZES) {
      await page.setViewportSize(size);
      await page.evaluate('window.scrollTo(0, 0)');
      const file = path.join(OUT, `${name}${scheme.suffix}-${size.width}.png`);
      await page.screenshot({ path: file });
      console.log(`wrote ${path.relative(process.cwd(), file)}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(SIZES[0]);
}

async function visit(page: Page, pathname: string, name: string): Promise<void> {
  await page.goto(`${base}${pathname}`);
  await shoot(page, name);
}

/** Advances the first order that has a next state, from the Orders page. */
async function advanceOne(page: Page): Promise<void> {
  await nav(page, 'Orders').click();
  await page.getByRole('button', { name: /^Advance order/ }).first().click();
  await page.waitForURL(`${base}/dashboard/orders`);
}

try {
  const customer = await openPage(browser);
  const { page } = customer;
  await signIn(page, base, TEST_CUSTOMER.username, TEST_CUSTOMER.password);
  await createKey(page, 'storefront', ['read:cheeses', 'read:orders'], 'Never');

  // A webhook for the order events, at a receiver that answers 200, then 500 for a while.
  const state = { status: 200 };
  receiver.on('/fromagerie/events', () => ({ status: state.status }));
  const { id } = await addWebhook(page, receiver.url('/fromagerie/events'), ['order.placed', 'order.confirmed', 'order.shipped', 'order.delivered']);
  await sendTestEvent(page, base, id);
  await advanceOne(page);
  state.status = 500;
  await advanceOne(page);
  await advanceOne(page);
  // Three quick attempts each (the test schedule), then dead-lettered.
  const until = Date.now() + 15_000;
  while ((await t.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).where('state', '=', 'dead').execute()).length < 2) {
    if (Date.now() > until) throw new Error('the failing deliveries were not dead-lettered in 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  state.status = 200;
  await sendTestEvent(page, base, id);
  // Some /v2 traffic of the customer's (reads, a few 404s, a refused order), so the overview's
  // chart and the Logs page have rows.
  const token = (await t.http.post('/v2/customer/login', { json: { username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password } })).body.token as string;
  const auth = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 40; i++) await t.http.get(`/v2/cheeses?limit=5&offset=${i}`, { headers: auth });
  for (let i = 0; i < 6; i++) await t.http.get(`/v2/orders/9999${i}`, { headers: auth });
  await t.http.post('/v2/orders', { headers: auth, json: { items: [] } });
  const orders = (await t.http.get('/v2/orders?limit=1', { headers: auth })).body.items as { id: number }[];
  await t.app.modules.requestLog.provides.flush();
  await shoot(page, 'webhook');
  await visit(page, `/dashboard/webhooks/${id}/deliveries`, 'deliveries');
  await visit(page, '/dashboard/webhooks/dead-letters', 'dead-letters');
  await visit(page, '/dashboard/webhooks', 'webhooks');
  await visit(page, '/dashboard/events', 'events');
  await visit(page, '/dashboard/orders', 'orders');
  await visit(page, `/dashboard/orders/${orders[0]!.id}`, 'order');
  await visit(page, '/dashboard/logs', 'logs');
  await visit(page, '/dashboard', 'overview');
  await createKey(page, 'ci', ['read:cheeses'], 'In 90 days');
  await shoot(page, 'api-keys');
  failures.push(...customer.failures);

  const staff = await openPage(browser);
  await signIn(staff.page, base, t.config.adminUsername, t.config.adminPassword!);
  await staff.page.goto(`${base}/dashboard/oauth-clients/new`);
  await staff.page.getByLabel('Name').fill('Cheese Board');
  await staff.page.getByRole('radio', { name: 'Public' }).check();
  for (const grant of ['authorization_code', 'refresh_token']) await staff.page.getByRole('checkbox', { name: grant, exact: true }).check();
  for (const scope of ['read:cheeses', 'read:profile']) await staff.page.getByRole('checkbox', { name: scope, exact: true }).check();
  await staff.page.getByLabel('Redirect URIs').fill('http://127.0.0.1:5173/callback');
  await staff.page.getByRole('button', { name: 'Register' }).click();
  await staff.page.waitForURL(`${base}/dashboard/oauth-clients`);
  await shoot(staff.page, 'oauth-clients');
  failures.push(...staff.failures);
  if (failures.length > 0) throw new Error(`the pages reported errors:\n${failures.join('\n')}`);
} finally {
  await browser.close();
  await receiver.close();
  await t.close();
}
