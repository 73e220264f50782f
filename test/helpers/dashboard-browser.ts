import { createHmac } from 'node:crypto';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { TestApp } from './app.js';
import { bearer } from './http.js';
import type { Received } from './receiver.js';

/**
 * The dashboard driven as a person drives it, in Chromium: controls found by role and
 * accessible name (the table of issue 19), every page watched for page errors, console errors
 * and Content Security Policy violations. Shared by dashboard-browser.test.ts and
 * dashboard-a11y.test.ts; imports neither vitest nor the app, so scripts may use it too.
 */
export interface Watched {
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions, console errors and CSP violations, as they happened. */
  failures: string[];
  /** An error status the test asks for (a refused form, a missing page): the browser's console line about it is no failure. */
  expectStatus(path: string, status: number): void;
}

/** A fresh context (its own cookies) and page, watched from its first document on. */
export async function openPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const failures: string[] = [];
  const expected = new Set<string>();
  page.on('pageerror', (error) => failures.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const at = new URL(message.location().url || 'about:blank').pathname;
    const status = /^Failed to load resource: the server responded with a status of (\d{3}) /.exec(message.text())?.[1];
    if (status && expected.has(`${status} ${at}`)) return;
    if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(message.text())) failures.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  // Counted whether or not the browser also logs it (without JavaScript, the console is all there is).
  if (options.javaScriptEnabled !== false) {
    await page.exposeFunction('reportCspViolation', (violation: string) => failures.push(`CSP violation: ${violation}`));
    await page.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (event) => reportCspViolation(`${event.effectiveDirective} ${event.blockedURI} ${event.sample}`))",
    });
  }
  return { context, page, failures, expectStatus: (path, status) => expected.add(`${status} ${path}`) };
}

/** The dashboard's own navigation (the banner's), not a link of the same name in a page. */
export const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

/** Waits for the page a form's 303 (or a link) leads to. */
async function landOn(page: Page, path: RegExp): Promise<void> {
  await page.waitForURL((url) => path.test(url.pathname + url.search));
}

export async function signIn(page: Page, baseUrl: string, username: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/login`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await landOn(page, /^\/dashboard$/);
}

/** The secret a page shows once: the `<code>` of its status section. */
export async function revealed(page: Page): Promise<string> {
  return (await page.getByRole('status').locator('code').textContent())!.trim();
}

/** API keys → Create key → Name, scope boxes, Expires → Create key; answers the key shown once. */
export async function createKey(page: Page, name: string, scopes: string[], expires = 'In 30 days'): Promise<string> {
  await nav(page, 'API keys').click();
  await page.getByRole('link', { name: 'Create key' }).click();
  await page.getByLabel('Name').fill(name);
  for (const scope of scopes) await page.getByRole('checkbox', { name: scope, exact: true }).check();
  await page.getByLabel('Expires').selectOption({ label: expires });
  await page.getByRole('button', { name: 'Create key' }).click();
  await landOn(page, /^\/dashboard\/keys$/);
  return revealed(page);
}

/** Webhooks → Add webhook → URL, kind boxes → Save; answers its id and the secret its page showed once. */
export async function addWebhook(page: Page, url: string, kinds: string[]): Promise<{ id: number; secret: string }> {
  await nav(page, 'Webhooks').click();
  await page.getByRole('link', { name: 'Add webhook' }).click();
  await page.getByLabel('URL').fill(url);
  for (const kind of kinds) await page.getByRole('checkbox', { name: kind, exact: true }).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await landOn(page, /^\/dashboard\/webhooks\/\d+$/);
  return { id: Number(new URL(page.url()).pathname.split('/').at(-1)), secret: await revealed(page) };
}

/** "Send test event" on the webhook's page; answers the outcome the page states. */
export async function sendTestEvent(page: Page, baseUrl: string, webhookId: number): Promise<string> {
  if (new URL(page.url()).pathname !== `/dashboard/webhooks/${webhookId}`) await page.goto(`${baseUrl}/dashboard/webhooks/${webhookId}`);
  await page.getByRole('button', { name: 'Send test event' }).click();
  await landOn(page, new RegExp(`^/dashboard/webhooks/${webhookId}\\?test=evt_`));
  return (await page.getByRole('status').filter({ hasText: 'Test event sent' }).locator('strong').textContent())!.trim();
}

/**
 * Whether a delivery is signed by `secret` in both schemes (decisions.md §8): Standard Webhooks
 * (the `standardwebhooks` package's own check) and `X-Cheese-Signature: sha256=<hex HMAC of the
 * raw body keyed by the whole secret string>`, one of its comma-separated values.
 */
export function signedBy(delivery: Received, secret: string): { standard: boolean; cheese: boolean } {
  let standard = true;
  try {
    new StandardWebhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>);
  } catch {
    standard = false;
  }
  const expected = `sha256=${createHmac('sha256', secret).update(delivery.raw).digest('hex')}`;
  const cheese = String(delivery.headers['x-cheese-signature'] ?? '').split(',').includes(expected);
  return { standard, cheese };
}

let orders = 0;
/** An order of a seeded cheese placed by the customer through /v2 (as a shop would); answers its id. */
export async function placeOrder(t: TestApp, customer: { username: string; password: string }): Promise<number> {
  const token = (await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } })).body.token as string;
  const cheeses = (await t.http.get('/v2/cheeses?limit=50', { headers: bearer(token) })).body.items as { id: string; stockQuantityKg: number }[];
  const cheese = cheeses.filter((c) => c.stockQuantityKg >= 10)[orders++ % 3];
  if (!cheese) throw new Error('no seeded cheese in stock: createTestApp({ seed: true })');
  const order = await t.http.post('/v2/orders', { headers: bearer(token), json: { items: [{ cheeseId: cheese.id, quantity_kg: 1 }], shipping: { method: 'standard', address: { line1: '1 Test Street', city: 'Lyon', country: 'FR' } } } });
  if (order.status !== 201) throw new Error(`order refused: ${order.status} ${order.text}`);
  return order.body.id as number;
}

export const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe-core's violations of the page, one line each: rule, impact, help and the elements at fault. */
export async function axeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(WCAG).analyze();
  return results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((node) => node.target.join(' ')).join(', ')} [${v.helpUrl}]`);
}
