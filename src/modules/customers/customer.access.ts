import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { ForbiddenError } from '../../kernel/errors.js';
import { customerAccess, NOT_YOURS } from './customer.rules.js';

/**
 * Another customer's account is refused (403) before the body is validated, so the answer is
 * the same whatever was sent; the service checks again inside its transaction.
 */
export async function ownAccountOnly(request: FastifyRequest): Promise<void> {
  const { username } = request.params as { username?: unknown };
  if (typeof username === 'string' && customerAccess(principalOf(request), username) === 'forbidden') throw new ForbiddenError(NOT_YOURS);
}
