import type { TestApp } from './app.js';

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  /** Where a 303 sends the browser. */
  location: string | null;
}

/**
 * A browser without JavaScript: keeps cookies, reads each page's CSRF field and posts forms
 * with it, follows nothing by itself (tests look at each 303).
 */
export class FormBrowser {
  readonly cookies = new Map<string, string>();
  csrf: string | undefined;

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: string, path: string, body?: URLSearchParams, headers: Record<string, string> = {}): Promise<Page> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(this.cookies.size > 0 && { cookie: this.cookieHeader() }), ...(body && { 'content-type': 'application/x-www-form-urlencoded' }), ...headers },
      body,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const html = await response.text();
    const field = /name="_csrf" value="([^"]+)"/.exec(html);
    if (field) this.csrf = field[1];
    return { status: response.status, headers: response.headers, html, location: response.headers.get('location') };
  }

  get(path: string): Promise<Page> {
    return this.request('GET', path);
  }

  /** Posts a form with the CSRF token of the last page read (or `csrf` if given; `null` sends none), unless `fields` carry their own. */
  post(path: string, fields: Record<string, string | string[]> = {}, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<Page> {
    const body = new URLSearchParams();
    const token = options.csrf === undefined ? this.csrf : options.csrf;
    if (token !== null && token !== undefined && !('_csrf' in fields)) body.append('_csrf', token);
    for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
    return this.request('POST', path, body, options.headers);
  }

  async signIn(username: string, password: string): Promise<Page> {
    await this.get('/dashboard/login');
    return this.post('/dashboard/login', { username, password });
  }
}

let customers = 0;

/** A customer account signed up through the API, with the password to sign in with. */
export async function signUpCustomer(t: TestApp): Promise<{ username: string; password: string; accountId: number }> {
  const username = `dash${++customers}_${process.pid}`;
  const password = 'correct horse battery staple 42';
  const res = await t.http.post('/v2/customer', { json: { username, email: `${username}@example.com`, password } });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
  const account = await t.database.db.selectFrom('accounts').select('id').where('username', '=', username).executeTakeFirstOrThrow();
  return { username, password, accountId: Number(account.id) };
}
