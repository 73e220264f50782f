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

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeHtml(text: string): string {
  return text.replace(/&(?:#(\d+)|([a-z]+));/g, (whole, code: string | undefined, name: string | undefined) => (code ? String.fromCharCode(Number(code)) : (ENTITIES[name!] ?? whole)));
}

/** The cookies a response sets, as `name=value` pairs for a Cookie header (a cleared one dropped). */
export function cookiesFrom(response: Response, jar: Map<string, string> = new Map()): Map<string, string> {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0]!;
    const index = pair.indexOf('=');
    const name = pair.slice(0, index).trim();
    const value = pair.slice(index + 1).trim();
    if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
  return jar;
}

export function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
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
  const jar = cookiesFrom(first);
  expect(loginHtml).toContain('name="username"');
  const post = async (fields: Record<string, string>) => {
    const response = await fetch(new URL('/oauth/authorize', authorizationUrl), {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
      redirect: 'manual',
    });
    cookiesFrom(response, jar);
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  };
  const consent = await post({ ...hiddenFields(loginHtml), username, password });
  if (consent.status !== 200) return consent;
  expect(consent.html).toContain('name="decision"');
  return post({ ...hiddenFields(consent.html), decision });
}
