import { hash, randomBytes } from 'node:crypto';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { Role } from '../../kernel/scopes.js';
import type { OAuthClientService, RegisteredClient } from '../identity/identity.module.js';
import type { NewToken, OAuthTokenRepository, StoredToken } from './oauth-token.repository.js';
import { scopesFor } from './oauth.rules.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** Who a grant acts for, as the library carries it between model calls. */
export interface OAuthUser {
  accountId: number;
  username: string;
  role: Role;
  /** Set once a grant exists (a code or refresh token was presented): new tokens join its family. */
  grantId?: number;
  /** The refresh token this request presents: saveToken consumes it with the insert of its successors. */
  rotates?: number;
}

/** A registered client as the library sees it: `id` is the public client_id. */
export interface OAuthClient extends OAuth2Server.Client {
  id: string;
  rowId: number;
  grants: string[];
  redirectUris: string[];
  scopes: string[];
  confidential: boolean;
  createdBy: number | null;
}

export const TOKEN_PREFIX = { access: 'oat_', refresh: 'ort_', code: 'oac_' } as const;

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

function randomToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function toLibraryClient(client: RegisteredClient): OAuthClient {
  return { id: client.clientId, rowId: client.id, grants: client.grants, redirectUris: client.redirectUris, scopes: client.scopes, confidential: client.confidential, createdBy: client.createdBy };
}

function userOf(stored: StoredToken): OAuthUser {
  return { accountId: stored.accountId, username: stored.username, role: stored.role, grantId: stored.grantId };
}

export interface ModelDependencies {
  tokens: OAuthTokenRepository;
  clients: OAuthClientService;
  /** Called when a used code or a rotated refresh token comes back: its family was revoked. */
  onReuse(stored: StoredToken): void;
  /**
   * For this long after a rotation, the rotated-out refresh token coming back is taken for a
   * concurrent request (two tabs, a retry after a lost answer), refused without touching the
   * grant; after it, for a replay, which revokes the grant. 0: always a replay.
   */
  reuseIntervalMs: number;
  /**
   * An access token's life, counted on `clock`: OAuthTokenResolver judges its expiry on that
   * clock, not the library's (the system's), which counts only codes and refresh tokens it judges.
   */
  accessTokenTtlMs: number;
  clock?: Clock;
}

const JUST_ROTATED = 'Invalid grant: this refresh token was just used; use the tokens that request received.';

/**
 * The storage side of @node-oauth/oauth2-server, which does the protocol (grant dispatch,
 * client authentication order, PKCE verification, error responses). Tokens are stored only as
 * SHA-256 digests. `authenticateClients`: the token endpoint's model checks secrets; the
 * authorization endpoint's only looks the client up (there is no secret at that step).
 */
export function createModel(deps: ModelDependencies, authenticateClients: boolean) {
  const { tokens, clients } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => clock.iso();

  /** A stored code or refresh token that may be used now; a reused one revokes its family (a refresh token only past the reuse interval). */
  async function usable(token: string, kind: 'authorization_code' | 'refresh_token'): Promise<StoredToken | undefined> {
    const stored = await tokens.findByHash(hashToken(token), kind);
    if (!stored || stored.revoked) return undefined;
    if (stored.consumedAt) {
      // Codes get no grace: RFC 6749 §4.1.2 has a second exchange revoke what the first issued.
      if (kind === 'refresh_token' && clock.now() - stored.consumedAt.getTime() < deps.reuseIntervalMs) throw new OAuth2Server.InvalidGrantError(JUST_ROTATED);
      await tokens.revokeGrant(stored.grantId, now());
      deps.onReuse(stored);
      return undefined;
    }
    return stored;
  }

  return {
    generateAccessToken: async () => randomToken(TOKEN_PREFIX.access),
    generateRefreshToken: async () => randomToken(TOKEN_PREFIX.refresh),
    generateAuthorizationCode: async () => randomToken(TOKEN_PREFIX.code),

    async getClient(clientId: string, clientSecret?: string | null): Promise<OAuthClient | false> {
      const client = authenticateClients ? await clients.authenticate(clientId, clientSecret ?? undefined) : await clients.find(clientId);
      return client ? toLibraryClient(client) : false;
    },

    async validateScope(user: OAuthUser, client: OAuthClient, scope?: string[]): Promise<string[] | false> {
      const granted = scopesFor(scope?.join(' '), client, user.role);
      return 'scopes' in granted ? granted.scopes : false;
    },

    async getUserFromClient(client: OAuthClient): Promise<OAuthUser | false> {
      if (client.createdBy === null) return false;
      const owner = await tokens.accountById(client.createdBy);
      return owner ? { accountId: owner.id, username: owner.username, role: owner.role } : false;
    },

    async saveAuthorizationCode(
      code: Pick<OAuth2Server.AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
      client: OAuthClient,
      user: OAuthUser,
    ) {
      const at = now();
      const scopes = (code.scope ?? []).join(' ');
      const grantId = await tokens.createGrant({ clientRowId: client.rowId, accountId: user.accountId, scopes, now: at });
      await tokens.insertToken({
        grantId,
        kind: 'authorization_code',
        tokenHash: hashToken(code.authorizationCode),
        scopes,
        expiresAt: code.expiresAt.toISOString(),
        now: at,
        redirectUri: code.redirectUri,
        codeChallenge: code.codeChallenge ?? null,
        codeChallengeMethod: code.codeChallengeMethod ?? null,
      });
      return { ...code, client, user: { ...user, grantId } };
    },

    async getAuthorizationCode(authorizationCode: string) {
      const stored = await usable(authorizationCode, 'authorization_code');
      if (!stored) return false;
      return {
        authorizationCode,
        expiresAt: stored.expiresAt,
        redirectUri: stored.redirectUri ?? undefined,
        scope: stored.scopes.split(' ').filter(Boolean),
        ...(stored.codeChallenge ? { codeChallenge: stored.codeChallenge, codeChallengeMethod: stored.codeChallengeMethod ?? 'S256' } : {}),
        client: { id: stored.clientId, grants: [] },
        user: userOf(stored),
        storedId: stored.id,
      };
    },

    async revokeAuthorizationCode(code: { storedId?: number }): Promise<boolean> {
      return code.storedId !== undefined && tokens.consume(code.storedId, now());
    },

    async getRefreshToken(refreshToken: string) {
      const stored = await usable(refreshToken, 'refresh_token');
      if (!stored) return false;
      return {
        refreshToken,
        refreshTokenExpiresAt: stored.expiresAt,
        scope: stored.scopes.split(' ').filter(Boolean),
        client: { id: stored.clientId, grants: [] },
        user: { ...userOf(stored), rotates: stored.id },
        storedId: stored.id,
      };
    },

    // The library consumes the refresh token here, before it checks the scope asked for; the
    // consumption waits for saveToken instead, so that a refused request leaves the token usable.
    async revokeToken(token: { storedId?: number }): Promise<boolean> {
      return token.storedId !== undefined;
    },

    async saveToken(token: OAuth2Server.Token, client: OAuthClient, user: OAuthUser) {
      const at = now();
      const scopes = (token.scope ?? []).join(' ');
      const grantId = user.grantId ?? (await tokens.createGrant({ clientRowId: client.rowId, accountId: user.accountId, scopes, now: at }));
      const expiresAt = new Date(Date.parse(at) + deps.accessTokenTtlMs).toISOString();
      const issued: NewToken[] = [{ grantId, kind: 'access_token', tokenHash: hashToken(token.accessToken), scopes, expiresAt, now: at }];
      // A refresh token only for clients registered for that grant (the library would always make one).
      const refresh = token.refreshToken !== undefined && client.grants.includes('refresh_token');
      if (refresh) issued.push({ grantId, kind: 'refresh_token', tokenHash: hashToken(token.refreshToken!), scopes, expiresAt: token.refreshTokenExpiresAt!.toISOString(), now: at });
      if (user.rotates !== undefined) {
        // Another refresh of the same token (or its revocation) committed first: it won, this one issues nothing.
        if (!(await tokens.rotate(user.rotates, issued, at))) throw new OAuth2Server.InvalidGrantError(JUST_ROTATED);
      } else {
        for (const each of issued) await tokens.insertToken(each);
      }
      const { refreshToken, refreshTokenExpiresAt, ...withoutRefresh } = token;
      return { ...(refresh ? { ...withoutRefresh, refreshToken, refreshTokenExpiresAt } : withoutRefresh), client, user: { ...user, grantId } };
    },

    // Access tokens are resolved by OAuthTokenResolver (the CredentialResolver seam), never by the library.
    async getAccessToken(): Promise<false> {
      return false;
    },
  };
}
