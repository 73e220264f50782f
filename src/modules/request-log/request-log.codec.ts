import { isSecretHeader, REDACTED } from '../../kernel/redaction.js';
import type { RequestLogRow } from './request-log.repository.js';

/** The placeholder the command sends instead of any credential: the reader's own key, from the shell. */
export const API_KEY_PLACEHOLDER = '$FROMAGERIE_API_KEY';

/** Headers the command leaves out: the transport's own, the credential (sent as the placeholder) and the request id (a new request has its own). */
const LEFT_OUT = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'user-agent', 'x-request-id', 'authorization', 'x-api-key', 'cookie', 'transfer-encoding', 'keep-alive']);

/** What capture wrote instead of a body it did not keep (request-log.capture.ts). */
const NOT_KEPT = /^\[(multipart body not kept|\d+ bytes of .*|streamed body not kept)\]$/;

/** Quoted for a POSIX shell: single quotes, a quote inside as '\''. */
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * "Copy as curl" (issue 31): the request as kept, as a curl command anyone may paste. Every
 * secret is elided: the credential becomes `$FROMAGERIE_API_KEY` (in double quotes, so the
 * shell fills it in), any other secret header is left out, and the path, query and body are
 * the stored ones, which were redacted when recorded.
 */
export function curlOf(row: RequestLogRow, baseUrl: string): string {
  const url = `${baseUrl.replace(/\/$/, '')}${row.path}${row.query ? `?${row.query}` : ''}`;
  const lines = [`curl -X ${row.method} ${quoted(url)}`];
  const headers = JSON.parse(row.request_headers || '{}') as Record<string, string>;
  // With X-API-Key the request used that header; otherwise Authorization (the log holds only requests with a credential).
  lines.push('x-api-key' in headers ? `-H "X-API-Key: ${API_KEY_PLACEHOLDER}"` : `-H "Authorization: Bearer ${API_KEY_PLACEHOLDER}"`);
  for (const [name, value] of Object.entries(headers)) {
    if (LEFT_OUT.has(name.toLowerCase()) || isSecretHeader(name) || value.includes(REDACTED)) continue;
    lines.push(`-H ${quoted(`${name}: ${value}`)}`);
  }
  if (row.request_body !== null && !NOT_KEPT.test(row.request_body)) lines.push(`--data-raw ${quoted(row.request_body)}`);
  return lines.join(' \\\n  ');
}
