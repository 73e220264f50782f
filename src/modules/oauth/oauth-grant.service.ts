import { toIso } from '../../db/columns.js';
import { NotFoundError } from '../../kernel/errors.js';
import { parseScopes, SCOPES, type Scope } from '../../kernel/scopes.js';
import type { OAuthGrantRepository } from './oauth-grant.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** An application the account authorized, with what it may still do (all its live grants together). */
export interface AuthorizedApp {
  /** The client's public id (`cl_…`). */
  clientId: string;
  name: string;
  /** Every scope its live grants hold, in the order of SCOPES. */
  scopes: Scope[];
  /** When the account first authorized it (of the grants still in force). */
  authorizedAt: string;
  /** When the app last obtained a token (a code exchanged, a refresh, an implicit grant); uses of an access token are not recorded. */
  lastUsedAt: string | null;
}

/**
 * The OAuth grants an account gave, by application: listed, and revoked at once (the grants and
 * every token issued under them), so the app's access tokens are refused at once on this instance
 * and within AUTH_CACHE_TTL_MS on others. Who may ask is the caller's business (the routes, the dashboard).
 */
export class OAuthGrantService {
  constructor(private readonly options: { grants: OAuthGrantRepository; forget: (grantId: number) => void; clock?: Clock }) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  async listFor(accountId: number): Promise<AuthorizedApp[]> {
    const rows = await this.options.grants.liveOf(accountId, this.#clock.iso());
    const apps = new Map<string, { name: string; scopes: Set<Scope>; authorizedAt: string; lastUsedAt: string | null }>();
    for (const row of rows) {
      const created = toIso(row.createdAt);
      const used = row.lastTokenAt === null ? null : toIso(row.lastTokenAt);
      const app = apps.get(row.clientId);
      if (!app) {
        apps.set(row.clientId, { name: row.clientName, scopes: new Set(parseScopes(row.scopes)), authorizedAt: created, lastUsedAt: used });
        continue;
      }
      for (const scope of parseScopes(row.scopes)) app.scopes.add(scope);
      if (created < app.authorizedAt) app.authorizedAt = created;
      if (used !== null && (app.lastUsedAt === null || used > app.lastUsedAt)) app.lastUsedAt = used;
    }
    return [...apps]
      .map(([clientId, app]) => ({ clientId, name: app.name, scopes: SCOPES.filter((scope) => app.scopes.has(scope)), authorizedAt: app.authorizedAt, lastUsedAt: app.lastUsedAt }))
      .sort((a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId));
  }

  /** Ends the app's access to the account: 404 when the account has no grant to it in force. */
  async revoke(accountId: number, clientId: string): Promise<void> {
    const revoked = await this.options.grants.revokeClientOf(accountId, clientId, this.#clock.iso());
    if (revoked.length === 0) throw new NotFoundError(`No authorized app ${clientId} on this account.`);
    for (const grantId of revoked) this.options.forget(grantId);
  }
}
