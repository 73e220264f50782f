/** The union of both forms' scopes (decisions.md §6). `admin` implies every other. */
export const SCOPES = ['read:cheeses', 'write:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile', 'read:logs', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Scopes an OAuth client may register and ask for: all but `read:logs`, which shows every
 * credential's requests and is read with the account's own credentials only (decisions: the
 * request log).
 */
export const OAUTH_SCOPES = SCOPES.filter((scope): scope is Exclude<Scope, 'read:logs'> => scope !== 'read:logs');
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

export function isOAuthScope(value: string): value is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(value);
}

export const ROLES = ['customer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What each role may hold. A customer can never write the catalogue. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  customer: ['read:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile', 'read:logs'],
  admin: SCOPES,
};

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'read:cheeses': 'Browse the catalogue',
  'write:cheeses': 'Create, update and delete cheeses (staff only)',
  'read:orders': 'View order history',
  'write:orders': 'Place and manage orders',
  'read:profile': 'Read the customer profile',
  'write:profile': 'Update the customer profile',
  'read:logs': 'Read the account\'s request log (GET /v2/request-logs, with an API key or login token of the account)',
  admin: 'Full access; staff only, granted by manual approval',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function hasScope(granted: ReadonlySet<Scope>, required: Scope): boolean {
  return granted.has('admin') || granted.has(required);
}

/**
 * A credential that can change nothing (no `write:*`, no `admin`). It manages no credential
 * but itself (decisions.md, "Privilege").
 */
export function isReadOnly(granted: ReadonlySet<Scope>): boolean {
  return !granted.has('admin') && ![...granted].some((scope) => scope.startsWith('write:'));
}

/** Whether `granted` holds every one of `scopes` (`admin` holds them all). */
export function coversScopes(granted: ReadonlySet<Scope>, scopes: readonly Scope[]): boolean {
  return scopes.every((scope) => hasScope(granted, scope));
}

export function parseScopes(text: string): Scope[] {
  return text.split(' ').filter(isScope);
}
