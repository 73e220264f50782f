import { describe, expect, it } from 'vitest';
import { redactQuery, redactText, redactValue } from '../../src/kernel/redaction.js';
import { answerBody, BODY_LIMIT, headerJson, redactBody } from '../../src/modules/request-log/request-log.capture.js';

const KEY = 'sk_live_Xq3v9Lm2aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';

describe('redaction: by name and by shape', () => {
  it('replaces every credential shape wherever it appears in text', () => {
    const text = `key ${KEY} secret whsec_MfKQ9r8GKYqrTwjUPD8I token oat_abcdefghijklmnopqrstu refresh ort_abcdefghijklmnopqrstu client cs_abcdefghijklmnopqrstuvwxyz jwt ${JWT}`;
    const out = redactText(text);
    for (const secret of [KEY.slice(8), 'MfKQ9r8G', 'abcdefghijklmnop', 'c2lnbmF0dXJl']) expect(out).not.toContain(secret);
    expect(out).toContain('sk_live_[redacted]');
    expect(out).toContain('whsec_[redacted]');
  });

  it('replaces fields named as passwords, secrets, tokens and keys at any depth, and keeps the rest', () => {
    expect(
      redactValue({ username: 'marie', password: 'hunter2 hunter2', currentPassword: 'old one', nested: [{ client_secret: 'abc', note: `see ${KEY}` }], code: 422, refresh_token: 'x', apiKey: 'y', key: 'z' }),
    ).toEqual({ username: 'marie', password: '[redacted]', currentPassword: '[redacted]', nested: [{ client_secret: '[redacted]', note: 'see sk_live_[redacted]' }], code: 422, refresh_token: '[redacted]', apiKey: '[redacted]', key: '[redacted]' });
  });

  it('replaces credential-named query parameters, and credential shapes in any parameter', () => {
    expect(redactQuery(`limit=2&api_key=abc&password=p&q=${KEY}`)).toBe('limit=2&api_key=[redacted]&password=[redacted]&q=sk_live_[redacted]');
  });

  it('redacts credential headers by name and cuts bodies at 16 KB with a note', () => {
    const headers = JSON.parse(headerJson({ authorization: `Bearer ${JWT}`, cookie: 'a=b', 'x-api-key': KEY, 'user-agent': 'curl/8', 'x-note': KEY }));
    expect(headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]', 'x-api-key': '[redacted]', 'user-agent': 'curl/8', 'x-note': 'sk_live_[redacted]' });
    // Custom credential headers, by their name's words; the idempotency key and request id are kept.
    const custom = JSON.parse(headerJson({ 'x-auth-token': 'abc123', 'x-session-token': 's', 'x-hub-signature-256': 'sha256=ff', 'x-access-key': 'k', 'x-csrf-token': 't', 'idempotency-key': 'order-1', 'x-request-id': 'r1', 'x-tokenizer': 'kept' }));
    expect(custom).toEqual({ 'x-auth-token': '[redacted]', 'x-session-token': '[redacted]', 'x-hub-signature-256': '[redacted]', 'x-access-key': '[redacted]', 'x-csrf-token': '[redacted]', 'idempotency-key': 'order-1', 'x-request-id': 'r1', 'x-tokenizer': 'kept' });
    const long = redactBody('x'.repeat(BODY_LIMIT + 10), false);
    expect(long.startsWith('x'.repeat(BODY_LIMIT))).toBe(true);
    expect(long).toContain(`[truncated: ${BODY_LIMIT + 10} characters in all]`);
    expect(answerBody(Buffer.from([0x89, 0x50]), 'image/png')).toBe('[2 bytes of image/png]');
    expect(answerBody(JSON.stringify({ secret: 'whsec_abc', id: 1 }), 'application/json')).toBe('{"secret":"[redacted]","id":1}');
  });
});
