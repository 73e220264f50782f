import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';

export const CSRF_COOKIE = 'fromagerie_oauth_csrf';
const CONSENT_TTL_S = 600;
const AUDIENCE = 'fromagerie oauth consent';

/**
 * The login and consent forms' protection. CSRF: a random cookie (HttpOnly, SameSite=Lax, path
 * /oauth) and, in each form, its HMAC; a cross-site page can submit a form but cannot read the
 * cookie to make the field. Consent: the login step hands the consent form a short-lived signed
 * token naming the account, the exact authorization request and the CSRF cookie, so consent is
 * given only by who logged in, to what they were shown, in that browser.
 */
export class InteractionSigner {
  readonly #csrfKey: Buffer;
  readonly #consentKey: Uint8Array;

  constructor(appSecret: string) {
    this.#csrfKey = Buffer.from(hkdfSync('sha256', appSecret, '', 'fromagerie oauth csrf v1', 32));
    this.#consentKey = new Uint8Array(hkdfSync('sha256', appSecret, '', 'fromagerie oauth consent v1', 32));
  }

  static newCookieValue(): string {
    return randomBytes(32).toString('base64url');
  }

  csrfField(cookie: string): string {
    return createHmac('sha256', this.#csrfKey).update(cookie).digest('base64url');
  }

  csrfMatches(cookie: string | undefined, field: string | undefined): boolean {
    if (!cookie || !field) return false;
    const expected = Buffer.from(this.csrfField(cookie));
    const given = Buffer.from(field);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  async consentToken(accountId: number, params: AuthorizationParams, cookie: string): Promise<string> {
    return new SignJWT({ req: requestDigest(params), csrf: digest(cookie) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(accountId))
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${CONSENT_TTL_S}s`)
      .sign(this.#consentKey);
  }

  /** The account that logged in, if the token is genuine, fresh, for this request and this browser. */
  async consentingAccount(token: string | undefined, params: AuthorizationParams, cookie: string): Promise<number | undefined> {
    if (!token) return undefined;
    try {
      const { payload } = await jwtVerify(token, this.#consentKey, { algorithms: ['HS256'], audience: AUDIENCE });
      if (payload.req !== requestDigest(params) || payload.csrf !== digest(cookie)) return undefined;
      const accountId = Number(payload.sub);
      return Number.isSafeInteger(accountId) ? accountId : undefined;
    } catch {
      return undefined;
    }
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function requestDigest(params: AuthorizationParams): string {
  return digest(JSON.stringify(AUTHORIZATION_PARAMS.map((name) => params[name] ?? null)));
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const index = pair.indexOf('=');
    if (index > 0 && pair.slice(0, index).trim() === name) return pair.slice(index + 1).trim();
  }
  return undefined;
}
