import sharp from 'sharp';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The docs page as a newcomer uses it: Chromium (Debian's package) opens /docs, authorises
 * with a key and runs "Try it out". Skipped, and said so, where Chromium is not installed;
 * CI installs it and sets REQUIRE_BROWSER_TEST=1, which turns the skip into a failure.
 */
const available = chromiumAvailable('docs-browser.test.ts');

let t: TestApp;
let browser: Browser;
let key: string;
beforeAll(async () => {
  if (!available) return;
  // PUBLIC_URL (http://localhost:8080 in tests) is not where the app listens: the page must not call it.
  t = await createTestApp({ seed: true });
  key = await t.key(['read:cheeses', 'write:cheeses']);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Opens /docs and authorises the key as `api_key` (X-API-Key) and as `api_key_bearer`, as README says. */
async function openDocs(): Promise<{ page: Page; failures: string[]; requests: string[] }> {
  const page = await browser.newPage();
  const failures: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (error) => failures.push(error.message));
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(`${t.http.baseUrl}/docs`);
  await page.locator('.btn.authorize').click();
  for (const scheme of ['api_key', 'api_key_bearer']) {
    const block = page.locator('.auth-container').filter({ has: page.locator('h4', { hasText: new RegExp(`^${scheme}\\b`) }) });
    await block.locator('input').fill(key);
    await block.locator('button.authorize').click();
  }
  await page.locator('.btn-done, .close-modal').first().click();
  return { page, failures, requests };
}

/** Expands an operation, presses "Try it out", lets `fill` set its inputs, executes, and returns the answer's status and body. */
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
  };
}

describe.skipIf(!available)('the docs page in a browser', () => {
  it('authorises with an API key and runs "Try it out" on GET /cheeses, same-origin: 200', async () => {
    const { page, failures, requests } = await openDocs();
    const answer = await tryItOut(page, 'listCheeses');
    expect(answer).toMatchObject({ status: '200', body: expect.stringContaining('"items"') });
    expect(requests.filter((url) => url.includes('/v2/cheeses'))).toEqual([expect.stringMatching(new RegExp(`^${t.http.baseUrl}/v2/cheeses`))]);
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
});
