/** The union of both forms' scopes (decisions.md §6). `admin` implies every other. */
export const SCOPES = ['read:cheeses', 'write:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ['customer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What each role may hold. A customer can never write the catalogue. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  customer: ['read:cheeses', 'read:orders', 'write:orders', 'read:profile', 'write:profile'],
  admin: SCOPES,
};

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'read:cheeses': 'Browse the catalogue',
  'write:cheeses': 'Create, update and delete cheeses (staff only)',
  'read:orders': 'View order history',
  'write:orders': 'Place and manage orders',
  'read:profile': 'Read the customer profile',
  'write:profile': 'Update the customer profile',
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
