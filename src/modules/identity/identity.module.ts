import type { Kysely } from 'kysely';
import type { ChangeBroadcast } from '../../db/change-broadcast.js';
import type { DB } from '../../db/schema.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { CredentialResolver } from '../../kernel/principal.js';
import { NO_GUARD, type BruteForceGuard } from '../../kernel/brute-force.js';
import type { Outbox } from '../outbox/outbox.module.js';
import { AccountRepository } from './account.repository.js';
import { AccountService } from './account.service.js';
import { apiKeyExpiryJob } from './api-key-expiry.job.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ApiKeyResolver } from './api-key.resolver.js';
import { apiKeyRoutes } from './api-key.routes.js';
import { ApiKeyService } from './api-key.service.js';
import { LoginSessionRepository } from './login-session.repository.js';
import { BrowserSessionRepository } from './browser-session.repository.js';
import { BrowserSessionService, type BrowserSessionSettings } from './browser-session.service.js';
import { CredentialRevocations } from './credential-revocations.js';
import { LoginTokenResolver } from './login-token.resolver.js';
import { loginRoutes } from './login.routes.js';
import { LoginService } from './login.service.js';
import { OAuthClientRepository } from './oauth-client.repository.js';
import { oauthClientRoutes } from './oauth-client.routes.js';
import { accountPlanRoutes } from './account-plan.routes.js';
import { OAuthClientService } from './oauth-client.service.js';
import type { AccountDirectory, OAuthClientDirectory } from './identity.ports.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import type { Keys } from '../../kernel/key-ring.js';
export { generatePassword } from './password.hash.js';

export type { AccountService } from './account.service.js';
export { MAX_ACTIVE_KEYS, ROLL_GRACE_SECONDS, type ApiKeyService, type RollGraceSeconds } from './api-key.service.js';
export { keyState, type KeyState } from './api-key.rules.js';
export { CreateApiKeyBody, ScopeSchema } from './api-key.schema.js';
export { OAuthClientInput } from './oauth-client.schema.js';
export type { ApiKeyRecord } from './api-key.repository.js';
export type { OAuthClientService, RegisteredClient } from './oauth-client.service.js';
export type { LoginService } from './login.service.js';
export type { BrowserSession, BrowserSessionService, BrowserSessionSettings } from './browser-session.service.js';
export { GRANTS, type Grant } from './oauth-client.rules.js';
export type { CredentialRevocations, Revocation, RevocationHandler } from './credential-revocations.js';
export type { AccountDirectory, AccountFacts, OAuthClientDirectory, OAuthClientName } from './identity.ports.js';

export interface IdentityOptions {
  db: Kysely<DB>;
  environment: CheeseEnv;
  /** How long a resolved API key or login token is trusted without a lookup (0 = never). */
  authCacheTtlMs: number;
  /** The key ring's 'login-tokens' keys: login tokens are signed with the current one. */
  loginTokenKeys: Keys;
  /** This deployment's public URL: the issuer of its tokens. */
  publicUrl: string;
  loginTokenTtlSeconds: number;
  /** scrypt's N for new password hashes: PASSWORD_COST unless a test app lowers it (config.passwordCost). */
  passwordCost?: number;
  outbox: Outbox;
  /** Limits login attempts (the limits module). */
  bruteForce?: BruteForceGuard;
  /** Browser sign-ins' lifetimes (the dashboard). */
  browserSessions: BrowserSessionSettings;
  /** Tells the other instances about revoked credentials, and them us (none: this instance only). */
  broadcast?: ChangeBroadcast;
  clock?: Clock;
}

export interface IdentityProvides {
  /** Every credential format this module understands; the HTTP auth plugin asks them in turn. */
  credentialResolvers: CredentialResolver[];
  accounts: AccountService;
  /** Reads of accounts (and a lock) in another module's transaction: no other module names the `accounts` table. */
  directory: AccountDirectory;
  apiKeys: ApiKeyService;
  oauthClients: OAuthClientService;
  /** Reads of OAuth clients in another module's statement or transaction: no other module names `oauth_clients`. */
  clientDirectory: OAuthClientDirectory;
  /** Checks a username and password (the authorization server's login page). */
  logins: LoginService;
  /** Browser sign-ins (the dashboard's cookie sessions). */
  browserSessions: BrowserSessionService;
  /** Every instance's credential caches drop a revoked credential; other modules' caches (OAuth tokens) register here. */
  revocations: CredentialRevocations;
}

export type IdentityModule = FeatureModule<IdentityProvides>;

/** Accounts and the credentials that stand for them: API keys and login tokens; the OAuth clients the oauth module serves (its access tokens are resolved there). */
export function createIdentityModule(options: IdentityOptions): IdentityModule {
  const { db, environment, outbox } = options;
  const clock = options.clock ?? systemClock;
  const keys = new ApiKeyRepository(db);
  const revocations = new CredentialRevocations(options.broadcast);
  const resolver = new ApiKeyResolver({ keys, environment, cacheTtlMs: options.authCacheTtlMs, clock });
  revocations.handle(resolver);
  const apiKeys = new ApiKeyService({ db, keys, environment, revocations, clock });
  const accounts = new AccountRepository(db, clock);
  const sessions = new LoginSessionRepository(db);
  const loginTokens = new LoginTokenResolver({ sessions, keys: options.loginTokenKeys, issuer: options.publicUrl, environment, cacheTtlMs: options.authCacheTtlMs, clock });
  revocations.handle(loginTokens);
  const logins = new LoginService({ accounts, sessions, tokens: loginTokens, revocations, tokenTtlSeconds: options.loginTokenTtlSeconds, passwordCost: options.passwordCost, clock });
  const clientRows = new OAuthClientRepository(db, clock);
  const oauthClients = new OAuthClientService(clientRows);
  const browserSessionRows = new BrowserSessionRepository(db);
  const browserSessions = new BrowserSessionService({ sessions: browserSessionRows, logins, bruteForce: options.bruteForce ?? NO_GUARD, environment, settings: options.browserSessions, clock });
  const accountService = new AccountService({ db, accounts, sessions, browserSessions: browserSessionRows, keys, revocations, passwordCost: options.passwordCost, clock });
  const directory: AccountDirectory = {
    usernamesOf: (executor, ids) => accounts.usernamesOf(executor, ids),
    idOfUsername: (executor, username) => accounts.idOfUsername(executor, username),
    findById: (executor, id) => accounts.findById(executor, id),
    findByUsername: (executor, username) => accounts.findFactsByUsername(executor, username),
    lock: (trx, id) => accounts.lock(trx, id),
  };
  const clientDirectory: OAuthClientDirectory = {
    namesOf: (executor, ids) => clientRows.namesOf(executor, ids),
    notRegisteredBy: (accountId, clientId) => clientRows.notRegisteredBy(accountId, clientId),
  };
  return {
    name: 'identity',
    routes: async (app) => {
      await app.register(apiKeyRoutes, { apiKeys });
      await app.register(loginRoutes, { logins, bruteForce: options.bruteForce ?? NO_GUARD });
      await app.register(oauthClientRoutes, { clients: oauthClients });
      await app.register(accountPlanRoutes, { accounts: accountService });
    },
    jobs: [apiKeyExpiryJob({ db, keys, outbox, clock }), { name: 'browser-session-pruning', everyMs: 3_600_000, run: (now) => browserSessions.prune(now) }],
    provides: { credentialResolvers: [resolver, loginTokens], accounts: accountService, directory, apiKeys, oauthClients, clientDirectory, logins, browserSessions, revocations },
  };
}
