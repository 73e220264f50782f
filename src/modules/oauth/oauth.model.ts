import { hash, randomBytes } from 'node:crypto';
import type OAuth2Server from '@node-oauth/oauth2-server';
import type { Role } from '../../kernel/scopes.js';
import type { OAuthClientService, RegisteredClient } from '../identity/identity.module.js';
import type { OAuthTokenRepository, StoredToken } from './oauth-token.repository.js';
import { scopesFor } from './oauth.rules.js';

/** Who a grant acts for, as the library carries it between model calls. */
export interface OAuthUser {
  accountId: number;
  username: string;
  role: Role;
  /** Set once a grant exists (a code or refresh token was presented): new tokens join its family. */
  grantId?: number;
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
}

/**
 * The storage side of @node-oauth/oauth2-server, which does the protocol (grant dispatch,
 * client authentication order, PKCE verification, error responses). Tokens are stored only as
 * SHA-256 digests. `authenticateClients`: the token endpoint's model checks secrets; the
 * authorization endpoint's only looks the client up (there is no secret at that step).
 */
export function createModel(deps: ModelDependencies, authenticateClients: boolean) {
  const { tokens, clients } = deps;
  const now = () => new Date().toISOString();

  /** A stored code or refresh token that may be used now; a reused one revokes its family. */
  async function usable(token: string, kind: 'authorization_code' | 'refresh_token'): Promise<StoredToken | undefined> {
    const stored = await tokens.findByHash(hashToken(token), kind);
    if (!stored || stored.revoked) return undefined;
    if (stored.consumed) {
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
        user: userOf(stored),
        storedId: stored.id,
      };
    },

    /** Rotation: the presented refresh token is consumed; false when a concurrent request rotated it first. */
    async revokeToken(token: { storedId?: number }): Promise<boolean> {
      return token.storedId !== undefined && tokens.consume(token.storedId, now());
    },

    async saveToken(token: OAuth2Server.Token, client: OAuthClient, user: OAuthUser) {
      const at = now();
      const scopes = (token.scope ?? []).join(' ');
      const grantId = user.grantId ?? (await tokens.createGrant({ clientRowId: client.rowId, accountId: user.accountId, scopes, now: at }));
      await tokens.insertToken({ grantId, kind: 'access_token', tokenHash: hashToken(token.accessToken), scopes, expiresAt: token.accessTokenExpiresAt!.toISOString(), now: at });
      // A refresh token only for clients registered for that grant (the library would always make one).
      const refresh = token.refreshToken !== undefined && client.grants.includes('refresh_token');
      if (refresh) {
        await tokens.insertToken({ grantId, kind: 'refresh_token', tokenHash: hashToken(token.refreshToken!), scopes, expiresAt: token.refreshTokenExpiresAt!.toISOString(), now: at });
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
