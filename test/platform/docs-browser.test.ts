import sharp from 'sharp';
import { chromium, type Browser, type Locator, type Page, type Response } from 'playwright-core';
import { CHROMIUM, chromiumAvailable } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The docs page as a newcomer uses it: Chromium (Debian's package) opens /docs, authorises
 * with a key and runs "Try it out". Skipped, and said so, where Chromium is not installed;
 * CI installs it and sets REQUIRE_BROWSER_TEST=1, which turns the skip into a failure.
 */
const available = chromiumAvailable('docs-browser.test.ts');

/** A host name that is not loopback, served over plain http: how a deployment on a LAN or in a container is opened. */
const HOST = 'docs.test';

let t: TestApp;
let browser: Browser;
let key: string;
beforeAll(async () => {
  if (!available) return;
  // PUBLIC_URL (http://localhost:8080 in tests) is not where the app listens: the page must not call it.
  t = await createTestApp({ seed: true });
  key = await t.key(['read:cheeses', 'write:cheeses']);
  // Debian's Chromium as launchChromium starts it, with HOST resolving to the app's address.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', `--host-resolver-rules=MAP ${HOST} 127.0.0.1`] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

interface DocsPage {
  page: Page;
  /** The /docs answer. */
  response: Response;
  /** Uncaught exceptions, console errors (a failed load, a CSP refusal) and CSP violations, as they happened. */
  failures: string[];
  /** Every request the page made, with the headers it sent. */
  requests: { url: string; headers: Record<string, string> }[];
  /** The Authorize dialog's boxes, in the order it shows them. */
  boxes: string[];
}

/**
 * Opens /docs (at `origin`, the app's address by default) and authorises the key in each of
 * `schemes`' boxes: by default the first box alone, `api_key_bearer`, as README says.
 */
async function openDocs({ schemes = ['api_key_bearer'], origin = t.http.baseUrl }: { schemes?: string[]; origin?: string } = {}): Promise<DocsPage> {
  const page = await browser.newPage();
  const failures: string[] = [];
  const requests: DocsPage['requests'] = [];
  page.on('pageerror', (error) => failures.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => requests.push({ url: request.url(), headers: request.headers() }));
  // Counted whether or not the browser also logs it.
  await page.exposeFunction('reportCspViolation', (violation: string) => failures.push(`CSP violation: ${violation}`));
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (event) => reportCspViolation(`${event.effectiveDirective} ${event.blockedURI} ${event.sample}`))",
  });
  const response = (await page.goto(`${origin}/docs`))!;
  // A page that never renders says why (a refused script or stylesheet, a failed load) rather than timing out.
  await page
    .locator('.btn.authorize')
    .waitFor({ timeout: 20_000 })
    .catch(() => {
      throw new Error(`the docs page did not render: ${failures.join('; ')}`);
    });
  await page.locator('.btn.authorize').click();
  const boxes = (await page.locator('.auth-container h4').allTextContents()).map((title) => title.trim().split(/\s/)[0]!);
  for (const scheme of schemes) {
    const block = page.locator('.auth-container').filter({ has: page.locator('h4', { hasText: new RegExp(`^${scheme}\\b`) }) });
    await block.locator('input').fill(key);
    await block.locator('button.authorize').click();
  }
  await page.locator('.btn-done, .close-modal').first().click();
  return { page, response, failures, requests, boxes };
}

/** Expands an operation, presses "Try it out", lets `fill` set its inputs, executes, and returns the answer's status, body and the curl shown. */
async function tryItOut(page: Page, operationId: string, fill: (operation: Locator) => Promise<void> = async () => {}) {
  const operation = page.locator(`[id$="-${operationId}"]`);
  await operation.locator('.opblock-summary').click();
  await operation.locator('.try-out__btn').click();
  await fill(operation);
  await operation.locator('button.execute').click();
  const status = operation.locator('.live-responses-table tbody .response-col_status').first();
  await status.waitFor({ timeout: 15_000 }).catch(async () => page.screenshot({ path: `/tmp/docs-browser-${operationId}.png`, fullPage: true }));
  await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 15_000 }).toMatch(/^\d{3}/);
  return {
    status: (await status.textContent())!.trim().slice(0, 3),
    body: (await operation.locator('.live-responses-table .microlight, .live-responses-table pre').first().textContent()) ?? '',
    curl: (await operation.locator('.curl-command .curl, .curl-command pre').first().textContent()) ?? '',
  };
}

/** The credential headers of the requests the page sent to `path` (without the query). */
function credentialsSent(requests: DocsPage['requests'], path: string) {
  return requests
    .filter(({ url }) => new URL(url).pathname === path)
    .map(({ headers }) => Object.fromEntries(Object.entries(headers).filter(([name]) => name === 'authorization' || name === 'x-api-key')));
}

describe.skipIf(!available)('the docs page in a browser', () => {
  it('takes the key once, in the first (bearer) box, for a read and a write: 200 and 201, same-origin', async () => {
    const { page, failures, requests, boxes } = await openDocs();
    expect(boxes[0]).toBe('api_key_bearer');
    const read = await tryItOut(page, 'listCheeses');
    expect(read).toMatchObject({ status: '200', body: expect.stringContaining('"items"') });
    // The request example, as "Try it out" fills it in.
    const write = await tryItOut(page, 'createCheese');
    expect(write).toMatchObject({ status: '201', body: expect.stringContaining('"slug"') });
    expect(requests.filter(({ url }) => url.includes('/v2/cheeses')).map(({ url }) => url)).toEqual([
      expect.stringMatching(new RegExp(`^${t.http.baseUrl}/v2/cheeses\\?`)),
      `${t.http.baseUrl}/v2/cheeses`,
    ]);
    expect(credentialsSent(requests, '/v2/cheeses')).toEqual([{ authorization: `Bearer ${key}` }, { authorization: `Bearer ${key}` }]);
    expect(failures).toEqual([]);
  }, 60_000);

  it('sends, and shows in the curl, one credential header when the key was entered in both key boxes', async () => {
    const { page, failures, requests } = await openDocs({ schemes: ['api_key_bearer', 'api_key'] });
    const read = await tryItOut(page, 'listCheeses');
    expect(read.status).toBe('200');
    const credentials = read.curl.match(/-H '(authorization|x-api-key):[^']*'/gi);
    expect(credentials).toEqual([`-H 'Authorization: Bearer ${key}'`]);
    expect(credentialsSent(requests, '/v2/cheeses')).toEqual([{ authorization: `Bearer ${key}` }]);
    expect(failures).toEqual([]);
  }, 60_000);

  it('uploads an image chosen in the file picker: 200', async () => {
    const photo = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 232, g: 201, b: 106 } } }).jpeg().toBuffer();
    const { page, failures } = await openDocs();
    const answer = await tryItOut(page, 'uploadCheeseImage', async (operation) => {
      await operation.locator('tr[data-param-name="cheeseId"] input').fill('comte-24-mois');
      await operation.locator('input[type="file"]').setInputFiles({ name: 'photo.jpg', mimeType: 'image/jpeg', buffer: photo });
    });
    expect(answer).toMatchObject({ status: '200', body: expect.stringContaining('"contentType": "image/jpeg"') });
    expect(failures).toEqual([]);
  }, 60_000);

  it('loads over plain http at a host name with no console error and no CSP violation, under a policy without inline script', async () => {
    const origin = `http://${HOST}:${new URL(t.http.baseUrl).port}`;
    const { page, response, failures, requests } = await openDocs({ origin });
    const answer = await tryItOut(page, 'listCheeses');
    expect(answer.status).toBe('200');
    expect(requests.filter(({ url }) => url.includes('/v2/cheeses')).map(({ url }) => new URL(url).origin)).toEqual([origin]);

    const header = response.headers()['content-security-policy'] ?? '';
    const policy = new Map(
      header
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .filter(([name]) => name)
        .map(([name, ...values]) => [name!, values]),
    );
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('script-src-attr')).toEqual(["'none'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toBeDefined();
    expect(policy.get('base-uri')).toBeDefined();
    expect(policy.has('upgrade-insecure-requests')).toBe(false);
    expect([...policy.values()].flat()).not.toContain('validator.swagger.io');
    // Anything late (the logo, the highlighted answer) has been rendered by now.
    await page.waitForTimeout(500);
    expect(failures).toEqual([]);
  }, 60_000);
});
