import { describe, expect, it } from 'vitest';
import { credentialChangeVerdict } from '../../src/modules/identity/credential-change.rules.js';

describe('credentialChangeVerdict', () => {
  const base = { passwordChanged: false, emailChanged: false, actorKind: 'login_token' as const, currentPasswordGiven: false };
  it('nothing to prove when neither the password nor the e-mail changes, whoever asks', () => {
    expect(credentialChangeVerdict({ ...base, actorKind: 'oauth_token' }).verdict).toBe('nothing_to_prove');
  });
  it('a third-party token is refused any change of either', () => {
    expect(credentialChangeVerdict({ ...base, emailChanged: true, actorKind: 'oauth_token' })).toEqual({ verdict: 'refused', reason: 'third_party_token' });
    expect(credentialChangeVerdict({ ...base, passwordChanged: true, actorKind: 'oauth_token', currentPasswordGiven: true })).toEqual({ verdict: 'refused', reason: 'third_party_token' });
  });
  it('an e-mail change is proven by the unchanged password', () => {
    expect(credentialChangeVerdict({ ...base, emailChanged: true, actorKind: 'api_key' }).verdict).toBe('proven');
  });
  it('a new password needs currentPassword, which is then checked', () => {
    expect(credentialChangeVerdict({ ...base, passwordChanged: true })).toEqual({ verdict: 'refused', reason: 'current_password_missing' });
    expect(credentialChangeVerdict({ ...base, passwordChanged: true, emailChanged: true, currentPasswordGiven: true }).verdict).toBe('check_current_password');
  });
});
