import { randomBytes } from 'node:crypto';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { BruteForceGuard } from '../../kernel/brute-force.js';
import type { Role, Scope } from '../../kernel/scopes.js';
import type { LoginService, OAuthClientService, RegisteredClient } from '../identity/identity.module.js';
import type { OAuthTokenRepository } from './oauth-token.repository.js';
import type { OAuthTokenResolver } from './oauth-token.resolver.js';
import { createModel, hashToken, TOKEN_PREFIX, type OAuthUser } from './oauth.model.js';
import { authorizationResponseUri, judgeAuthorizationRequest, scopesFor, type AuthorizationParams, type AuthorizationVerdict } from './oauth.rules.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
export const AUTHORIZATION_CODE_TTL_S = 120;

/** An OAuth answer for the HTTP layer to send as is (RFC 6749 §5.1/§5.2, RFC 7009 §2.2). */
export interface ProtocolResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

export type Accepted = Extract<AuthorizationVerdict, { outcome: 'accept' }>;

/** An RFC 6749 §5.2 error answer. */
export function protocolError(status: number, error: string, description: string): ProtocolResponse {
  return { status, headers: { 'cache-control': 'no-store' }, body: { error, error_description: description } };
}

/** A token request: the library's headers and form, and who sent it, for the brute-force guard. */
export interface TokenRequest {
  ip: string;
  /** From Basic credentials or the form. */
  clientId: string | undefined;
  headers: Record<string, string>;
  body: Record<string, string>;
}

/** A revocation request (RFC 7009): the client's credentials, from Basic or the form, and the token. */
export interface RevocationRequest {
  clientId: string | undefined;
  secret: string | undefined;
  token: string | undefined;
  /** The client sent an Authorization header: a refusal then carries a challenge (RFC 6749 §5.2). */
  sentAuthorization: boolean;
}

export interface AuthorizationServerOptions {
  tokens: OAuthTokenRepository;
  clients: OAuthClientService;
  logins: LoginService;
  resolver: OAuthTokenResolver;
  /** This deployment's public URL: the issuer (RFC 8414, RFC 9207). */
  issuer: string;
  /** See the model: within it a second use of a just-rotated refresh token is a race, after it a replay. */
  refreshReuseIntervalSeconds: number;
  log: (message: string, details: Record<string, unknown>) => void;
  /** Limits guessing client secrets at the token endpoint (the limits module). */
  bruteForce: BruteForceGuard;
  clock?: Clock;
}

/**
 * The authorization server. @node-oauth/oauth2-server does the code grant (with PKCE), client
 * credentials and refresh tokens; what it lacks is written here: the implicit grant, RFC 7009
 * revocation and RFC 8414 metadata.
 */
export class AuthorizationServer {
  readonly #tokenEndpoint: OAuth2Server;
  readonly #authorizeEndpoint: OAuth2Server;

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  constructor(private readonly options: AuthorizationServerOptions) {
    const onReuse = (stored: { grantId: number; clientId: string; accountId: number }) => {
      options.resolver.forget({ grantId: stored.grantId });
      options.log('OAuth code or refresh token used twice: its whole grant is revoked', { grantId: stored.grantId, clientId: stored.clientId, accountId: stored.accountId });
    };
    const common = {
      accessTokenLifetime: ACCESS_TOKEN_TTL_S,
      refreshTokenLifetime: REFRESH_TOKEN_TTL_S,
      authorizationCodeLifetime: AUTHORIZATION_CODE_TTL_S,
      allowExtendedTokenAttributes: false,
      // Public clients refresh with their client_id alone; confidential ones must still authenticate (the model checks).
      requireClientAuthentication: { refresh_token: false },
      alwaysIssueNewRefreshToken: true,
    };
    const model = { tokens: options.tokens, clients: options.clients, onReuse, reuseIntervalMs: options.refreshReuseIntervalSeconds * 1000, accessTokenTtlMs: ACCESS_TOKEN_TTL_S * 1000, clock: options.clock };
    this.#tokenEndpoint = new OAuth2Server({ ...common, model: createModel(model, true) });
    this.#authorizeEndpoint = new OAuth2Server({ ...common, model: createModel(model, false) });
  }

  get issuer(): string {
    return this.options.issuer;
  }

  async judge(params: AuthorizationParams): Promise<{ verdict: AuthorizationVerdict; client: RegisteredClient | undefined }> {
    const client = params.client_id ? await this.options.clients.find(params.client_id) : undefined;
    return { verdict: judgeAuthorizationRequest(params, client), client };
  }

  verifyLogin(username: string, password: string): Promise<{ id: number; username: string; role: Role } | undefined> {
    return this.options.logins.verify(username, password);
  }

  /** The scopes this user can grant to the request, or why not (`admin` is for staff). */
  scopesForUser(params: AuthorizationParams, client: RegisteredClient, role: Role): { scopes: Scope[] } | { problem: string } {
    return scopesFor(params.scope, client, role);
  }

  /** The authorization response for an error, with `state` and `iss` (RFC 9207). */
  errorLocation(redirectUri: string, mode: 'query' | 'fragment', error: string, description: string, state: string | undefined): string {
    return authorizationResponseUri(redirectUri, mode, { error, error_description: description, state, iss: this.options.issuer });
  }

  /** The user approved: a code (through the library, which stores the PKCE challenge) or, for the implicit grant, a token. */
  async approve(user: { id: number; username: string; role: Role }, client: RegisteredClient, accepted: Accepted, scopes: Scope[], params: AuthorizationParams): Promise<string> {
    const oauthUser: OAuthUser = { accountId: user.id, username: user.username, role: user.role };
    if (accepted.responseType === 'token') return this.#implicit(oauthUser, client, accepted.redirectUri, scopes, params.state);
    const body: Record<string, string> = { response_type: 'code', client_id: client.clientId, redirect_uri: accepted.redirectUri, scope: scopes.join(' ') };
    if (params.state !== undefined) body.state = params.state;
    if (params.code_challenge !== undefined) Object.assign(body, { code_challenge: params.code_challenge, code_challenge_method: params.code_challenge_method });
    const request = new OAuth2Server.Request({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: {}, body });
    const response = new OAuth2Server.Response({ headers: {} });
    await this.#authorizeEndpoint.authorize(request, response, { authenticateHandler: { handle: () => oauthUser }, allowEmptyState: true });
    const location = new URL(String(response.get('location')));
    location.searchParams.set('iss', this.options.issuer);
    return location.toString();
  }

  /** RFC 6749 §4.2: the token in the fragment, no refresh token. RFC 9700 §2.1.2 advises against this grant; Form A lists it. */
  async #implicit(user: OAuthUser, client: RegisteredClient, redirectUri: string, scopes: Scope[], state: string | undefined): Promise<string> {
    const now = this.#clock.date();
    const token = `${TOKEN_PREFIX.access}${randomBytes(32).toString('base64url')}`;
    const { tokens } = this.options;
    const grantId = await tokens.createGrant({ clientRowId: client.id, accountId: user.accountId, scopes: scopes.join(' '), now: now.toISOString() });
    const expiresAt = new Date(now.getTime() + ACCESS_TOKEN_TTL_S * 1000).toISOString();
    await tokens.insertToken({ grantId, kind: 'access_token', tokenHash: hashToken(token), scopes: scopes.join(' '), expiresAt, now: now.toISOString() });
    return authorizationResponseUri(redirectUri, 'fragment', {
      access_token: token,
      token_type: 'Bearer',
      expires_in: String(ACCESS_TOKEN_TTL_S),
      scope: scopes.join(' '),
      state,
      iss: this.options.issuer,
    });
  }

  /** POST /oauth/token: every grant but implicit, by the library; a failure counts against the client id and the address. */
  async token(request: TokenRequest): Promise<ProtocolResponse> {
    const attempt = await this.options.bruteForce('token', request.ip, request.clientId);
    const grant = request.body.grant_type;
    if (grant === 'implicit' || grant === 'password') return protocolError(400, 'unsupported_grant_type', `The ${grant} grant is not served at the token endpoint.`);
    const response = await this.#token(request.headers, request.body);
    if (response.status === 200) await attempt.succeeded();
    return response;
  }

  async #token(headers: Record<string, string>, body: Record<string, string>): Promise<ProtocolResponse> {
    const request = new OAuth2Server.Request({ method: 'POST', headers, query: {}, body });
    const response = new OAuth2Server.Response({ headers: {} });
    try {
      await this.#tokenEndpoint.token(request, response);
    } catch (error) {
      // RFC 6749 §5.2, from the library's error: its `name` is the error code, `code` the status.
      if (!(error instanceof OAuth2Server.OAuthError) || error.code >= 500) return this.#serverError(error);
      const refused: ProtocolResponse = { status: error.code, headers: { ...NO_STORE }, body: { error: error.name, error_description: error.message } };
      const challenge = response.get('www-authenticate');
      if (challenge) refused.headers['www-authenticate'] = String(challenge);
      return refused;
    }
    return { status: response.status ?? 200, headers: { ...(response.headers ?? {}), ...NO_STORE }, body: response.body as Record<string, unknown> };
  }

  /**
   * POST /oauth/revoke (RFC 7009): the client authenticates as at the token endpoint (RFC 6749
   * §2.3.1, which the library does not cover here). A refresh token (or code) revokes its whole
   * grant; an access token, itself, and its grant when no usable token of it is left. An unknown token, or one of another client, is answered 200
   * and left alone (§2.2).
   */
  async revoke(request: RevocationRequest): Promise<ProtocolResponse> {
    const { tokens, resolver, clients } = this.options;
    const client = request.clientId ? await clients.authenticate(request.clientId, request.secret) : undefined;
    if (!client) {
      const refused = protocolError(401, 'invalid_client', 'Client authentication failed.');
      if (request.sentAuthorization) refused.headers['www-authenticate'] = 'Basic realm="oauth"';
      return refused;
    }
    const token = request.token;
    if (!token) return protocolError(400, 'invalid_request', 'The token parameter is required.');
    const stored = await tokens.findByHash(hashToken(token));
    if (stored && stored.clientId === client.clientId && !stored.revoked) {
      const now = this.#clock.iso();
      if (stored.kind === 'access_token') {
        const grantEnded = await tokens.revokeAccessToken(stored.id, stored.grantId, now);
        resolver.forget(grantEnded ? { grantId: stored.grantId } : { tokenId: stored.id });
      } else {
        await tokens.revokeGrant(stored.grantId, now);
        resolver.forget({ grantId: stored.grantId });
      }
    }
    return { status: 200, headers: NO_STORE, body: undefined };
  }

  /** RFC 8414: exactly what this server supports. */
  metadata(scopes: readonly string[]): Record<string, unknown> {
    const base = this.options.issuer;
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      scopes_supported: scopes,
      response_types_supported: ['code', 'token'],
      response_modes_supported: ['query', 'fragment'],
      grant_types_supported: ['authorization_code', 'implicit', 'client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${base}/docs`,
    };
  }

  #serverError(error: unknown): ProtocolResponse {
    this.options.log('OAuth token endpoint failed', { err: error instanceof Error ? error.message : String(error) });
    return { status: 503, headers: { ...NO_STORE, 'retry-after': '1' }, body: { error: 'server_error', error_description: 'The authorization server cannot answer now; retry shortly.' } };
  }
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

