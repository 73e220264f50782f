import type { FieldError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import type { CustomerTier } from './customer.table.js';
import { MIN_PASSWORD_LENGTH } from './customer.schema.js';

/** Path segments under /customer that name operations, not customers. */
const RESERVED_USERNAMES = new Set(['login', 'logout', 'me']);

export function usernameProblem(username: string): string | null {
  return RESERVED_USERNAMES.has(username.toLowerCase()) ? 'is reserved' : null;
}

/**
 * Identifying text shorter than this is not looked for in a password: one or two letters
 * (`al`, `jo`) are in most passphrases by chance, so refusing them would refuse at random;
 * three already name someone (`bob`), and usernames are at least three long anyway.
 */
const MIN_IDENTIFYING_LENGTH = 3;

/** The password policy beyond its length (checked by the schema); null when acceptable. */
export function passwordProblem(password: string, username: string, email: string): string | null {
  // Compared as the hash sees it (NFKC) and regardless of case: a full-width `ｂｏｂ` is `bob`.
  const folded = fold(password);
  if (username.length >= MIN_IDENTIFYING_LENGTH && folded.includes(fold(username))) return 'must not contain the username';
  if (localParts(email).some((part) => folded.includes(part))) return "must not contain the e-mail address's local part";
  if (new Set(password.normalize('NFKC')).size < 4) return 'must use at least 4 different characters';
  return null;
}

/**
 * The whole policy for a password set outside a request body (the schema checks its length
 * there): `admin reset-password` and ADMIN_PASSWORD at first start, by one rule. Its length in
 * characters (code points), then passwordProblem; null when acceptable.
 */
export function accountPasswordProblem(password: string, username: string): string | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH || length > 256) return `must be ${MIN_PASSWORD_LENGTH} to 256 characters long (it has ${length})`;
  return passwordProblem(password, username, '');
}

/**
 * The sign-up and replacement rules the schema cannot state, for a body of any shape: each
 * field that is text is judged (a username or e-mail the schema refused still counts against
 * the password). The service checks them on a valid body; with a refused one they are named in
 * the same 422 as the schema's errors (addBodyRules), so a bad username, e-mail and password
 * are named together.
 */
export function inputProblems(body: unknown): FieldError[] {
  if (typeof body !== 'object' || body === null) return [];
  const { username, email, password } = body as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const errors: FieldError[] = [];
  const reserved = typeof username === 'string' ? usernameProblem(username) : null;
  if (reserved) errors.push({ field: 'username', message: reserved });
  const weak = typeof password === 'string' ? passwordProblem(password, text(username), text(email)) : null;
  if (weak) errors.push({ field: 'password', message: weak });
  return errors;
}

function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The local part, and the mailbox before a `+tag` (bob of bob+shop@…), where long enough to identify. */
function localParts(email: string): string[] {
  const address = fold(email.trim());
  // The last @: a quoted local part may contain one.
  const local = address.slice(0, Math.max(address.lastIndexOf('@'), 0));
  return [local, local.split('+')[0]!].filter((part) => part.length >= MIN_IDENTIFYING_LENGTH);
}

/**
 * Who may reach /customer/{username}. Staff reach every customer (an unknown one is 404);
 * a customer reaches only their own account, and any other username is 403 whether it exists
 * or not, so usernames cannot be probed.
 */
export function customerAccess(principal: Principal, username: string): 'any' | 'own' | 'forbidden' {
  if (principal.role === 'admin') return 'any';
  return principal.username.toLowerCase() === username.toLowerCase() ? 'own' : 'forbidden';
}

export const NOT_YOURS = 'You can reach only your own customer account.';

/** Delivered kilograms over the last 12 months from which each tier starts (docs/decisions.md). */
export const TIER_THRESHOLDS_KG: Readonly<Record<Exclude<CustomerTier, 'bronze'>, number>> = { silver: 10, gold: 30, platinum: 75 };

/** The tier a customer's delivered volume over the last 12 months earns. */
export function tierFor(deliveredGrams: number): CustomerTier {
  const kg = deliveredGrams / 1000;
  if (kg >= TIER_THRESHOLDS_KG.platinum) return 'platinum';
  if (kg >= TIER_THRESHOLDS_KG.gold) return 'gold';
  if (kg >= TIER_THRESHOLDS_KG.silver) return 'silver';
  return 'bronze';
}
