import { hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { KEY_LABELS, KeyRing, matchesAny, type KeyLabel } from '../../src/kernel/key-ring.js';
import { CursorCodec, INVALID_CURSOR, rowId } from '../../src/kernel/pagination.js';
import { SecretBox } from '../../src/kernel/secret-box.js';
import { ConsentBinding } from '../../src/modules/oauth/oauth.interaction.js';

const S1 = 'the-first-app-secret-of-this-deployment-0001';
const S2 = 'the-second-app-secret-after-the-rotation-0002';
const before = new KeyRing({ appSecret: S1 });
const during = new KeyRing({ appSecret: S2, appSecretPrevious: S1 });
const after = new KeyRing({ appSecret: S2 });

/**
 * Each label's derivation exactly as its site made it before the key ring (salt, info), so
 * what was made then (cursors, tokens, sealed webhook secrets) is still valid: written out
 * here by hand, not read from the ring.
 */
const BEFORE_THE_RING: Record<KeyLabel, [salt: string, info: string]> = {
  'pagination-cursors': ['', 'fromagerie pagination cursor v1'],
  'login-tokens': ['', 'fromagerie login token v1'],
  'oauth-consent': ['', 'fromagerie oauth consent v2'],
  'page-csrf': ['fromagerie', 'page-csrf'],
  'webhook-secrets': ['fromagerie', 'webhook-secrets'],
  'dashboard-reveals': ['fromagerie', 'dashboard-reveals'],
};

const refusal = (run: () => unknown) => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('the key ring', () => {
  it('derives every label byte for byte as before, each label its own key', () => {
    expect(KEY_LABELS.sort()).toEqual(Object.keys(BEFORE_THE_RING).sort());
    for (const label of KEY_LABELS) {
      const [salt, info] = BEFORE_THE_RING[label];
      expect(before.keys(label).current.equals(Buffer.from(hkdfSync('sha256', S1, salt, info, 32))), label).toBe(true);
    }
    expect(new Set(KEY_LABELS.map((label) => before.keys(label).current.toString('hex'))).size).toBe(KEY_LABELS.length);
  });

  it('during a rotation: the current key first, the previous secret\'s second; none after', () => {
    expect(during.keys('login-tokens').current.equals(after.keys('login-tokens').current)).toBe(true);
    expect(during.keys('login-tokens').all.map((key) => key.toString('hex'))).toEqual([after.keys('login-tokens').current.toString('hex'), before.keys('login-tokens').current.toString('hex')]);
    expect(after.keys('login-tokens').all).toHaveLength(1);
  });

  it('cursors: made under the old secret, accepted during the rotation and refused after it; new ones under the current key', () => {
    const old = new CursorCodec(before.keys('pagination-cursors')).encode('webhook', 42);
    expect(new CursorCodec(during.keys('pagination-cursors')).decode('webhook', old, rowId)).toBe(42);
    expect(refusal(() => new CursorCodec(after.keys('pagination-cursors')).decode('webhook', old, rowId))).toBe(INVALID_CURSOR);
    const made = new CursorCodec(during.keys('pagination-cursors')).encode('webhook', 7);
    expect(new CursorCodec(after.keys('pagination-cursors')).decode('webhook', made, rowId)).toBe(7);
    expect(refusal(() => new CursorCodec(before.keys('pagination-cursors')).decode('webhook', made, rowId))).toBe(INVALID_CURSOR);
    // Another list's cursor is still refused under either key.
    expect(refusal(() => new CursorCodec(during.keys('pagination-cursors')).decode('order', old, rowId))).toBe(INVALID_CURSOR);
  });

  it('sealed secrets: open under either key during the rotation, say which sealed them, are sealed anew under the current key', () => {
    const old = new SecretBox(before.keys('webhook-secrets')).seal('whsec_old');
    const box = new SecretBox(during.keys('webhook-secrets'));
    expect(box.openWith(old)).toEqual({ text: 'whsec_old', current: false });
    const resealed = box.seal('whsec_old');
    expect(box.openWith(resealed)).toEqual({ text: 'whsec_old', current: true });
    expect(new SecretBox(after.keys('webhook-secrets')).open(resealed)).toBe('whsec_old');
    expect(refusal(() => new SecretBox(after.keys('webhook-secrets')).open(old))).toBe('unreadable sealed text');
    // A purpose's box opens no other's, under any key.
    expect(refusal(() => new SecretBox(during.keys('dashboard-reveals')).open(old))).toBe('unreadable sealed text');
  });

  it('the consent binding: a form shown before the rotation matches during it, not after', () => {
    const params = { response_type: 'code', client_id: 'cl_1', redirect_uri: 'https://app.example/cb', scope: 'read:orders', state: 's' };
    const field = new ConsentBinding(before.keys('oauth-consent')).field(3, params as never);
    expect(new ConsentBinding(during.keys('oauth-consent')).matches(3, params as never, field)).toBe(true);
    expect(new ConsentBinding(during.keys('oauth-consent')).matches(4, params as never, field)).toBe(false);
    expect(new ConsentBinding(after.keys('oauth-consent')).matches(3, params as never, field)).toBe(false);
  });

  it('matchesAny compares every candidate, of any length', () => {
    expect(matchesAny('abc', ['xyz', 'abc'])).toBe(true);
    expect(matchesAny('abc', ['abcd', 'ab', ''])).toBe(false);
    expect(matchesAny('', [])).toBe(false);
  });
});

describe('APP_SECRET_PREVIOUS', () => {
  const env = (extra: NodeJS.ProcessEnv) => ({ DATA_DIR: '/nonexistent-data-dir', APP_SECRET: S2, ...extra });
  it('is read beside APP_SECRET; unset, none is accepted', () => {
    expect(loadConfig(env({ APP_SECRET_PREVIOUS: S1 })).appSecretPrevious).toBe(S1);
    expect(loadConfig(env({})).appSecretPrevious).toBeUndefined();
  });

  it('refuses the start when it is APP_SECRET itself, or shorter than APP_SECRET may be', () => {
    expect(refusal(() => loadConfig(env({ APP_SECRET_PREVIOUS: S2 })))).toContain('APP_SECRET_PREVIOUS must be the secret APP_SECRET replaces, not APP_SECRET itself');
    expect(refusal(() => loadConfig(env({ APP_SECRET_PREVIOUS: 'too-short' })))).toMatch(/APP_SECRET_PREVIOUS/);
  });
});
