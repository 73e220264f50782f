import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormBrowser, signUpCustomer, type Page } from '../helpers/dashboard.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * A secret shown once is shown once on the server's word, not the browser's: the reveal cookie
 * a page consumed, or one past its time, opens nothing when it is sent again (a replayed or
 * kept cookie), and the page says the secret is gone. For every page that reveals one.
 */
let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp();
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const REVEAL_COOKIE = 'fromagerie_session_reveal';
const SECRET = /<code id="revealed-secret">([^<]+)<\/code>/;
const GONE = 'was shown once and is not shown again';

/** The reveal cookie a response set, as sent. */
function revealCookieOf(page: Page): string {
  const line = page.headers.getSetCookie().find((each) => each.startsWith(`${REVEAL_COOKIE}=`));
  if (!line) throw new Error(`no reveal cookie in ${page.status}`);
  return line.slice(REVEAL_COOKIE.length + 1).split(';')[0]!;
}

interface Revealing {
  /** Performs the action; answers the 303 that set the cookie. */
  act: (browser: FormBrowser) => Promise<Page>;
  signIn: () => Promise<FormBrowser>;
}

async function customerBrowser() {
  const customer = await signUpCustomer(t);
  const browser = new FormBrowser(t.http.baseUrl);
  await browser.signIn(customer.username, customer.password);
  return browser;
}
async function staffBrowser() {
  const browser = new FormBrowser(t.http.baseUrl);
  await browser.signIn(t.config.adminUsername, t.config.adminPassword!);
  return browser;
}

let n = 0;
const PAGES: Record<string, Revealing> = {
  'a new API key': {
    signIn: customerBrowser,
    act: async (browser) => (await browser.get('/dashboard/keys/new'), browser.post('/dashboard/keys', { name: 'once', scopes: 'read:cheeses', expires: 'never' })),
  },
  'a rolled API key': {
    signIn: customerBrowser,
    act: async (browser) => {
      await browser.get('/dashboard/keys/new');
      await browser.post('/dashboard/keys', { name: 'to roll', scopes: 'read:cheeses', expires: 'never' });
      await browser.get('/dashboard/keys');
      const row = await t.database.db.selectFrom('api_keys').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
      await browser.get(`/dashboard/keys/${row.id}/roll`);
      return browser.post(`/dashboard/keys/${row.id}/roll`, { oldKeyExpires: '0' });
    },
  },
  "a new webhook's secret": {
    signIn: customerBrowser,
    act: async (browser) => (await browser.get('/dashboard/webhooks/new'), browser.post('/dashboard/webhooks', { url: receiver.url('/once'), events: 'order.placed' })),
  },
  "a rotated webhook secret": {
    signIn: customerBrowser,
    act: async (browser) => {
      await browser.get('/dashboard/webhooks/new');
      const created = await browser.post('/dashboard/webhooks', { url: receiver.url('/rotated'), events: 'order.placed' });
      await browser.get(created.location!);
      return browser.post(`${created.location!}/rotate-secret`);
    },
  },
  "a new OAuth client's secret": {
    signIn: staffBrowser,
    act: async (browser) =>
      (await browser.get('/dashboard/oauth-clients/new'),
      browser.post('/dashboard/oauth-clients', { name: `Once ${++n} ${process.pid}`, type: 'confidential', grants: 'client_credentials', scopes: 'read:cheeses', redirectUris: '' })),
  },
};

describe.each(Object.entries(PAGES))('%s', (_name, page) => {
  it('is shown on the first view only: the same cookie sent again shows no secret, and says so', async () => {
    const browser = await page.signIn();
    const done = await page.act(browser);
    expect(done.status, done.html).toBe(303);
    const cookie = revealCookieOf(done);
    const first = await browser.get(done.location!);
    const secret = SECRET.exec(first.html)?.[1];
    expect(secret).toBeDefined();

    browser.cookies.set(REVEAL_COOKIE, cookie);
    const replayed = await browser.get(done.location!);
    expect(replayed.status).toBe(200);
    expect(replayed.html).not.toContain(secret!);
    expect(replayed.html).not.toContain('id="revealed-secret"');
    expect(replayed.html).toContain(GONE);
  });

  it('is not shown once its time is over, even on a first view', async () => {
    const browser = await page.signIn();
    const done = await page.act(browser);
    await t.database.db.updateTable('dashboard_reveals').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
    const late = await browser.get(done.location!);
    expect(late.html).not.toContain('id="revealed-secret"');
    expect(late.html).toContain(GONE);
  });
});

describe('what the server keeps', () => {
  it('keeps a hash of the reveal id, never the secret; the pruning job removes rows past their time', async () => {
    const browser = await customerBrowser();
    const done = await PAGES['a new API key']!.act(browser);
    const first = await browser.get(done.location!);
    const secret = SECRET.exec(first.html)![1]!;
    const rows = await t.database.db.selectFrom('dashboard_reveals').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(revealCookieOf(done));

    const future = new Date(Date.now() + 3_600_000);
    expect(await t.runJob('dashboard-reveal-pruning', future)).toBeGreaterThan(0);
    expect(await t.database.db.selectFrom('dashboard_reveals').selectAll().execute()).toEqual([]);
  });

  it('opens nothing for another session, even with the cookie', async () => {
    const browser = await customerBrowser();
    const done = await PAGES['a new API key']!.act(browser);
    const other = await customerBrowser();
    other.cookies.set(REVEAL_COOKIE, revealCookieOf(done));
    const page = await other.get(done.location!);
    expect(page.html).not.toContain('id="revealed-secret"');
    // The owner still gets it once.
    expect((await browser.get(done.location!)).html).toContain('id="revealed-secret"');
  });
});
