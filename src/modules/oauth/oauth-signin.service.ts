import type { BruteForceGuard } from '../../kernel/brute-force.js';
import { TooManyRequestsError } from '../../kernel/errors.js';
import type { Scope } from '../../kernel/scopes.js';
import type { RegisteredClient } from '../identity/identity.module.js';
import { InteractionSigner } from './oauth.interaction.js';
import type { AuthorizationParams } from './oauth.rules.js';
import type { Accepted, AuthorizationServer } from './oauth.service.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';

/** What the login and consent pages show: who asks, for which scopes, and the form's CSRF field. */
export interface SignInForm {
  clientName: string;
  scopes: readonly Scope[];
  params: AuthorizationParams;
  csrf: string;
}

/** One request to the authorization endpoint: the opening GET (no fields) or a posted step. */
export interface AuthorizeRequest {
  params: AuthorizationParams;
  fields?: Record<string, string>;
  /** The CSRF cookie the browser sent, if any. */
  csrfCookie: string | undefined;
  ip: string;
}

/** What the browser is answered: a page, or the way back to the client. */
export type AuthorizeStep =
  | { show: 'error'; status: number; message: string }
  | { show: 'login'; status: number; form: SignInForm; redirectOrigin: string; error?: string; headers?: Record<string, string> }
  | { show: 'consent'; form: SignInForm & { username: string; interaction: string }; redirectOrigin: string }
  | { show: 'redirect'; location: string };

/** `newCsrfCookie`: a cookie the browser must be given, because it sent none that could be one. */
export type AuthorizeOutcome = AuthorizeStep & { newCsrfCookie?: string };

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** Where this request's flow stands once the request itself is judged acceptable. */
interface Flow {
  request: AuthorizeRequest;
  verdict: Accepted;
  client: RegisteredClient;
  /** The CSRF cookie the forms are bound to (the browser's, or the one it is being given). */
  cookie: string;
  form: SignInForm;
  redirectOrigin: string;
  mode: 'query' | 'fragment';
}

/**
 * The authorization endpoint's sign-in and consent (decisions.md §6): the request is judged,
 * then a login page; the login step checks the password (under the brute-force guard) and
 * shows the consent page with a signed interaction token; the consent step checks that token
 * and sends the browser back to the client with a code, a token, or an error.
 */
export class SignInService {
  constructor(private readonly options: { server: AuthorizationServer; signer: InteractionSigner; tokens: OAuthTokenRepository; bruteForce: BruteForceGuard }) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
    const { server, signer } = this.options;
    const { params } = request;
    const { verdict, client } = await server.judge(params);
    if (verdict.outcome === 'refuse' || !client) return { show: 'error', status: 400, message: verdict.outcome === 'refuse' ? verdict.description : 'Unknown client.' };
    if (verdict.outcome === 'redirect_error') return { show: 'redirect', location: server.errorLocation(verdict.redirectUri, verdict.responseMode, verdict.error, verdict.description, params.state) };
    const sent = request.csrfCookie;
    const cookie = sent !== undefined && COOKIE_VALUE.test(sent) ? sent : InteractionSigner.newCookieValue();
    const flow: Flow = {
      request,
      verdict,
      client,
      cookie,
      form: { clientName: client.name, scopes: verdict.scopes, params, csrf: signer.csrfField(cookie) },
      redirectOrigin: new URL(verdict.redirectUri).origin,
      mode: verdict.responseType === 'token' ? 'fragment' : 'query',
    };
    const step = await this.#step(flow);
    return cookie === sent ? step : { ...step, newCsrfCookie: cookie };
  }

  async #step(flow: Flow): Promise<AuthorizeStep> {
    const { fields } = flow.request;
    if (!fields) return { show: 'login', status: 200, form: flow.form, redirectOrigin: flow.redirectOrigin };
    // The cookie as sent, not the one being given: a form from a browser without it is refused.
    if (!this.options.signer.csrfMatches(flow.request.csrfCookie, fields.csrf_token)) {
      return { show: 'error', status: 403, message: 'This form has expired or was not sent from this page (cookies must be enabled). Start again from the application.' };
    }
    if (fields.step === 'login') return this.#login(flow, fields);
    if (fields.step === 'consent') return this.#consent(flow, fields);
    return { show: 'error', status: 400, message: 'The form is incomplete. Start again from the application.' };
  }

  async #login(flow: Flow, fields: Record<string, string>): Promise<AuthorizeStep> {
    const { server, signer, bruteForce } = this.options;
    const loginPage = (status: number, error: string, headers?: Record<string, string>): AuthorizeStep => ({ show: 'login', status, form: flow.form, redirectOrigin: flow.redirectOrigin, error, ...(headers && { headers }) });
    let attempt;
    try {
      attempt = await bruteForce('login', flow.request.ip, fields.username);
    } catch (error) {
      if (!(error instanceof TooManyRequestsError)) throw error;
      return loginPage(429, error.message, error.headers);
    }
    const user = fields.username && fields.password ? await server.verifyLogin(fields.username, fields.password) : undefined;
    if (!user) return loginPage(401, 'Invalid username or password.');
    await attempt.succeeded();
    const granted = server.scopesForUser(flow.form.params, flow.client, user.role);
    if ('problem' in granted) return this.#back(flow, 'invalid_scope', granted.problem);
    const interaction = await signer.consentToken(user.id, flow.form.params, flow.cookie);
    return { show: 'consent', form: { ...flow.form, scopes: granted.scopes, username: user.username, interaction }, redirectOrigin: flow.redirectOrigin };
  }

  async #consent(flow: Flow, fields: Record<string, string>): Promise<AuthorizeStep> {
    const { server, signer, tokens } = this.options;
    const { params } = flow.form;
    const accountId = await signer.consentingAccount(fields.interaction, params, flow.cookie);
    const user = accountId === undefined ? undefined : await tokens.accountById(accountId);
    if (!user) return { show: 'error', status: 403, message: 'This consent form has expired or is not yours. Start again from the application.' };
    if (fields.decision !== 'approve') return this.#back(flow, 'access_denied', 'The user denied access.');
    const granted = server.scopesForUser(params, flow.client, user.role);
    if ('problem' in granted) return this.#back(flow, 'invalid_scope', granted.problem);
    return { show: 'redirect', location: await server.approve(user, flow.client, flow.verdict, granted.scopes, params) };
  }

  /** An error sent back to the client, in the response mode of the grant asked for. */
  #back(flow: Flow, error: string, description: string): AuthorizeStep {
    return { show: 'redirect', location: this.options.server.errorLocation(flow.verdict.redirectUri, flow.mode, error, description, flow.form.params.state) };
  }
}
