import type { BrowserSession } from '../../kernel/browser-session.js';
import { ServiceUnavailableError, TooManyRequestsError } from '../../kernel/errors.js';
import type { Scope } from '../../kernel/scopes.js';
import type { BrowserSessionService, RegisteredClient } from '../identity/identity.module.js';
import type { ConsentBinding } from './oauth.interaction.js';
import type { AuthorizationParams } from './oauth.rules.js';
import type { Accepted, AuthorizationServer } from './oauth.service.js';

/** What the sign-in and consent pages show: who asks, for which scopes, for which request. */
export interface SignInForm {
  clientName: string;
  scopes: readonly Scope[];
  params: AuthorizationParams;
}

/** One request to the authorization endpoint: the opening GET (no fields) or a posted step (its CSRF token already checked). */
export interface AuthorizeRequest {
  params: AuthorizationParams;
  fields?: Record<string, string>;
  /** The browser's sign-in (the dashboard's: one sign-in serves both), if any. */
  session: BrowserSession | null;
  ip: string;
}

/** What the browser is answered: a page, or the way back to the client. `newSession`: a sign-in the browser must be given. */
export type AuthorizeStep =
  | { show: 'error'; status: number; message: string }
  | { show: 'login'; status: number; form: SignInForm; redirectOrigin: string; error?: string; headers?: Record<string, string> }
  | { show: 'consent'; form: SignInForm & { username: string; interaction: string }; redirectOrigin: string; newSession?: { token: string; session: BrowserSession } }
  | { show: 'redirect'; location: string };

/** Where this request's flow stands once the request itself is judged acceptable. */
interface Flow {
  request: AuthorizeRequest;
  verdict: Accepted;
  client: RegisteredClient;
  form: SignInForm;
  redirectOrigin: string;
  mode: 'query' | 'fragment';
}

/**
 * The authorization endpoint's sign-in and consent (decisions.md §6, issue 19): the request is
 * judged; a browser already signed in (dashboard or an earlier flow) goes straight to consent,
 * others sign in first, which opens the same session the dashboard uses; consent is checked
 * against the session and the exact request shown, then the browser goes back to the client.
 */
export class SignInService {
  constructor(private readonly options: { server: AuthorizationServer; sessions: BrowserSessionService; binding: ConsentBinding }) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeStep> {
    const { server } = this.options;
    const { params } = request;
    const { verdict, client } = await server.judge(params);
    if (verdict.outcome === 'refuse' || !client) return { show: 'error', status: 400, message: verdict.outcome === 'refuse' ? verdict.description : 'Unknown client.' };
    if (verdict.outcome === 'redirect_error') return { show: 'redirect', location: server.errorLocation(verdict.redirectUri, verdict.responseMode, verdict.error, verdict.description, params.state) };
    const flow: Flow = {
      request,
      verdict,
      client,
      form: { clientName: client.name, scopes: verdict.scopes, params },
      redirectOrigin: new URL(verdict.redirectUri).origin,
      mode: verdict.responseType === 'token' ? 'fragment' : 'query',
    };
    const { fields, session } = request;
    if (!fields) return session ? this.#consentPage(flow, session) : { show: 'login', status: 200, form: flow.form, redirectOrigin: flow.redirectOrigin };
    if (fields.step === 'login') return this.#login(flow, fields);
    if (fields.step === 'consent') return this.#consent(flow, fields);
    return { show: 'error', status: 400, message: 'The form is incomplete. Start again from the application.' };
  }

  #consentPage(flow: Flow, session: BrowserSession, newSession?: { token: string; session: BrowserSession }): AuthorizeStep {
    const granted = this.options.server.scopesForUser(flow.form.params, flow.client, session.role);
    if ('problem' in granted) return this.#back(flow, 'invalid_scope', granted.problem);
    const interaction = this.options.binding.field(session.id, flow.form.params);
    return { show: 'consent', form: { ...flow.form, scopes: granted.scopes, username: session.username, interaction }, redirectOrigin: flow.redirectOrigin, ...(newSession && { newSession }) };
  }

  async #login(flow: Flow, fields: Record<string, string>): Promise<AuthorizeStep> {
    const loginPage = (status: number, error: string, headers?: Record<string, string>): AuthorizeStep => ({ show: 'login', status, form: flow.form, redirectOrigin: flow.redirectOrigin, error, ...(headers && { headers }) });
    let outcome;
    try {
      outcome = await this.options.sessions.signIn(fields.username ?? '', fields.password ?? '', flow.request.ip);
    } catch (error) {
      // Over the login limit (429), or the limit cannot be checked (503, Redis away): the form again, saying so.
      if (!(error instanceof TooManyRequestsError || error instanceof ServiceUnavailableError)) throw error;
      return loginPage(error.status, error.message, error.headers);
    }
    if (!outcome.signedIn) return loginPage(401, 'Invalid username or password.');
    return this.#consentPage(flow, outcome.session, { token: outcome.token, session: outcome.session });
  }

  async #consent(flow: Flow, fields: Record<string, string>): Promise<AuthorizeStep> {
    const { server, binding } = this.options;
    const session = flow.request.session;
    const { params } = flow.form;
    if (!session || !binding.matches(session.id, params, fields.interaction)) {
      return { show: 'error', status: 403, message: 'This consent form has expired or is not yours. Start again from the application.' };
    }
    if (fields.decision !== 'approve') return this.#back(flow, 'access_denied', 'The user denied access.');
    const granted = server.scopesForUser(params, flow.client, session.role);
    if ('problem' in granted) return this.#back(flow, 'invalid_scope', granted.problem);
    const user = { id: session.accountId, username: session.username, role: session.role };
    return { show: 'redirect', location: await server.approve(user, flow.client, flow.verdict, granted.scopes, params) };
  }

  /** An error sent back to the client, in the response mode of the grant asked for. */
  #back(flow: Flow, error: string, description: string): AuthorizeStep {
    return { show: 'redirect', location: this.options.server.errorLocation(flow.verdict.redirectUri, flow.mode, error, description, flow.form.params.state) };
  }
}
