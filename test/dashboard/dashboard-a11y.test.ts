import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { signUpCustomer } from '../helpers/dashboard.js';
import { addWebhook, axeViolations, createKey, openPage, placeOrder, sendTestEvent, signIn, WCAG, type Watched } from '../helpers/dashboard-browser.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * axe-core (@axe-core/playwright) on every page of the dashboard, empty and with data, as a
 * customer and as staff: no violation of WCAG 2.0, 2.1 and 2.2 A and AA (issue 19, "Tests");
 * no page error, console error or CSP violation on the way. Skipped where Chromium is
 * missing, a failure under REQUIRE_BROWSER_TEST=1.
 */
const available = chromiumAvailable('dashboard-a11y.test.ts');

let t: TestApp;
const clock = new JumpingClock();
let browser: Browser;
let receiver: Receiver;
let base: string;
beforeAll(async () => {
  if (!available) return;
  [t, receiver, browser] = await Promise.all([createTestApp({ seed: true, workers: true, config: { clock } }), new Receiver().start(), launchChromium()]);
  base = t.http.baseUrl;
  receiver.on('/failing', () => ({ status: 500 }));
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

const opened: Watched[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((w) => w.context.close()));
});

/** A watched page, and what axe found on each page it was run on ("label: violation"). */
async function auditor() {
  const watched = await openPage(browser);
  opened.push(watched);
  const found: string[] = [];
  const audited: string[] = [];
  /** Runs axe on the page as it is now. */
  const audit = async (label: string) => {
    audited.push(label);
    // A page reached by a click or a form may still be loading its stylesheet: audited before
    // it applies, the nav links measure their bare text (target-size), as CI saw once.
    await watched.page.waitForLoadState('load');
    for (const violation of await axeViolations(watched.page)) found.push(`${label} (${new URL(watched.page.url()).pathname}): ${violation}`);
  };
  /** Opens a dashboard path (200 expected) and audits it. */
  const visit = async (path: string, label = path, status = 200) => {
    if (status !== 200) watched.expectStatus(path, status);
    const response = await watched.page.goto(`${base}${path}`);
    expect(response!.status(), path).toBe(status);
    await audit(label);
  };
  /** Every page audited, none with a violation, nothing wrong in the console. */
  const done = () => {
    expect(found, `axe (${WCAG.join(', ')}) found:\n${found.join('\n')}`).toEqual([]);
    expect(watched.failures).toEqual([]);
    return audited;
  };
  return { ...watched, audit, visit, done };
}

const click = (page: Page, role: 'button' | 'link', name: string | RegExp) => page.getByRole(role, { name }).first().click();

describe.skipIf(!available)('accessibility of every dashboard page (axe, WCAG 2.2 AA)', () => {
  it('empty: signed out, a new customer with nothing yet, staff with no OAuth client', async () => {
    const customer = await signUpCustomer(t);
    const { page, audit, visit, done, expectStatus } = await auditor();
    await visit('/dashboard/login', 'login');
    expectStatus('/dashboard/login', 401);
    await page.getByLabel('Username').fill('nobody');
    await page.getByLabel('Password').fill('not a password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await audit('login, refused');
    await signIn(page, base, customer.username, customer.password);
    for (const path of ['/dashboard', '/dashboard/keys', '/dashboard/keys/new', '/dashboard/webhooks', '/dashboard/webhooks/new', '/dashboard/webhooks/dead-letters', '/dashboard/events', '/dashboard/events/kinds', '/dashboard/logs', '/dashboard/orders', '/dashboard/apps']) await visit(path);
    const { id } = await addWebhook(page, receiver.url('/empty'), ['order.placed']);
    await visit(`/dashboard/webhooks/${id}`, 'a webhook without attempts');
    await visit(`/dashboard/webhooks/${id}/deliveries`, 'deliveries, none');
    await visit(`/dashboard/webhooks/${id}/deliveries?outcome=failed`, 'deliveries, none matching');
    await visit(`/dashboard/webhooks/${id}/dead-letters`, 'dead letters of a webhook, none');
    await visit('/dashboard/webhooks/dead-letters/replay-all', 'replay all, nothing to replay');

    const staff = await auditor();
    await signIn(staff.page, base, t.config.adminUsername, t.config.adminPassword!);
    await staff.visit('/dashboard/oauth-clients');
    expect(await staff.page.getByText('No clients registered yet.').isVisible()).toBe(true);
    for (const path of ['/dashboard', '/dashboard/oauth-clients/new', '/dashboard/webhooks?account=nobody-at-all', '/dashboard/orders?customer=nobody-at-all', '/dashboard/webhooks/dead-letters?account=nobody-at-all']) await staff.visit(path);
    done();
    staff.done();
  }, 180_000);

  it('with data, as a customer: keys shown, rolled and revoked; webhooks with attempts and dead letters; orders; an authorized app', async () => {
    const customer = await signUpCustomer(t);
    const { page, audit, visit, done, expectStatus } = await auditor();
    await signIn(page, base, customer.username, customer.password);

    await createKey(page, 'storefront', ['read:cheeses', 'read:orders']);
    await audit('API keys, a new key shown');
    await createKey(page, 'reporting', ['read:orders'], 'Never');
    await page.reload();
    await audit('API keys, two keys');
    await click(page, 'link', /^Roll key/);
    await audit('roll');
    await page.getByLabel('Old key expires').selectOption({ label: 'In 1 hour' });
    await click(page, 'button', 'Confirm');
    await page.waitForURL(`${base}/dashboard/keys`);
    await audit('API keys, the rolled key shown');
    await click(page, 'link', /^Revoke key/);
    await audit('revoke confirmation');
    await click(page, 'button', 'Confirm');
    await page.waitForURL(`${base}/dashboard/keys`);
    await audit('API keys, rolled and revoked keys');

    const hook = await addWebhook(page, receiver.url('/a11y'), ['order.placed', 'order.confirmed']);
    await audit('a webhook, its secret shown');
    await sendTestEvent(page, base, hook.id);
    await audit('a webhook, a test event delivered');
    const failing = await addWebhook(page, receiver.url('/failing'), ['order.placed']);
    expect(await sendTestEvent(page, base, failing.id)).toBe('Dead-lettered');
    await audit('a webhook, a test event dead-lettered');
    const order = await placeOrder(t, customer);
    await visit('/dashboard/orders', 'orders');
    await click(page, 'button', `Advance order #${order} to approved`);
    await page.getByRole('button', { name: `Advance order #${order} to shipped` }).waitFor();
    await audit('orders, one advanced');
    await page.getByRole('link', { name: `#${order}`, exact: true }).click();
    await page.waitForURL(`${base}/dashboard/orders/${order}`);
    await audit('an order, its timeline and deliveries');
    await visit('/dashboard/orders');
    await click(page, 'button', 'Create test order');
    await page.waitForURL(/\/dashboard\/orders\/new\??$/);
    await audit('create test order');
    await page.getByRole('combobox', { name: 'Cheese', exact: true }).selectOption({ index: 1 });
    await page.getByRole('textbox', { name: 'Weight (kg)', exact: true }).fill('0.07');
    expectStatus('/dashboard/orders/new', 422);
    await click(page, 'button', 'Create test order');
    await page.getByRole('alert').waitFor();
    await audit('create test order, refused');
    await page.getByRole('textbox', { name: 'Weight (kg)', exact: true }).fill('1');
    await click(page, 'button', 'Create test order');
    await page.waitForURL(/\/dashboard\/orders\/\d+$/);
    await audit('a test order, just placed');
    for (const path of ['/dashboard', '/dashboard/webhooks', `/dashboard/webhooks/${hook.id}`, `/dashboard/webhooks/${hook.id}/edit`, `/dashboard/webhooks/${hook.id}/delete`, `/dashboard/webhooks/${failing.id}/deliveries`, `/dashboard/webhooks/${failing.id}/deliveries?outcome=dead_lettered&eventType=webhook.test`]) await visit(path);
    await click(page, 'link', /^Details/);
    await audit('an attempt, dead-lettered');
    // The event log and the request log with data (issue 31): lists, an event's page, a request's page.
    await t.app.modules.requestLog.provides.flush();
    await visit('/dashboard/events', 'events, with data');
    await visit('/dashboard/events?type=order.*', 'events, filtered');
    await click(page, 'link', /^Details of order\.placed/);
    await page.getByRole('button', { name: 'Resend' }).first().waitFor();
    await audit('an event, with its deliveries');
    await visit('/dashboard/logs', 'logs, with data');
    await visit('/dashboard/logs?status=2xx&method=POST', 'logs, filtered');
    await page.getByRole('region', { name: 'Live' }).locator('a[href^="/dashboard/logs/"]').first().click();
    await page.getByRole('button', { name: 'Copy as curl' }).waitFor();
    await audit('a request, with Copy as curl');
    await visit(`/dashboard/webhooks/${hook.id}/deliveries`);
    await click(page, 'link', /^Details/);
    await audit('an attempt, delivered');
    await visit('/dashboard/webhooks/dead-letters');
    await visit(`/dashboard/webhooks/${failing.id}/dead-letters`);
    await click(page, 'button', /^Replay event/);
    await page.getByRole('status').waitFor();
    await audit('dead letters, one replayed');
    await visit(`/dashboard/webhooks/dead-letters/replay-all?webhook=${failing.id}`, 'replay all, confirmation');

    const staffKey = await t.key(['admin']);
    const client = (await t.http.post('/v2/oauth-clients', { headers: bearer(staffKey), json: { name: 'Cheese Board', type: 'confidential', grants: ['authorization_code'], scopes: ['read:profile'], redirectUris: ['http://127.0.0.1:9/callback'] } })).body as { clientId: string };
    const authorize = new URL('/oauth/authorize', base);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: client.clientId, redirect_uri: 'http://127.0.0.1:9/callback', scope: 'read:profile', state: 'a11y' })) authorize.searchParams.set(name, value);
    expect((await authorizeThroughForms(authorize, customer.username, customer.password)).status).toBe(303);
    await visit('/dashboard/apps', 'authorized apps');
    await click(page, 'link', /^Revoke access/);
    await audit('revoke an app, confirmation');
    await visit('/dashboard/no-such-page', 'not found', 404);
    // The step-up: a sign-in older than 10 minutes asks for the password on a rotation. Last,
    // as the app's clock jumps 11 minutes: the authorized app above, known by its code alone
    // (the library's two minutes, on the system's clock), would no longer be listed.
    clock.advance(11 * 60_000);
    await visit(`/dashboard/webhooks/${hook.id}`);
    await click(page, 'button', 'Rotate secret');
    await page.getByLabel('Password').waitFor();
    await audit('step-up');
    expectStatus(`/dashboard/webhooks/${hook.id}/rotate-secret`, 401);
    await page.getByLabel('Password').fill('not my password at all');
    await click(page, 'button', 'Confirm');
    await page.getByRole('alert').waitFor();
    await audit('step-up, a wrong password');
    await page.getByLabel('Password').fill(customer.password);
    await click(page, 'button', 'Confirm');
    await page.waitForURL(`${base}/dashboard/webhooks/${hook.id}`);
    await audit('a webhook, the rotated secret shown');

    done();
  }, 240_000);

  it('with data, as staff: OAuth clients registered and deleted, every account\'s webhooks, dead letters and orders', async () => {
    const { page, audit, visit, done, expectStatus } = await auditor();
    await signIn(page, base, t.config.adminUsername, t.config.adminPassword!);
    await visit('/dashboard/oauth-clients/new', 'register client');
    expectStatus('/dashboard/oauth-clients', 422);
    await page.getByLabel('Name').fill('Shop back office');
    await click(page, 'button', 'Register');
    await page.getByRole('alert').waitFor();
    await audit('register client, refused');
    await page.getByRole('radio', { name: 'Confidential' }).check();
    await page.getByRole('checkbox', { name: 'client_credentials', exact: true }).check();
    await page.getByRole('checkbox', { name: 'read:orders', exact: true }).check();
    await click(page, 'button', 'Register');
    await page.waitForURL(`${base}/dashboard/oauth-clients`);
    await audit('OAuth clients, a secret shown');
    await click(page, 'link', /^Delete client/);
    await audit('delete client, confirmation');
    for (const path of ['/dashboard', '/dashboard/webhooks', '/dashboard/webhooks/dead-letters', '/dashboard/orders', '/dashboard/keys', '/dashboard/events', '/dashboard/logs']) await visit(path);
    await visit('/dashboard/webhooks/dead-letters/replay-all', 'replay all, every account\'s');
    done();
  }, 180_000);
});
