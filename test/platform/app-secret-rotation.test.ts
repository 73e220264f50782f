import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CUSTOMER } from '../../src/bootstrap.js';
import { createTestStorage, DIALECT, processEnvFor, type TestStorage } from '../helpers/database.js';
import { FormBrowser } from '../helpers/dashboard.js';
import { bearer } from '../helpers/http.js';
import { Receiver } from '../helpers/receiver.js';
import { runCli, runServer, type RunningServer } from '../helpers/server.js';

/**
 * Rotating APP_SECRET as docs/operations.md tells an operator to (issue 29 §3, issue 32 §2),
 * on real server processes: what was made under the old secret keeps working while it is
 * APP_SECRET_PREVIOUS, `fromagerie secrets re-encrypt` moves the stored webhook secrets to the
 * new one, and once the old secret is gone its cursors and login tokens are refused (4xx),
 * while webhooks still sign with the secret their receivers hold.
 */
const S1 = 'the-first-app-secret-of-this-deployment-0001';
const S2 = 'the-second-app-secret-after-the-rotation-0002';
const address = { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' };

let storage: TestStorage;
let receiver: Receiver;
let server: RunningServer | undefined;
// One PUBLIC_URL across the restarts (each on a new port): it is the login tokens' issuer.
const envWith = (secrets: NodeJS.ProcessEnv) => processEnvFor(storage, { PUBLIC_URL: 'http://localhost:8080', RATE_LIMITS: 'off', MAX_CONNECTIONS_PER_CLIENT: '0', ADMIN_PASSWORD: 'a good staff password', ...secrets });

beforeAll(async () => {
  storage = await createTestStorage();
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await storage?.dispose();
});

async function restart(secrets: NodeJS.ProcessEnv): Promise<RunningServer> {
  await server?.stop();
  server = await runServer(envWith(secrets));
  return server;
}

/** The same browser (its cookies) at the restarted server's new port. */
function movedTo(browser: FormBrowser, running: RunningServer): FormBrowser {
  const moved = new FormBrowser(running.base);
  for (const [name, value] of browser.cookies) moved.cookies.set(name, value);
  moved.csrf = browser.csrf;
  return moved;
}

/** An order placed: the webhook's receiver is sent its order.placed, which must verify under `secret` (Standard Webhooks). */
async function orderDeliveredSignedWith(running: RunningServer, auth: Record<string, string>, secret: string): Promise<void> {
  const before = receiver.at('/hook').length;
  const placed = await running.http.post<{ id: number }>('/v2/orders', { headers: auth, json: { items: [{ cheeseId: 1, quantity_kg: 0.1 }], shipping: { method: 'standard', address } } });
  expect(placed.status, placed.text).toBe(201);
  const deliveries = await receiver.waitFor('/hook', before + 1, 30_000);
  const delivery = deliveries.find((d) => (JSON.parse(d.raw) as { data?: { id?: unknown } }).data?.id === placed.body.id) ?? deliveries.at(-1)!;
  const payload = new StandardWebhook(secret).verify(delivery.raw, delivery.headers as Record<string, string>) as { type: string };
  expect(payload.type).toBe('order.placed');
}

describe(`rotating APP_SECRET with APP_SECRET_PREVIOUS, then re-encrypting (${DIALECT})`, () => {
  it('keeps everything made under the old secret working during the rotation, and refuses only cursors and tokens after it', async () => {
    // 1. Under S1: a login token, a webhook (its secret stored sealed), a cursor, two dashboard sign-ins.
    let running = await restart({ APP_SECRET: S1 });
    const login = await running.http.post<{ token: string }>('/v2/customer/login', { json: { username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password } });
    expect(login.status, login.text).toBe(200);
    const oldToken = bearer(login.body.token);
    const webhook = await running.http.post<{ secret: string }>('/v2/webhooks', { headers: oldToken, json: { url: receiver.url('/hook'), events: ['order.placed'] } });
    expect(webhook.status, webhook.text).toBe(201);
    const whsec = webhook.body.secret;
    expect(whsec).toMatch(/^whsec_/);
    const page = await running.http.get<{ nextCursor: string | null }>('/v2/cheeses?limit=1', { headers: oldToken });
    const oldCursor = page.body.nextCursor!;
    expect(oldCursor).toBeTruthy();
    let staying = new FormBrowser(running.base);
    expect((await staying.signIn(TEST_CUSTOMER.username, TEST_CUSTOMER.password)).status).toBe(303);
    let leaving = new FormBrowser(running.base);
    expect((await leaving.signIn(TEST_CUSTOMER.username, TEST_CUSTOMER.password)).status).toBe(303);
    // A form shown under S1 (its CSRF token made with S1's key), sent after the restart.
    expect((await leaving.get('/dashboard/keys')).status).toBe(200);
    const oldCsrf = leaving.csrf!;

    // 2. Under S2 with S1 as APP_SECRET_PREVIOUS: all of it still accepted.
    running = await restart({ APP_SECRET: S2, APP_SECRET_PREVIOUS: S1 });
    staying = movedTo(staying, running);
    leaving = movedTo(leaving, running);
    const profile = await running.http.get(`/v2/customer/${TEST_CUSTOMER.username}`, { headers: oldToken });
    expect(profile.status, profile.text).toBe(200);
    const next = await running.http.get(`/v2/cheeses?limit=1&cursor=${encodeURIComponent(oldCursor)}`, { headers: oldToken });
    expect(next.status, next.text).toBe(200);
    expect((await staying.get('/dashboard/keys')).status).toBe(200);
    const loggedOut = await leaving.post('/dashboard/logout', {}, { csrf: oldCsrf });
    expect(loggedOut.status, loggedOut.html.slice(0, 300)).toBe(303);
    expect((await leaving.get('/dashboard/keys')).status).toBe(303);
    await orderDeliveredSignedWith(running, oldToken, whsec);

    // 3. The stored secrets re-sealed under S2 (beside the running server); a second run finds nothing to do.
    const env = envWith({ APP_SECRET: S2, APP_SECRET_PREVIOUS: S1 });
    const first = await runCli(env, ['secrets', 're-encrypt']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('re-encrypted 1, already current 0, unreadable 0');
    const again = await runCli(env, ['secrets', 're-encrypt']);
    expect(again.stdout).toContain('re-encrypted 0, already current 1, unreadable 0');

    // 4. S2 alone: the webhook still signs with the secret its receiver holds; the dashboard
    // session (a random token, hashed) survives; S1's cursor and login token are refused, as 4xx.
    running = await restart({ APP_SECRET: S2 });
    staying = movedTo(staying, running);
    expect((await staying.get('/dashboard/keys')).status).toBe(200);
    const fresh = await running.http.post<{ token: string }>('/v2/customer/login', { json: { username: TEST_CUSTOMER.username, password: TEST_CUSTOMER.password } });
    const freshToken = bearer(fresh.body.token);
    const refusedCursor = await running.http.get(`/v2/cheeses?limit=1&cursor=${encodeURIComponent(oldCursor)}`, { headers: freshToken });
    expect(refusedCursor.status, refusedCursor.text).toBe(400);
    expect(refusedCursor.body).toMatchObject({ type: 'invalid_request', errors: [{ field: 'cursor', message: 'is invalid' }] });
    const refusedToken = await running.http.get(`/v2/customer/${TEST_CUSTOMER.username}`, { headers: oldToken });
    expect(refusedToken.status, refusedToken.text).toBe(401);
    expect(refusedToken.text).toContain('The login token is invalid.');
    await orderDeliveredSignedWith(running, freshToken, whsec);
    expect(running.output()).not.toContain('unreadableWebhookSecrets');

    // 5. APP_SECRET replaced without APP_SECRET_PREVIOUS: the start says, in one line, how many stored secrets no key opens (never a secret).
    running = await restart({ APP_SECRET: 'a-third-secret-set-without-the-previous-one-03' });
    const warnings = running.output().split('\n').filter((line) => line.includes('unreadableWebhookSecrets'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, unreadableWebhookSecrets: 1, msg: expect.stringContaining('open under neither APP_SECRET nor APP_SECRET_PREVIOUS') });
    expect(running.output()).not.toContain('whsec_');
  }, 300_000);
});
