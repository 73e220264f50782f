import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { ownAccountOnly } from '../customers/customers.module.js';
import { RecommendationList } from './recommendation.schema.js';
import type { RecommendationService } from './recommendation.service.js';

const READ_PROFILE: AuthRequirement = { schemes: ['api_key', 'bearer_auth', 'any_bearer'], scope: 'read:profile' };

/** GET /customer/{username}/recommendations: from the preference profile and the order history. */
export const recommendationRoutes: FastifyPluginAsyncTypebox<{ recommendations: RecommendationService }> = async (app, { recommendations }) => {
  app.get('/customer/:username/recommendations', {
    config: { auth: READ_PROFILE },
    preValidation: ownAccountOnly,
    schema: {
      tags: ['customer'],
      operationId: 'getCustomerRecommendations',
      summary: 'Cheeses to try, from the preference profile and the order history',
      description:
        'Only cheeses that can be ordered now. Never a cheese of a milk the customer is allergic to (nor one whose milk is unknown, while they have an allergy), never one smellier than their limit, organic only when they ask. ' +
        'Then stated favourites count most, what they order most counts too, and cheeses they have not ordered yet come first. Each suggestion says why. A customer reaches only their own (any other username is 403); staff reach every customer.',
      params: Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) }),
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })) }, { additionalProperties: false }),
      response: { 200: RecommendationList, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => recommendations.forCustomer(request.params.username, principalOf(request), request.query.limit ?? 5));
};
