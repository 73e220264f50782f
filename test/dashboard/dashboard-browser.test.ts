import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { signUpCustomer } from '../helpers/dashboard.js';
import { addWebhook, createKey, nav, openPage, placeOrder, revealed, sendTestEvent, signedBy, signIn, type Watched } from '../helpers/dashboard-browser.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * The developer dashboard in Chromium (Debian's package), the real app on a real port (issue 19,
 * "Tests"): sign in and a key shown once that works against /v2; a webhook whose loopback
 * receiver verifies every signature; dead letters replayed; a rotated secret; filters through
 * back and forward; the keyboard alone; JavaScript off. Every page of every case: no page
 * error, no console error, no CSP violation. Skipped where Chromium is missing, a failure
 * under REQUIRE_BROWSER_TEST=1.
 */
const available = chromiumAvailable('dashboard-browser.test.ts');

let t: TestApp;
let browser: Browser;
let receiver: Receiver;
let base: string;
beforeAll(async () => {
  if (!available) return;
  // The test config's retry schedule (0, 0.2 and 0.4 s) dead-letters a failing event within a second.
  [t, receiver, browser] = await Promise.all([createTestApp({ seed: true, workers: true }), new Receiver().start(), launchChromium()]);
  base = t.http.baseUrl;
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

const opened: Watched[] = [];
/** A fresh browser context, closed after the test; its failures are checked by the test itself. */
async function open(options: Parameters<typeof openPage>[1] = {}): Promise<Watched> {
  const watched = await openPage(browser, options);
  opened.push(watched);
  return watched;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((w) => w.context.close()));
});

/** A customer signed in on a fresh page. */
async function customerPage(options: Parameters<typeof openPage>[1] = {}) {
  const customer = await signUpCustomer(t);
  const watched = await open(options);
  await signIn(watched.page, base, customer.username, customer.password);
  return { customer, ...watched };
}

let paths = 0;
/**
 * A receiver path that answers `state.status` to a request signed by every secret in
 * `state.secrets` (in both schemes), and 401 to any other: a delivered attempt was verified.
 */
function verifyingPath() {
  const path = `/hooks-${++paths}`;
  const state = { status: 200, secrets: [] as string[] };
  receiver.on(path, (_n, request) => ({ status: state.secrets.length > 0 && state.secrets.every((s) => Object.values(signedBy(request, s)).every(Boolean)) ? state.status : 401 }));
  return { path, url: receiver.url(path), state };
}

/** The page's cell texts of the attempts table, one array per row. */
const rowsOf = (page: Page) => page.getByRole('table').getByRole('row').filter({ has: page.getByRole('cell') }).evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent!.trim())));
const outcomes = async (page: Page) => (await rowsOf(page)).map((cells) => cells[3]);

describe.skipIf(!available)('the dashboard in a browser', () => {
  it('signs in and creates a key: shown once in a <code>, gone after a reload, and it works against /v2', async () => {
    const { page, failures } = await customerPage();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.getByRole('banner').getByText('Test environment').isVisible()).toBe(true);
    const key = await createKey(page, 'storefront', ['read:cheeses']);
    expect(key).toMatch(/^sk_test_/);
    expect(await page.locator('code', { hasText: key }).count()).toBe(1);
    expect(await page.getByRole('row', { name: /storefront/ }).textContent()).toContain('read:cheeses');
    await page.reload();
    expect(await page.locator('code', { hasText: key }).count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    const used = await fetch(`${base}/v2/cheeses`, { headers: { 'x-api-key': key } });
    expect(used.status).toBe(200);
    expect(failures).toEqual([]);
  }, 60_000);

  it('adds a webhook, sends a test event the receiver verifies with standardwebhooks, and shows the delivered row', async () => {
    const { page, failures } = await customerPage();
    const hook = verifyingPath();
    const { id, secret } = await addWebhook(page, hook.url, ['order.placed', 'order.shipped']);
    expect(secret).toMatch(/^whsec_/);
    hook.state.secrets = [secret];
    expect(await sendTestEvent(page, base, id)).toBe('Delivered');
    const [received] = await receiver.waitFor(hook.path, 1);
    expect(signedBy(received!, secret)).toEqual({ standard: true, cheese: true });
    await page.getByRole('link', { name: 'All deliveries' }).click();
    const rows = await rowsOf(page);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slice(1, 5)).toEqual([`webhook.test${JSON.parse(received!.raw).id}`, '1', 'Delivered', '200']);
    expect(failures).toEqual([]);
  }, 60_000);

  it('dead-letters an order\'s events while the receiver answers 500, replays them from the dashboard, and they are delivered', async () => {
    const { page, failures, customer } = await customerPage();
    const hook = verifyingPath();
    const kinds = ['order.placed', 'order.confirmed', 'order.shipped', 'order.delivered'];
    const { id, secret } = await addWebhook(page, hook.url, kinds);
    hook.state.secrets = [secret];
    hook.state.status = 500;
    const order = await placeOrder(t, customer);
    await nav(page, 'Orders').click();
    const steps = ['approved', 'shipped', 'delivered'];
    // With JavaScript, htmx swaps the order's row in place: no page load (without it, a 303 to the list).
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    for (const [i, next] of steps.entries()) {
      await page.getByRole('button', { name: `Advance order #${order} to ${next}` }).click();
      // The row again: the next step's button, or none once delivered.
      if (steps[i + 1]) await page.getByRole('button', { name: `Advance order #${order} to ${steps[i + 1]}` }).waitFor();
      else await page.getByRole('button', { name: `Advance order #${order} to ${next}` }).waitFor({ state: 'detached' });
    }
    expect(await page.getByRole('row', { name: new RegExp(`#${order}`) }).textContent()).toContain('Delivered');
    expect(navigations).toBe(0);

    const token = (await t.http.post('/v2/customer/login', { json: { username: customer.username, password: customer.password } })).body.token as string;
    const apiLog = async () => (await t.http.get(`/v2/webhooks/${id}/deliveries?limit=100`, { headers: bearer(token) })).body.items as { eventId: string; eventType: string; outcome: string }[];
    await expect.poll(async () => (await apiLog()).filter((a) => a.outcome === 'dead_lettered').length, { timeout: 15_000 }).toBe(4);
    await page.goto(`${base}/dashboard/webhooks/${id}/dead-letters`);
    const letters = await page.getByRole('table').getByRole('row').filter({ has: page.getByRole('cell') }).count();
    expect(letters).toBe(4);
    expect((await apiLog()).filter((a) => a.outcome === 'failed')).toHaveLength(8);

    hook.state.status = 200;
    // One by its own Replay button, the other three by Replay all after its confirmation.
    await page.getByRole('button', { name: /^Replay event evt_/ }).first().click();
    expect(await page.getByRole('status').textContent()).toContain('1 event was queued again.');
    await page.getByRole('link', { name: 'Back to the webhook' }).click();
    await page.getByRole('button', { name: 'Replay all' }).click();
    expect(await page.getByRole('main').textContent()).toMatch(/Replay all 3 dead-lettered events of the webhook/);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${base}/dashboard/webhooks/${id}/dead-letters?replayed=3`);
    expect(await page.getByRole('status').textContent()).toContain('3 events were queued again.');

    await expect.poll(async () => (await apiLog()).filter((a) => a.outcome === 'delivered').length, { timeout: 15_000 }).toBe(4);
    const delivered = (await apiLog()).filter((a) => a.outcome === 'delivered');
    expect(delivered.map((a) => a.eventType).sort()).toEqual([...kinds].sort());
    await page.goto(`${base}/dashboard/webhooks/${id}/deliveries?outcome=delivered`);
    expect(await outcomes(page)).toEqual(['Delivered', 'Delivered', 'Delivered', 'Delivered']);
    await page.goto(`${base}/dashboard/webhooks/${id}/dead-letters`);
    expect(await page.getByText('No dead-lettered events.').isVisible()).toBe(true);
    expect(failures).toEqual([]);
  }, 90_000);

  it('rotates the secret: the next delivery carries two signatures, and the old and the new secret each verify it', async () => {
    const { page, failures } = await customerPage();
    const hook = verifyingPath();
    const { id, secret: old } = await addWebhook(page, hook.url, ['order.placed']);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.waitForURL(`${base}/dashboard/webhooks/${id}`);
    const fresh = await revealed(page);
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    hook.state.secrets = [old, fresh];
    expect(await sendTestEvent(page, base, id)).toBe('Delivered');
    const [delivery] = await receiver.waitFor(hook.path, 1);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(String(delivery!.headers['x-cheese-signature']).split(',')).toHaveLength(2);
    expect(signedBy(delivery!, old)).toEqual({ standard: true, cheese: true });
    expect(signedBy(delivery!, fresh)).toEqual({ standard: true, cheese: true });
    // And the check can tell: a secret that signed nothing verifies nothing.
    expect(signedBy(delivery!, 'whsec_' + Buffer.alloc(32, 7).toString('base64'))).toEqual({ standard: false, cheese: false });
    expect(failures).toEqual([]);
  }, 60_000);

  it('keeps the deliveries\' filters in the URL: back and forward restore the URL and the boxes', async () => {
    const { page, failures } = await customerPage();
    const path = `/mixed-${++paths}`;
    receiver.on(path, (n) => ({ status: n % 2 === 1 ? 200 : 500 }));
    const { id } = await addWebhook(page, receiver.url(path), ['order.placed']);
    for (const expected of ['Delivered', 'Dead-lettered', 'Delivered', 'Dead-lettered']) expect(await sendTestEvent(page, base, id)).toBe(expected);
    await page.getByRole('link', { name: 'All deliveries' }).click();
    const box = (name: string) => page.getByRole('checkbox', { name, exact: true });
    const boxes = async () => Object.fromEntries(await Promise.all(['Delivered', 'Failed', 'Pending', 'Dead-lettered'].map(async (name) => [name, await box(name).isChecked()])));

    await box('Delivered').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/outcome=delivered/);
    const first = page.url();
    expect(await outcomes(page)).toEqual(['Delivered', 'Delivered']);
    await box('Delivered').uncheck();
    await box('Failed').check();
    await box('Dead-lettered').check();
    await page.getByLabel('Event type').selectOption('webhook.test');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/outcome=failed&outcome=dead_lettered/);
    const second = page.url();
    expect(await outcomes(page)).toEqual(['Dead-lettered', 'Dead-lettered']);

    await page.goBack();
    expect(page.url()).toBe(first);
    expect(await boxes()).toEqual({ Delivered: true, Failed: false, Pending: false, 'Dead-lettered': false });
    expect(await page.getByLabel('Event type').inputValue()).toBe('');
    expect(await outcomes(page)).toEqual(['Delivered', 'Delivered']);
    await page.goForward();
    expect(page.url()).toBe(second);
    expect(await boxes()).toEqual({ Delivered: false, Failed: true, Pending: false, 'Dead-lettered': true });
    expect(await page.getByLabel('Event type').inputValue()).toBe('webhook.test');
    expect(await outcomes(page)).toEqual(['Dead-lettered', 'Dead-lettered']);
    expect(failures).toEqual([]);
  }, 60_000);

  it('signs in and creates a key with the keyboard alone, the focus visible on every control it reaches', async () => {
    const customer = await signUpCustomer(t);
    const { page, failures } = await open();
    await page.goto(`${base}/dashboard/login`);
    /** The focused element: its label or text, and its outline as computed. */
    const focused = () =>
      page.evaluate<{ name: string; tag: string; outline: string; width: number }>(`(() => {
        const element = document.activeElement;
        const style = getComputedStyle(element);
        const label = element.id ? document.querySelector('label[for="' + element.id + '"]')?.textContent : null;
        return { name: (label ?? element.textContent ?? '').trim(), tag: element.tagName.toLowerCase(), outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      })()`);
    const reached: string[] = [];
    /** Tab (or Shift+Tab) until the focus is on the control named `name`, checking each one passed shows its focus. */
    const tabTo = async (name: string, key = 'Tab') => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press(key);
        const now = await focused();
        if (now.tag !== 'body') {
          reached.push(`${now.tag} ${now.name}`);
          expect(now.outline, `the focus outline of ${now.tag} "${now.name}"`).not.toBe('none');
          expect(now.width, `the focus outline of ${now.tag} "${now.name}"`).toBeGreaterThan(0);
        }
        if (now.name === name || now.name.startsWith(`${name} `)) return;
      }
      throw new Error(`${key} never reached "${name}": ${reached.join(' | ')}`);
    };
    await tabTo('Skip to content');
    await tabTo('Username');
    await page.keyboard.type(customer.username);
    await tabTo('Password');
    await page.keyboard.type(customer.password);
    await tabTo('Username', 'Shift+Tab');
    expect(await page.getByLabel('Username').inputValue()).toBe(customer.username);
    await tabTo('Sign in');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard`);

    await tabTo('API keys');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard/keys`);
    await tabTo('Create key');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard/keys/new`);
    await tabTo('Name');
    await page.keyboard.type('typed');
    await tabTo('read:orders');
    await page.keyboard.press('Space');
    await tabTo('read:cheeses', 'Shift+Tab');
    await page.keyboard.press('Space');
    await tabTo('Expires');
    await page.keyboard.type('In 7');
    expect(await page.getByLabel('Expires').inputValue()).toBe('7');
    await tabTo('Create key');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/dashboard/keys`);
    const key = await revealed(page);
    expect(key).toMatch(/^sk_test_/);
    expect(await page.getByRole('row', { name: /typed/ }).textContent()).toContain('read:cheeses read:orders');
    expect((await fetch(`${base}/v2/cheeses`, { headers: { 'x-api-key': key } })).status).toBe(200);
    expect(failures).toEqual([]);
  }, 60_000);

  it('works with JavaScript off: signs in, creates a key and revokes it through the confirmation page', async () => {
    const { page, failures } = await customerPage({ javaScriptEnabled: false });
    const key = await createKey(page, 'no-script', ['read:cheeses'], 'Never');
    expect((await fetch(`${base}/v2/cheeses`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const row = page.getByRole('row', { name: /no-script/ });
    await row.getByRole('link', { name: /^Revoke/ }).click();
    await page.waitForURL(/\/dashboard\/keys\/\d+\/revoke$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Revoke key');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${base}/dashboard/keys`);
    expect(await row.textContent()).toContain('Revoked');
    expect(await row.getByRole('link', { name: /^Revoke/ }).count()).toBe(0);
    expect((await fetch(`${base}/v2/cheeses`, { headers: { 'x-api-key': key } })).status).toBe(401);
    expect(failures).toEqual([]);
  }, 60_000);
});
