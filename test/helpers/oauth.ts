import { createServer } from 'node:net';
import { expect } from 'vitest';

/** A port free now, so an app can be told its public URL (the OAuth issuer) before it listens. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function unescapeHtml(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
}

/** The hidden fields of the page's form, as a browser would submit them. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescapeHtml(name!)] = unescapeHtml(value!);
  return fields;
}

export interface FormOutcome {
  status: number;
  location: string | null;
  html: string;
}

/**
 * Walks the authorization endpoint's pages as a browser does: GET the login page (and its CSRF
 * cookie), submit username and password, then submit the consent form with `decision`.
 * Stops at the first answer that is not the next page.
 */
export async function authorizeThroughForms(authorizationUrl: URL, username: string, password: string, decision: 'approve' | 'deny' = 'approve'): Promise<FormOutcome> {
  const first = await fetch(authorizationUrl, { redirect: 'manual' });
  const loginHtml = await first.text();
  if (first.status !== 200) return { status: first.status, location: first.headers.get('location'), html: loginHtml };
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
  expect(loginHtml).toContain('name="username"');
  const post = async (fields: Record<string, string>) => {
    const response = await fetch(new URL('/oauth/authorize', authorizationUrl), {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
      redirect: 'manual',
    });
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  };
  const consent = await post({ ...hiddenFields(loginHtml), username, password });
  if (consent.status !== 200) return consent;
  expect(consent.html).toContain('name="decision"');
  return post({ ...hiddenFields(consent.html), decision });
}
