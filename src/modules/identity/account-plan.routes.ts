import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { PLANS } from '../../kernel/plans.js';
import type { AccountService } from './account.service.js';

const STAFF: AuthRequirement = { schemes: ['api_key', 'any_bearer'], scope: 'admin' };
const AccountPlan = Type.Object(
  { username: Type.String(), plan: Type.Enum([...PLANS], { description: 'free: 100 requests/hour, burst 10; pro: 10,000/hour, burst 100 (both also at most 1,000/minute); enterprise: a bucket of 1,000 refilled at 1,000/s. Figures are configuration (README).' }) },
  { $id: 'AccountPlan' },
);

/** Staff put an account on a rate-limit plan (decisions.md §7). */
export const accountPlanRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountService }> = async (app, { accounts }) => {
  app.put('/accounts/:username/plan', {
    config: { auth: STAFF },
    schema: {
      tags: ['accounts'],
      operationId: 'setAccountPlan',
      summary: 'Put an account on a rate-limit plan (staff)',
      description: 'Applies to the account\'s next requests on every instance within 5 seconds. New customers start on `free`, staff on `enterprise`. 404 for an unknown username.',
      params: Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: Type.Object({ plan: Type.Enum([...PLANS]) }, { additionalProperties: false, examples: [{ plan: 'pro' }] }),
      response: { 200: AccountPlan, ...errorResponses(401, 403, 404, 422) },
    },
  }, async (request) => accounts.setPlan(request.params.username, request.body.plan));
};
