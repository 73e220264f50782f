import { isScope, ROLE_SCOPES, type Role, type Scope } from '../../kernel/scopes.js';

/** What a client asks for at /oauth/authorize, as sent (query or form). */
export interface AuthorizationParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

export const AUTHORIZATION_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

export interface ClientFacts {
  confidential: boolean;
  redirectUris: readonly string[];
  grants: readonly string[];
  scopes: readonly string[];
}

/** A request judged: refused without a redirect, refused back to the client, or accepted. */
export type AuthorizationVerdict =
  | { outcome: 'refuse'; description: string }
  | { outcome: 'redirect_error'; redirectUri: string; responseMode: 'query' | 'fragment'; error: string; description: string }
  | { outcome: 'accept'; redirectUri: string; responseType: 'code' | 'token'; scopes: Scope[] };

/** RFC 7636 §4.2: 43 to 128 characters of the unreserved set. */
const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * The scopes a request obtains: those asked (or, when none are, all the client may ask for),
 * each of them known, registered for the client and allowed to the user's role (`admin` is
 * for staff only). Anything beyond is refused rather than silently dropped.
 */
export function scopesFor(requested: string | undefined, client: Pick<ClientFacts, 'scopes'>, role: Role | null): { scopes: Scope[] } | { problem: string } {
  const asked = requested === undefined || requested.trim() === '' ? [...client.scopes] : requested.split(' ').filter(Boolean);
  const unknown = asked.filter((scope) => !isScope(scope));
  if (unknown.length > 0) return { problem: `Unknown scope: ${unknown.join(' ')}.` };
  const notRegistered = asked.filter((scope) => !client.scopes.includes(scope));
  if (notRegistered.length > 0) return { problem: `This client is not registered for: ${notRegistered.join(' ')}.` };
  const allowed: readonly string[] = role === null ? [] : ROLE_SCOPES[role];
  const beyondRole = role === null ? [] : asked.filter((scope) => !allowed.includes(scope));
  if (beyondRole.length > 0) return { problem: `Your account cannot grant: ${beyondRole.join(' ')}.` };
  return { scopes: [...new Set(asked)] as Scope[] };
}

/**
 * RFC 6749 §4.1.2.1 and §4.2.2.1: an unknown client or a redirect URI that does not match a
 * registered one exactly is never redirected to; every other problem is sent back to the
 * client's redirect URI. PKCE (S256 only) is required of public clients using the code flow.
 * The user's role is not known yet (null): role scopes are checked after login.
 */
export function judgeAuthorizationRequest(params: AuthorizationParams, client: ClientFacts | undefined): AuthorizationVerdict {
  if (!params.client_id) return { outcome: 'refuse', description: 'The request has no client_id.' };
  if (!client) return { outcome: 'refuse', description: 'No client is registered with this client_id.' };
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined) {
    if (client.redirectUris.length !== 1) return { outcome: 'refuse', description: 'redirect_uri is required: this client has several registered.' };
    redirectUri = client.redirectUris[0]!;
  } else if (!client.redirectUris.includes(redirectUri)) {
    return { outcome: 'refuse', description: 'redirect_uri does not match any URI registered for this client (matched exactly).' };
  }
  const responseType = params.response_type;
  const responseMode = responseType === 'token' ? 'fragment' : 'query';
  const back = (error: string, description: string): AuthorizationVerdict => ({ outcome: 'redirect_error', redirectUri: redirectUri!, responseMode, error, description });
  if (responseType !== 'code' && responseType !== 'token') return back('unsupported_response_type', 'response_type must be "code" or "token".');
  const grant = responseType === 'code' ? 'authorization_code' : 'implicit';
  if (!client.grants.includes(grant)) return back('unauthorized_client', `This client is not registered for the ${grant} grant.`);
  if (responseType === 'code') {
    const challenge = params.code_challenge;
    if (challenge === undefined) {
      if (!client.confidential) return back('invalid_request', 'code_challenge is required (PKCE with S256) for public clients.');
    } else {
      if (params.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.');
      if (!CODE_CHALLENGE.test(challenge)) return back('invalid_request', 'code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~].');
    }
  }
  const scopes = scopesFor(params.scope, client, null);
  if ('problem' in scopes) return back('invalid_scope', scopes.problem);
  return { outcome: 'accept', redirectUri, responseType, scopes: scopes.scopes };
}

/** Where the user agent goes with an authorization response: the query for code, the fragment for token. */
export function authorizationResponseUri(redirectUri: string, mode: 'query' | 'fragment', values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  const params = mode === 'query' ? url.searchParams : new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined) params.set(name, value);
  if (mode === 'fragment') url.hash = params.toString();
  return url.toString();
}
