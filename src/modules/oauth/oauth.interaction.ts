import { createHash, createHmac } from 'node:crypto';
import { matchesAny, type Keys } from '../../kernel/key-ring.js';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';

/**
 * Consent is given to what was shown: the consent form carries an HMAC of the signed-in
 * session and of the exact authorization request it showed, so a form whose request was
 * altered (wider scopes, another redirect) or that was made for another sign-in is refused.
 * (CSRF itself is the page machinery's: a token bound to the session, src/http/pages.ts.)
 * Made under the key ring's current 'oauth-consent' key; a form shown before APP_SECRET was
 * rotated still matches under the previous one.
 */
export class ConsentBinding {
  constructor(private readonly keys: Keys) {}

  field(sessionId: number, params: AuthorizationParams): string {
    return fieldOf(this.keys.current, sessionId, params);
  }

  matches(sessionId: number, params: AuthorizationParams, given: string | undefined): boolean {
    if (!given) return false;
    return matchesAny(given, this.keys.all.map((key) => fieldOf(key, sessionId, params)));
  }
}

function fieldOf(key: Buffer, sessionId: number, params: AuthorizationParams): string {
  return createHmac('sha256', key).update(`${sessionId}\n${requestDigest(params)}`).digest('base64url');
}

function requestDigest(params: AuthorizationParams): string {
  return createHash('sha256').update(JSON.stringify(AUTHORIZATION_PARAMS.map((name) => params[name] ?? null))).digest('base64url');
}
