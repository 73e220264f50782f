import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';
import { authorizeThroughForms } from '../helpers/oauth.js';
import { ManualClock } from '../../src/kernel/clock.js';

// What a client sees of refresh-token rotation (issue 16 §4), over real HTTP: the token
// endpoint's answers, then whether the tokens still work on the API.
const REDIRECT = 'http://127.0.0.1:9/cb';
const PASSWORD = 'a long enough secret 4 tests';
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const JUST_USED = /just used/;

interface Tokens {
  access_token: string;
  refresh_token: string;
}

interface Party {
  t: TestApp;
  clientId: string;
  username: string;
}

let seq = 0;
// A long interval, so a reuse here is always within it however slow the machine.
let patient: TestApp;
// One second, on a clock the test moves past it.
let brief: TestApp;
const briefClock = new ManualClock();

beforeAll(async () => {
  [patient, brief] = await Promise.all([
    createAdminTestApp({ config: { oauthRefreshReuseIntervalSeconds: 60 } }).then(({ t }) => t),
    createAdminTestApp({ config: { oauthRefreshReuseIntervalSeconds: 1, clock: briefClock } }).then(({ t }) => t),
  ]);
});
afterAll(() => Promise.all([patient?.close(), brief?.close()]));

const post = (t: TestApp, path: string, fields: Record<string, string>) =>
  fetch(new URL(path, t.http.baseUrl), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });

async function answer(response: Response): Promise<{ status: number; body: Record<string, string> }> {
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/** A public client, a customer who consented to read:cheeses read:profile, and the tokens of that grant. */
async function grant(t: TestApp): Promise<Party & { tokens: Tokens }> {
  const staff = bearer(await t.key(['admin']));
  const registered = await t.http.post('/v2/oauth-clients', {
    headers: staff,
    json: { name: 'Refresh probe', type: 'public', redirectUris: [REDIRECT], grants: ['authorization_code', 'refresh_token'], scopes: ['read:cheeses', 'read:profile', 'write:profile'] },
  });
  expect(registered.status).toBe(201);
  const username = `refresh.${++seq}`;
  expect((await t.http.post('/v2/customer', { json: { username, email: `refresh${seq}@example.com`, password: PASSWORD } })).status).toBe(201);
  const clientId = registered.body.clientId as string;
  const url = new URL('/oauth/authorize', t.http.baseUrl);
  const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'read:cheeses read:profile', code_challenge: CHALLENGE, code_challenge_method: 'S256' };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const outcome = await authorizeThroughForms(url, username, PASSWORD);
  expect(outcome.status).toBe(303);
  const code = new URL(outcome.location!).searchParams.get('code')!;
  const exchanged = await answer(await post(t, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: VERIFIER }));
  expect(exchanged.status).toBe(200);
  return { t, clientId, username, tokens: exchanged.body as unknown as Tokens };
}

function refresh(party: Party, refreshToken: string, extra: Record<string, string> = {}) {
  return post(party.t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: party.clientId, ...extra }).then(answer);
}

/** The API status for this access token on the customer's own profile (read:profile). */
async function apiStatus(party: Party, accessToken: string): Promise<number> {
  return (await party.t.http.get(`/v2/customer/${party.username}`, { headers: bearer(accessToken) })).status;
}

/** Whether the refresh token still rotates, and the access token it then gets works. */
async function refreshWorks(party: Party, refreshToken: string): Promise<boolean> {
  const next = await refresh(party, refreshToken);
  return next.status === 200 && (await apiStatus(party, next.body.access_token!)) === 200;
}

describe('a refused refresh consumes nothing', () => {
  it('a wider scope is invalid_scope, and the same refresh token then works, as do the tokens already issued', async () => {
    const party = await grant(patient);
    const wider = await refresh(party, party.tokens.refresh_token, { scope: 'read:cheeses read:profile write:profile' });
    expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);
    const another = await refresh({ ...party, clientId: (await grant(patient)).clientId }, party.tokens.refresh_token);
    expect([another.status, another.body.error]).toEqual([400, 'invalid_grant']); // issued to another client

    const retried = await refresh(party, party.tokens.refresh_token);
    expect(retried.status).toBe(200);
    expect(retried.body.scope).toBe('read:cheeses read:profile');
    expect(await apiStatus(party, retried.body.access_token!)).toBe(200);
    expect(await apiStatus(party, party.tokens.access_token)).toBe(200);
  });
});

describe('concurrent refreshes of one token', () => {
  it('exactly one wins; the others are invalid_grant "just used"; the winner\'s tokens work', async () => {
    const party = await grant(patient);
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(party, party.tokens.refresh_token)));
    const winners = answers.filter((a) => a.status === 200);
    const losers = answers.filter((a) => a.status !== 200);
    expect(winners).toHaveLength(1);
    for (const loser of losers) {
      expect([loser.status, loser.body.error]).toEqual([400, 'invalid_grant']);
      expect(loser.body.error_description).toMatch(JUST_USED);
    }
    const won = winners[0]!.body;
    expect(await apiStatus(party, won.access_token!)).toBe(200);
    expect(await apiStatus(party, party.tokens.access_token)).toBe(200);
    expect(await refreshWorks(party, won.refresh_token!)).toBe(true);
  });
});

describe('a rotated refresh token presented again', () => {
  it('within the reuse interval: invalid_grant "just used", and the grant is untouched', async () => {
    const party = await grant(patient);
    const first = await refresh(party, party.tokens.refresh_token);
    expect(first.status).toBe(200);
    const again = await refresh(party, party.tokens.refresh_token);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect(again.body.error_description).toMatch(JUST_USED);
    expect(await apiStatus(party, first.body.access_token!)).toBe(200);
    expect(await refreshWorks(party, first.body.refresh_token!)).toBe(true);
  });

  it('after the interval: a replay, which revokes the whole grant', async () => {
    const party = await grant(brief);
    const first = await refresh(party, party.tokens.refresh_token);
    expect(first.status).toBe(200);
    const soon = await refresh(party, party.tokens.refresh_token);
    expect(soon.body.error_description).toMatch(JUST_USED);
    briefClock.advance(5_000);
    const replay = await refresh(party, party.tokens.refresh_token);
    expect([replay.status, replay.body.error]).toEqual([400, 'invalid_grant']);
    expect(replay.body.error_description).not.toMatch(JUST_USED);
    expect(await apiStatus(party, first.body.access_token!)).toBe(401);
    expect(await apiStatus(party, party.tokens.access_token)).toBe(401);
    const winnerRefresh = await refresh(party, first.body.refresh_token!);
    expect([winnerRefresh.status, winnerRefresh.body.error]).toEqual([400, 'invalid_grant']);
  });
});
