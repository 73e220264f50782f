import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_ACTIONS, guardCredentialActions } from '../../src/modules/dashboard/credential-actions.js';
import type { DashboardContext } from '../../src/modules/dashboard/dashboard.context.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { JumpingClock } from '../helpers/clock.js';
import { FormBrowser, signUpCustomer } from '../helpers/dashboard.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * Every dashboard action that makes a credential, or something that can mint one
 * (CREDENTIAL_ACTIONS), asks for the password once the sign-in is over 10 minutes old, in a
 * test environment too: nothing is made before the right password is given, and the action
 * goes through after it. Walks the table: an action added to it without a case here fails.
 */
let t: TestApp;
let receiver: Receiver;
const clock = new JumpingClock();
beforeAll(async () => {
  t = await createTestApp({ config: { clock } });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const db = () => t.database.db;

interface Signed {
  browser: FormBrowser;
  accountId: number;
  password: string;
}

async function customer(): Promise<Signed> {
  const c = await signUpCustomer(t);
  const browser = new FormBrowser(t.http.baseUrl);
  await browser.signIn(c.username, c.password);
  return { browser, accountId: c.accountId, password: c.password };
}

async function staff(): Promise<Signed> {
  const browser = new FormBrowser(t.http.baseUrl);
  await browser.signIn(t.config.adminUsername, t.config.adminPassword!);
  const admin = await db().selectFrom('accounts').select('id').where('username', '=', t.config.adminUsername).executeTakeFirstOrThrow();
  return { browser, accountId: Number(admin.id), password: t.config.adminPassword! };
}

/** 11 minutes later: the sign-in is past the step-up window (each case signs in afresh). */
function stale() {
  clock.advance(11 * 60_000);
}

/** Per action: who acts, what exists first, the form, and what the database says was made. */
interface Case {
  who: () => Promise<Signed>;
  /** Makes what the action acts on (before the sign-in goes stale); answers the path to post to. */
  prepare: (signed: Signed) => Promise<string>;
  fields: Record<string, string | string[]>;
  /** A figure that changes when the action went through. */
  made: (signed: Signed) => Promise<unknown>;
}

const keyCount = async ({ accountId }: Signed) => (await db().selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).length;
const webhookCount = async ({ accountId }: Signed) => (await db().selectFrom('webhooks').select('id').where('account_id', '=', accountId).execute()).length;

async function createKey({ browser }: Signed): Promise<number> {
  await browser.get('/dashboard/keys/new');
  expect((await browser.post('/dashboard/keys', { name: 'first', scopes: 'read:cheeses', expires: 'never' })).status).toBe(303);
  const row = await db().selectFrom('api_keys').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
  return Number(row.id);
}

async function createWebhook({ browser }: Signed): Promise<number> {
  await browser.get('/dashboard/webhooks/new');
  const created = await browser.post('/dashboard/webhooks', { url: receiver.url('/step-up'), events: 'order.placed' });
  expect(created.status, created.html).toBe(303);
  return Number(/\/dashboard\/webhooks\/(\d+)$/.exec(created.location!)![1]);
}

let clients = 0;
const CASES: Record<string, Case> = {
  '/dashboard/keys': {
    who: customer,
    prepare: async ({ browser }) => (await browser.get('/dashboard/keys/new'), '/dashboard/keys'),
    fields: { name: 'after a while', scopes: ['read:cheeses', 'read:orders'], expires: '30' },
    made: keyCount,
  },
  '/dashboard/keys/:id/roll': {
    who: customer,
    prepare: async (signed) => {
      const id = await createKey(signed);
      await signed.browser.get(`/dashboard/keys/${id}/roll`);
      return `/dashboard/keys/${id}/roll`;
    },
    fields: { oldKeyExpires: '3600' },
    made: keyCount,
  },
  '/dashboard/oauth-clients': {
    who: staff,
    prepare: async ({ browser }) => (await browser.get('/dashboard/oauth-clients/new'), '/dashboard/oauth-clients'),
    fields: { name: `Backend ${++clients} ${process.pid}`, type: 'confidential', grants: 'client_credentials', scopes: 'admin', redirectUris: '' },
    made: async () => (await db().selectFrom('oauth_clients').select('id').execute()).length,
  },
  '/dashboard/webhooks': {
    who: customer,
    prepare: async ({ browser }) => (await browser.get('/dashboard/webhooks/new'), '/dashboard/webhooks'),
    fields: { url: 'https://receiver.example/hook', events: ['order.placed', 'order.shipped'], description: 'after a while' },
    made: webhookCount,
  },
  '/dashboard/webhooks/:id/rotate-secret': {
    who: customer,
    prepare: async (signed) => {
      const id = await createWebhook(signed);
      await signed.browser.get(`/dashboard/webhooks/${id}`);
      return `/dashboard/webhooks/${id}/rotate-secret`;
    },
    fields: {},
    made: async ({ accountId }) => (await db().selectFrom('webhooks').select('secret_ciphertext').where('account_id', '=', accountId).executeTakeFirstOrThrow()).secret_ciphertext,
  },
};

describe('credential actions past the step-up window', () => {
  it('has a case for every action of the table', () => {
    expect(Object.keys(CASES).sort()).toEqual(CREDENTIAL_ACTIONS.map((action) => action.url).sort());
  });

  for (const action of CREDENTIAL_ACTIONS) {
    it(`${action.url}: asks for the password, makes nothing without the right one, goes through with it`, async () => {
      const test = CASES[action.url]!;
      const signed = await test.who();
      const path = await test.prepare(signed);
      stale();
      const before = await test.made(signed);

      const asked = await signed.browser.post(path, test.fields);
      expect(asked.status, asked.html).toBe(200);
      expect(asked.html).toContain('enter your password again');
      expect(asked.html).toContain(`action="${path}"`);
      expect(asked.html).not.toContain('id="revealed-secret"');
      expect(await test.made(signed)).toEqual(before);

      const wrong = await signed.browser.post(path, { ...test.fields, password: 'not the password at all' });
      expect(wrong.status).toBe(401);
      expect(await test.made(signed)).toEqual(before);

      // The confirmation page posts the form again: its hidden fields and the password.
      const hidden = [...asked.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].filter(([, name]) => name !== '_csrf').map(([, name, value]) => [name!, value!.replaceAll('&#39;', "'").replaceAll('&amp;', '&')] as const);
      const again: Record<string, string[]> = {};
      for (const [name, value] of hidden) (again[name] ??= []).push(value);
      expect(again).toEqual(Object.fromEntries(Object.entries(test.fields).map(([name, value]) => [name, [value].flat()])));
      const right = await signed.browser.post(path, { ...again, password: signed.password });
      expect(right.status, right.html).toBe(303);
      expect(await test.made(signed)).not.toEqual(before);
    });
  }

  it('does not ask within the window', async () => {
    const signed = await customer();
    const path = await CASES['/dashboard/keys']!.prepare(signed);
    expect((await signed.browser.post(path, CASES['/dashboard/keys']!.fields)).status).toBe(303);
  });
});

describe('the guard is set from the table', () => {
  const context = {} as DashboardContext;
  const noop = async () => 'ok';

  it('stops the app on an unsafe dashboard route in neither list', async () => {
    const app = Fastify();
    guardCredentialActions(app, context);
    expect(() => app.post('/dashboard/keys/:id/reveal', noop)).toThrow(/neither CREDENTIAL_ACTIONS nor OTHER_ACTIONS/);
    await app.close();
  });

  it('stops the app when a listed action matched no route', async () => {
    const app = Fastify();
    const complete = guardCredentialActions(app, context, { actions: [{ url: '/dashboard/keys', title: 't', question: 'q', cancel: '/' }, { url: '/dashboard/gone', title: 't', question: 'q', cancel: '/' }], others: [] });
    app.post('/dashboard/keys', noop);
    expect(complete).toThrow(/\/dashboard\/gone/);
    await app.close();
  });

});
