import { HtmlValidate } from 'html-validate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';

/**
 * Every dashboard page a signed-in user can reach by links is valid HTML (html-validate's
 * recommended rules), for a customer and for staff, empty and with data.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ seed: true });
});
afterAll(async () => t?.close());

// Checkbox groups (scopes, event kinds) share one name, as HTML forms do.
const validator = new HtmlValidate({ extends: ['html-validate:recommended'], rules: { 'form-dup-name': ['error', { shared: ['radio', 'button', 'reset', 'submit', 'checkbox'] }] } });

/** Follows every link to a dashboard page from the overview on (at most 80 pages), validating each. */
async function crawl(browser: FormBrowser): Promise<{ pages: string[]; problems: string[] }> {
  const seen = new Set<string>();
  // The test order's form is reached by a button (a GET form), not a link.
  const queue = ['/dashboard', '/dashboard/orders/new'];
  const problems: string[] = [];
  while (queue.length > 0 && seen.size < 80) {
    const path = queue.shift()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const page = await browser.get(path);
    expect(page.status, `${path}: ${page.html.slice(0, 300)}`).toBe(200);
    const report = await validator.validateString(page.html);
    for (const result of report.results) for (const message of result.messages) problems.push(`${path} ${message.line}:${message.column} ${message.ruleId}: ${message.message}`);
    for (const [, href] of page.html.matchAll(/href="(\/dashboard[^"#]*)"/g)) {
      const target = href!.replace(/&amp;/g, '&');
      if (!target.startsWith('/dashboard/assets') && !seen.has(target)) queue.push(target);
    }
  }
  return { pages: [...seen], problems };
}

/** A key, and a webhook with one test attempt (to a port nobody listens on): lists, a webhook's page, its deliveries and an attempt's detail. */
async function withData(browser: FormBrowser) {
  await browser.get('/dashboard/keys/new');
  await browser.post('/dashboard/keys', { name: 'storefront', scopes: 'read:cheeses', expires: 'never' });
  await browser.get('/dashboard/webhooks/new');
  const created = await browser.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'order.placed' });
  expect(created.status, created.html.slice(0, 300)).toBe(303);
  const hook = /\/dashboard\/webhooks\/(\d+)/.exec(created.location ?? '')?.[1];
  expect(hook).toBeDefined();
  await browser.get(`/dashboard/webhooks/${hook}`);
  expect((await browser.post(`/dashboard/webhooks/${hook}/test`)).status).toBe(303);
  // A test order (its page is linked from the list), and the form refusing a weight.
  const form = await browser.get('/dashboard/orders/new');
  const cheese = /<option value="(\d+)">/.exec(form.html)?.[1];
  expect(cheese).toBeDefined();
  const refused = await browser.post('/dashboard/orders/new', { cheese1: cheese!, kg1: '0.07' });
  expect(refused.status).toBe(422);
  expect(await problemsOf(refused.html)).toEqual([]);
  expect((await browser.post('/dashboard/orders/new', { cheese1: cheese!, kg1: '1' })).status).toBe(303);
}

async function problemsOf(html: string): Promise<string[]> {
  const report = await validator.validateString(html);
  return report.results.flatMap((r) => r.messages.map((m) => `${m.line}:${m.column} ${m.ruleId}: ${m.message}`));
}

describe('every page is valid HTML', () => {
  it('for a customer, before and after there is data', async () => {
    const customer = await signUpCustomer(t);
    const browser = new FormBrowser(t.http.baseUrl);
    const signIn = await validator.validateString((await browser.get('/dashboard/login')).html);
    expect(signIn.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`)).join('\n')).toBe('');
    await browser.signIn(customer.username, customer.password);
    const empty = await crawl(browser);
    expect(empty.problems.join('\n')).toBe('');
    await withData(browser);
    // A request through /v2 for the request log (Logs and a request's page).
    const { key } = await t.app.modules.identity.provides.apiKeys.create({ accountId: customer.accountId, role: 'customer' }, { scopes: ['read:orders'] }, null);
    expect((await t.http.get('/v2/orders', { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await t.app.modules.requestLog.provides.flush();
    const full = await crawl(browser);
    expect(full.problems.join('\n')).toBe('');
    expect(full.pages).toEqual(expect.arrayContaining(['/dashboard', '/dashboard/keys', '/dashboard/keys/new', '/dashboard/webhooks', '/dashboard/events', '/dashboard/events/kinds', '/dashboard/logs', '/dashboard/orders', '/dashboard/apps']));
    expect(full.pages.filter((path) => /^\/dashboard\/events\/evt_/.test(path)), full.pages.join(' ')).not.toEqual([]);
    expect(full.pages.filter((path) => /^\/dashboard\/logs\/[^?]/.test(path)), full.pages.join(' ')).not.toEqual([]);
    expect(full.pages.filter((path) => /^\/dashboard\/webhooks\/\d+\/deliveries\/\d+/.test(path)), full.pages.join(' ')).not.toEqual([]);
    expect(full.pages.filter((path) => /^\/dashboard\/orders\/\d+$/.test(path)), full.pages.join(' ')).not.toEqual([]);
  }, 60_000);

  it('for staff', async () => {
    const browser = new FormBrowser(t.http.baseUrl);
    await browser.signIn('admin', 'test-staff-password');
    await withData(browser);
    const { problems } = await crawl(browser);
    expect(problems.join('\n')).toBe('');
  }, 60_000);
});
