import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { CredentialResolver } from '../../kernel/principal.js';
import { NO_GUARD, type BruteForceGuard } from '../../kernel/brute-force.js';
import type { AccountDirectory, AccountService, BrowserSessionService, CredentialRevocations, LoginService, OAuthClientDirectory, OAuthClientService } from '../identity/identity.module.js';
import { OAuthGrantRepository } from './oauth-grant.repository.js';
import { GrantEndings, type GrantsEndedListener } from './grant-endings.js';
import { grantRoutes } from './oauth-grant.routes.js';
import { OAuthGrantService } from './oauth-grant.service.js';
import { OAuthTokenRepository } from './oauth-token.repository.js';
import { OAuthTokenResolver } from './oauth-token.resolver.js';
import { ConsentBinding } from './oauth.interaction.js';
import { oauthPageRoutes } from './oauth-pages.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import { AuthorizationServer } from './oauth.service.js';
import { SignInService } from './oauth-signin.service.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import type { Keys } from '../../kernel/key-ring.js';

export interface OAuthOptions {
  db: Kysely<DB>;
  environment: CheeseEnv;
  authCacheTtlMs: number;
  /** The key ring's 'oauth-consent' keys: the consent form's binding to the request it showed. */
  consentKeys: Keys;
  /** The key ring's 'page-csrf' keys (src/http/pages.ts). */
  csrfKeys: Keys;
  /** The issuer: this deployment's public URL. */
  publicUrl: string;
  clients: OAuthClientService;
  /** Identity's reads of clients in our statements: the authorized-apps list. */
  clientDirectory: OAuthClientDirectory;
  logins: LoginService;
  accounts: AccountService;
  /** Identity's reads of accounts: who a token acts for. */
  directory: AccountDirectory;
  /** Seconds after a rotation in which the rotated-out refresh token is refused without revoking its grant. */
  refreshReuseIntervalSeconds: number;
  log: (message: string, details: Record<string, unknown>) => void;
  /** Limits the login page and the token endpoint (the limits module). */
  bruteForce?: BruteForceGuard;
  /** The one browser sign-in (the dashboard's), and its cookie's name. */
  sessions: BrowserSessionService;
  sessionCookie: string;
  /** Revocations reach every instance's credential caches (the identity module's). */
  revocations: CredentialRevocations;
  clock?: Clock;
}

export type { AuthorizedApp, OAuthGrantService } from './oauth-grant.service.js';
export type { GrantsEndedListener } from './grant-endings.js';

export interface OAuthProvides {
  /** Resolves OAuth access tokens (`oat_…`) on every route, beside API keys and login tokens. */
  credentialResolver: CredentialResolver;
  /** The applications an account authorized: listed, and revoked with all their tokens (the dashboard's "Authorized apps"). */
  grants: OAuthGrantService;
  /** Subscribes to grants ending (revoked, or about to be deleted), inside the transaction that ends them: what a grant created must not outlive it. */
  onGrantsEnded(listener: GrantsEndedListener): void;
}

export type OAuthModule = FeatureModule<OAuthProvides>;

const HOUR_MS = 3_600_000;

/** The OAuth 2.0 authorization server (decisions.md §6) over the clients identity registers. */
export function createOAuthModule(options: OAuthOptions): OAuthModule {
  const clock = options.clock ?? systemClock;
  const endings = new GrantEndings();
  const tokens = new OAuthTokenRepository(options.db, { accounts: options.directory, clientIdOf: (id) => options.clients.clientIdOf(id) }, endings);
  const resolver = new OAuthTokenResolver({ tokens, environment: options.environment, cacheTtlMs: options.authCacheTtlMs, revoked: (revocation) => options.revocations.revoked(revocation), clock });
  // A revoked grant or token, or a deleted account's or new password's, stops working on every instance at once.
  options.revocations.handle(resolver);
  // A new password ends every third-party grant of the account, in the change's transaction.
  options.accounts.onPasswordChange((trx, accountId, now) => tokens.revokeGrantsOf(trx, accountId, now));
  const bruteForce = options.bruteForce ?? NO_GUARD;
  const server = new AuthorizationServer({ tokens, clients: options.clients, logins: options.logins, resolver, issuer: options.publicUrl, refreshReuseIntervalSeconds: options.refreshReuseIntervalSeconds, log: options.log, bruteForce, clock });
  const signIn = new SignInService({ server, sessions: options.sessions, binding: new ConsentBinding(options.consentKeys) });
  const grants = new OAuthGrantService({ grants: new OAuthGrantRepository(options.db, options.clientDirectory, tokens), forget: (grantId) => resolver.forget({ grantId }), clock });
  return {
    name: 'oauth',
    routes: async (app) => {
      await app.register(grantRoutes, { grants, accounts: options.accounts });
    },
    rootRoutes: async (app) => {
      await app.register(oauthRoutes({ server }));
      await app.register(
        oauthPageRoutes({
          signIn,
          sessions: options.sessions,
          csrfKeys: options.csrfKeys,
          secureCookies: options.publicUrl.startsWith('https:'),
          sessionCookie: options.sessionCookie,
          cacheTemplates: options.environment === 'production',
        }),
      );
    },
    jobs: [
      {
        name: 'oauth-token-pruning',
        everyMs: HOUR_MS,
        // A day's grace, so a reused refresh token is still recognised (and its family revoked) for a while after expiry.
        run: async (now = clock.date()) => {
          // Within the hour of its last token's expiry a grant ends, and what it created with it.
          const ended = await tokens.endSpentGrants(now.toISOString());
          return ended + (await tokens.pruneExpired(new Date(now.getTime() - 24 * HOUR_MS).toISOString()));
        },
      },
    ],
    provides: { credentialResolver: resolver, grants, onGrantsEnded: (listener) => endings.subscribe(listener) },
  };
}
