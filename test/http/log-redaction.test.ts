import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { apiKey, bearer } from '../helpers/http.js';
import { redactUrl } from '../../src/http/log-redaction.js';

let t: TestApp;
const logLines: string[] = [];
beforeAll(async () => {
  t = await createTestApp({ logLines });
});
afterAll(() => t.close());

describe('credentials never reach a log line', () => {
  it('redacts keys sent in the URL, whatever the parameter, and the credential headers', async () => {
    const key = await t.key(['admin']);
    const urls = [
      `/v2/store/inventory?api_key=${key}`,
      `/v2/cheeses?limit=2&access_token=${encodeURIComponent(key)}`,
      `/v2/cheeses?q=${key}`,
      `/v2/cheeses/${key}`,
      `/v2/cheeses?password=hunter2hunter2&client_secret=s3cr3t-value`,
    ];
    for (const url of urls) await t.http.get(url, { headers: apiKey(key) });
    await t.http.get('/v2/store/inventory', { headers: bearer(key) });

    const logged = logLines.join('');
    expect(logged).toContain('/v2/store/inventory?api_key=[redacted]');
    expect(logged).toContain('access_token=[redacted]');
    expect(logged).toContain('password=[redacted]&client_secret=[redacted]');
    expect(logged).toContain('/v2/cheeses/sk_test_[redacted]');
    expect(logged).not.toContain(key);
    expect(logged).not.toContain(key.slice(8, 30));
    expect(logged).not.toContain('hunter2hunter2');
    expect(logged).not.toContain('s3cr3t-value');
  });

  it('leaves every other parameter as sent', () => {
    expect(redactUrl('/v2/cheeses?q=comte&sort=-name&keywords=x')).toBe('/v2/cheeses?q=comte&sort=-name&keywords=x');
    expect(redactUrl('/v2/cheeses?%74oken=abc&flag')).toBe('/v2/cheeses?%74oken=[redacted]&flag');
  });
});
