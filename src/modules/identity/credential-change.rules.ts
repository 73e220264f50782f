import type { CredentialKind } from '../../kernel/principal.js';

/**
 * Who may change an account's password or e-mail (issue 16 §3). A bearer token alone is no
 * proof: whoever holds a stolen login token, an API key or a third-party app's token would
 * otherwise take the account over. The proof is the current password: the body's `password`
 * when it is unchanged, or `currentPassword` beside a new one.
 */
export interface CredentialChangeFacts {
  passwordChanged: boolean;
  emailChanged: boolean;
  /** The credential making the change. */
  actorKind: CredentialKind;
  /** `currentPassword` was sent (and is checked against the hash only when it is needed). */
  currentPasswordGiven: boolean;
}

export type CredentialChangeVerdict =
  | { verdict: 'nothing_to_prove' }
  | { verdict: 'proven' }
  | { verdict: 'check_current_password' }
  | { verdict: 'refused'; reason: 'third_party_token' | 'current_password_missing' };

export function credentialChangeVerdict(facts: CredentialChangeFacts): CredentialChangeVerdict {
  if (!facts.passwordChanged && !facts.emailChanged) return { verdict: 'nothing_to_prove' };
  // A third-party application never changes the credentials of the account it acts for.
  if (facts.actorKind === 'oauth_token') return { verdict: 'refused', reason: 'third_party_token' };
  // The body's password verified: that is the proof for an e-mail change.
  if (!facts.passwordChanged) return { verdict: 'proven' };
  if (!facts.currentPasswordGiven) return { verdict: 'refused', reason: 'current_password_missing' };
  return { verdict: 'check_current_password' };
}
