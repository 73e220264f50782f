import type { FieldError } from '../../kernel/errors.js';
import type { OAuthClientType } from './identity.table.js';

export const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials', 'implicit'] as const;
export type Grant = (typeof GRANTS)[number];

export interface ClientRegistration {
  type: OAuthClientType;
  redirectUris: string[];
  grants: Grant[];
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Why a redirect URI is refused, or null. Absolute, no fragment (RFC 6749 §3.1.2), https, or
 * http on a loopback address for native apps (RFC 8252 §7.3). Matched exactly at authorization.
 */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must be https (http only on a loopback address)';
}

/** Every problem with a registration, by field; empty when acceptable. */
export function registrationProblems(client: ClientRegistration): FieldError[] {
  const problems: FieldError[] = [];
  client.redirectUris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) problems.push({ field: `redirectUris.${i}`, message: problem });
  });
  const redirects = client.grants.includes('authorization_code') || client.grants.includes('implicit');
  if (redirects && client.redirectUris.length === 0) problems.push({ field: 'redirectUris', message: 'authorization_code and implicit need at least one' });
  // A public client cannot keep a secret, so it has none to authenticate with.
  if (client.type === 'public' && client.grants.includes('client_credentials')) problems.push({ field: 'grants', message: 'a public client cannot use client_credentials' });
  if (client.grants.includes('refresh_token') && !client.grants.includes('authorization_code')) {
    problems.push({ field: 'grants', message: 'refresh_token comes with authorization_code' });
  }
  return problems;
}
