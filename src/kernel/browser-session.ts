import type { Principal } from './principal.js';
import type { Role } from './scopes.js';

/** A signed-in browser (the dashboard's and the OAuth pages' one sign-in), as the pages see it. */
export interface BrowserSession {
  id: number;
  accountId: number;
  username: string;
  role: Role;
  /** When the password was last given: the sign-in, or the last step-up. */
  authenticatedAt: string;
  expiresAt: string;
  /** The account acting through this session: every scope its role may hold. */
  principal: Principal;
}
