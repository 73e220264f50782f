import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';

/**
 * Consent is given to what was shown: the consent form carries an HMAC of the signed-in
 * session and of the exact authorization request it showed, so a form whose request was
 * altered (wider scopes, another redirect) or that was made for another sign-in is refused.
 * (CSRF itself is the page machinery's: a token bound to the session, src/http/pages.ts.)
 */
export class ConsentBinding {
  readonly #key: Buffer;

  constructor(appSecret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', appSecret, '', 'fromagerie oauth consent v2', 32));
  }

  field(sessionId: number, params: AuthorizationParams): string {
    return createHmac('sha256', this.#key).update(`${sessionId}\n${requestDigest(params)}`).digest('base64url');
  }

  matches(sessionId: number, params: AuthorizationParams, given: string | undefined): boolean {
    if (!given) return false;
    const expected = Buffer.from(this.field(sessionId, params));
    const actual = Buffer.from(given);
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }
}

function requestDigest(params: AuthorizationParams): string {
  return createHash('sha256').update(JSON.stringify(AUTHORIZATION_PARAMS.map((name) => params[name] ?? null))).digest('base64url');
}
