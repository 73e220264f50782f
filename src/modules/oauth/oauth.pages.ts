import { SCOPE_DESCRIPTIONS, type Scope } from '../../kernel/scopes.js';
import { AUTHORIZATION_PARAMS, type AuthorizationParams } from './oauth.rules.js';

/** The only stylesheet the pages use, served from /oauth/assets/oauth.css (the CSP allows 'self' only). */
export const STYLESHEET = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
button{margin:1rem .5rem 0 0;padding:.5rem 1rem}.error{color:#a00;border:1px solid #a00;padding:.5rem}ul{padding-left:1.2rem}code{background:#f3f3f3}`;

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Fromagerie</title><link rel="stylesheet" href="/oauth/assets/oauth.css"></head>
<body><main>${body}</main></body></html>`;
}

function hiddenFields(params: AuthorizationParams, csrf: string, extra: Record<string, string> = {}): string {
  const fields: Record<string, string | undefined> = { csrf_token: csrf, ...extra };
  for (const name of AUTHORIZATION_PARAMS) fields[name] = params[name];
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('\n');
}

function scopeList(scopes: readonly Scope[]): string {
  return `<ul>${scopes.map((scope) => `<li><code>${escape(scope)}</code>: ${escape(SCOPE_DESCRIPTIONS[scope])}</li>`).join('')}</ul>`;
}

export interface PageContext {
  clientName: string;
  scopes: readonly Scope[];
  params: AuthorizationParams;
  csrf: string;
}

export function loginPage(context: PageContext, error?: string): string {
  return page(
    'Sign in',
    `<h1>Sign in to Fromagerie</h1>
<p><strong>${escape(context.clientName)}</strong> asks for access to your account:</p>
${scopeList(context.scopes)}
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
${hiddenFields(context.params, context.csrf, { step: 'login' })}
<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(context: PageContext & { username: string; interaction: string }): string {
  return page(
    'Allow access?',
    `<h1>Allow ${escape(context.clientName)}?</h1>
<p>Signed in as <strong>${escape(context.username)}</strong>. <strong>${escape(context.clientName)}</strong> will be able to:</p>
${scopeList(context.scopes)}
<form method="post" action="/oauth/authorize">
${hiddenFields(context.params, context.csrf, { step: 'consent', interaction: context.interaction })}
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return page('Authorization failed', `<h1>This authorization request cannot be served</h1><p class="error" role="alert">${escape(message)}</p><p>Return to the application and start again.</p>`);
}

/** A rate limit reached on the way to the sign-in or consent page: when to come back (also the Retry-After header). */
export function limitPage(retryAfterSeconds: number): string {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  const wait = seconds < 120 ? `${seconds} second${seconds === 1 ? '' : 's'}` : `${Math.ceil(seconds / 60)} minutes (${seconds} seconds)`;
  return page(
    'Too many requests',
    `<h1>Too many requests</h1><p class="error" role="alert">Too many requests came from your address for now. Try again in ${escape(wait)}.</p><p>Then return to the application and start again, or reload this page.</p>`,
  );
}
