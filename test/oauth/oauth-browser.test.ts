import http from 'node:http';
import * as oauth from 'oauth4webapi';
import { type Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { freePort } from '../helpers/oauth.js';

/**
 * The code flow with PKCE as a person goes through it: Chromium (Debian's package) opens the
 * authorization URL, signs in on the login page, allows on the consent page and lands on the
 * client's redirect URI. Skipped where Chromium is missing, a failure under REQUIRE_BROWSER_TEST=1.
 */
const available = chromiumAvailable('oauth-browser.test.ts');

let t: TestApp;
let staff: Record<string, string>;
let browser: Browser;
let receiver: http.Server;
let redirectUri: string;
const callbacks: string[] = [];
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  if (!available) return;
  const port = await freePort();
  ({ t, auth: staff } = await createAdminTestApp({ config: { port, publicUrl: `http://127.0.0.1:${port}` } }));
  // The client application: it only records where the browser was sent.
  receiver = http.createServer((request, response) => {
    callbacks.push(request.url ?? '');
    response.setHeader('content-type', 'text/plain');
    response.end('signed in');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/callback`;
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  receiver?.close();
  await t?.close();
});

describe.skipIf(!available)('OAuth in a browser', () => {
  it('signs in, allows, and lands on the client with a code that oauth4webapi exchanges', async () => {
    const client = (await t.http.post('/v2/oauth-clients', { headers: staff, json: { name: 'Cheese Board SPA', type: 'public', grants: ['authorization_code', 'refresh_token'], scopes: ['read:cheeses', 'read:profile'], redirectUris: [redirectUri] } })).body;
    const username = 'browser.user';
    const password = 'a long enough secret 4 tests';
    expect((await t.http.post('/v2/customer', { json: { username, email: 'browser@example.com', password } })).status).toBe(201);

    const as = await oauth.processDiscoveryResponse(new URL(t.http.baseUrl), await oauth.discoveryRequest(new URL(t.http.baseUrl), { algorithm: 'oauth2', ...insecure }));
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({ client_id: client.clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'read:profile', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) {
      url.searchParams.set(name, value);
    }

    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(url.toString());
    // The login page as served: its title and heading, the sign-in form visible, no error shown,
    // and its stylesheet applied (the CSP allows 'self' only; body max-width 28rem is 448px).
    expect(await page.title()).toBe('Sign in · Fromagerie');
    expect(await page.locator('h1').innerText()).toBe('Sign in to Fromagerie');
    expect(await page.locator('#username').isVisible()).toBe(true);
    expect(await page.locator('#password').getAttribute('type')).toBe('password');
    expect(await page.locator('[role=alert]').count()).toBe(0);
    expect(await page.evaluate('getComputedStyle(document.body).maxWidth')).toBe('448px');
    expect(await page.locator('main').innerText()).toContain('Cheese Board SPA');
    await page.locator('#username').fill(username);
    await page.locator('#password').fill(password);
    await page.locator('button[type=submit]').click();
    await page.locator('button[value=approve]').waitFor();
    expect(await page.locator('main').innerText()).toContain('read:profile');
    await page.locator('button[value=approve]').click();
    await page.waitForURL((landed) => landed.toString().startsWith(redirectUri));
    expect(await page.locator('body').innerText()).toBe('signed in');
    expect(violations).toEqual([]);

    const oauthClient: oauth.Client = { client_id: client.clientId };
    const callback = oauth.validateAuthResponse(as, oauthClient, new URL(callbacks.filter((path) => path.startsWith('/callback')).at(-1)!, redirectUri), state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, await oauth.authorizationCodeGrantRequest(as, oauthClient, oauth.None(), callback, redirectUri, verifier, insecure));
    expect((await t.http.get(`/v2/customer/${username}`, { headers: bearer(tokens.access_token) })).status).toBe(200);
    await page.close();
  }, 60_000);
});
