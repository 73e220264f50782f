import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../http/auth.js';
import { ForbiddenError } from '../../kernel/errors.js';
import { firstPartyRefusal, retiringRefusal } from './api-key.rules.js';

/**
 * A preValidation hook for a plugin whose every operation manages first-party credentials
 * (/v2/api-keys, /v2/oauth-clients): an OAuth access token is refused on each (403, before its
 * body is judged), and with `retiringWrites`, a retiring key on each write too.
 */
export function firstPartyOnly(options: { retiringWrites: boolean }) {
  return async (request: FastifyRequest): Promise<void> => {
    const principal = principalOf(request);
    const write = request.method !== 'GET' && request.method !== 'HEAD';
    const refusal = firstPartyRefusal(principal) ?? (options.retiringWrites && write ? retiringRefusal(principal) : null);
    if (refusal) throw new ForbiddenError(refusal);
  };
}
