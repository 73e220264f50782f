import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import Type from 'typebox';
import type { DB } from '../../db/schema.js';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { ownAccountOnly } from '../customers/customers.module.js';
import type { CheeseDirectory } from '../catalogue/catalogue.module.js';
import type { PreferencesService } from '../customers/customers.module.js';
import type { OrderRepository } from './order.repository.js';
import { recommend } from './recommendation.rules.js';

const READ_PROFILE: AuthRequirement = { schemes: ['api_key', 'bearer_auth', 'oauth'], scope: 'read:profile' };

const RecommendationList = Type.Object(
  {
    items: Type.Array(
      Type.Object({
        cheese: Type.Object({ id: Type.Integer({ format: 'int64' }), slug: Type.String(), name: Type.String(), milk: Type.Union([Type.String(), Type.Null()]), texture: Type.Union([Type.String(), Type.Null()]), origin: Type.Union([Type.String(), Type.Null()]), pricePerKg: Type.Union([Type.Number(), Type.Null()]) }),
        score: Type.Integer({ description: 'Higher is a better match; comparable within one answer only.' }),
        reasons: Type.Array(Type.String(), { examples: [['you like sheep milk', 'you often order cheeses from France']] }),
      }),
    ),
  },
  { $id: 'RecommendationList' },
);

/** GET /customer/{username}/recommendations: from the preference profile and the order history. */
export const recommendationRoutes: FastifyPluginAsyncTypebox<{ db: Kysely<DB>; orders: OrderRepository; cheeses: CheeseDirectory; preferences: PreferencesService }> = async (app, { db, orders, cheeses, preferences }) => {
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
  }, async (request) => {
    const { accountId, preferences: tastes } = await preferences.ofCustomer(request.params.username, principalOf(request));
    const [catalogue, bought] = await Promise.all([cheeses.profiles(db), orders.cheesesBoughtBy(db, accountId)]);
    const items = recommend(catalogue, tastes, bought, request.query.limit ?? 5);
    return { items: items.map(({ cheese, score, reasons }) => ({ cheese: { id: cheese.id, slug: cheese.slug, name: cheese.name, milk: cheese.milk, texture: cheese.texture, origin: cheese.origin, pricePerKg: cheese.pricePerKg }, score, reasons })) };
  });
};
