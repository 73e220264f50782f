/**
 * What never leaves the service readable: credentials and passwords, in log lines (the URL)
 * and in the request log (bodies, headers, query). Two nets: by the name a value travels
 * under, and by the shape of the value itself wherever it appears.
 */

export const REDACTED = '[redacted]';

/** Query parameters and fields whose value is a credential, by the names clients and libraries use for them. */
export const CREDENTIAL_NAME = /^(api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd|code|code[_-]?verifier|auth|authorization|signature|sig|client[_-]?assertion|assertion|cookie|set[_-]?cookie|x[_-]?api[_-]?key|proxy[_-]?authorization)$/i;
/** Any name that speaks of a password or a secret (current_password, newPassword, previousSecrets…). */
const SECRET_WORD = /pass(word|wd|phrase)|secret/i;

/** Credentials by their shape: API keys, webhook secrets, OAuth tokens, codes and client secrets, JWTs (login tokens). */
const SECRET_VALUES: ReadonlyArray<[RegExp, string]> = [
  [/sk_(live|test)_[A-Za-z0-9_-]+/g, 'sk_$1_[redacted]'],
  [/whsec_[A-Za-z0-9+/=_-]+/g, 'whsec_[redacted]'],
  [/\b(oat|ort|oac|cs)_[A-Za-z0-9_-]{16,}/g, '$1_[redacted]'],
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted jwt]'],
];
/** A cheap first look: text without any of these holds no credential shape. */
const MAY_HOLD_SECRET = /sk_|whsec_|oat_|ort_|oac_|cs_|eyJ/;

/**
 * Whether a value travelling under this name is a credential. A body's `code` is an error's
 * code far more often than an OAuth code (whose shape, `oac_…`, is caught anyway): in fields
 * it is kept.
 */
export function isSecretName(name: string, where: 'query' | 'field' = 'query'): boolean {
  if (where === 'field' && /^code$/i.test(name)) return false;
  return CREDENTIAL_NAME.test(name) || SECRET_WORD.test(name);
}

/**
 * Whether a header of this name carries a credential: the names above, and the custom ones
 * integrations send credentials under (`X-Auth-Token`, `X-Session-Token`, `X-Hub-Signature-256`,
 * `X-Access-Key`…): a token, auth, session, signature or credential word between dashes.
 * `Idempotency-Key` and `X-Request-Id` are not.
 */
export function isSecretHeader(name: string): boolean {
  return isSecretName(name) || /(^|[-_])(tokens?|auth|session|signature|credentials?|(api|access|private|secret)[-_]?key)([-_]|$)/i.test(name);
}

/** Text with every credential-shaped value replaced. */
export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_VALUES) out = out.replace(pattern, replacement);
  return out;
}

/** A parsed JSON value (or a form's fields) with secret-named fields and credential-shaped strings redacted. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) out[name] = isSecretName(name, 'field') && item !== null && item !== '' ? REDACTED : redactValue(item, depth + 1);
  return out;
}

/** A query string (without `?`): secret-named parameters and credential-shaped values redacted. */
export function redactQuery(query: string): string {
  if (query === '') return query;
  return redactText(
    query
      .split('&')
      .map((pair) => (pair.includes('=') && isSecretName(parameterName(pair)) ? `${pair.split('=', 1)[0]}=${REDACTED}` : pair))
      .join('&'),
  );
}

function parameterName(pair: string): string {
  const raw = pair.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}
