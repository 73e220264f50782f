import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { changeContextOf, principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { ownAccountOnly } from '../customers/customers.module.js';
import { Subscription, SubscriptionInput } from './subscription.schema.js';
import type { SubscriptionService } from './subscription.service.js';

const READ_PROFILE: AuthRequirement = { schemes: ['api_key', 'bearer_auth', 'any_bearer'], scope: 'read:profile' };
const WRITE_PROFILE: AuthRequirement = { schemes: ['bearer_auth', 'any_bearer'], scope: 'write:profile' };
const Username = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) });
const ACCESS = 'A customer reaches only their own (any other username is 403); staff reach every customer.';

/** The cheese-of-the-month subscription, under the customer it belongs to. */
export const subscriptionRoutes: FastifyPluginAsyncTypebox<{ subscriptions: SubscriptionService }> = async (app, { subscriptions }) => {
  app.get('/customer/:username/subscription', {
    config: { auth: READ_PROFILE },
    preValidation: ownAccountOnly,
    schema: { tags: ['customer'], operationId: 'getCustomerSubscription', summary: 'The cheese-of-the-month subscription', description: `404 when the customer has never subscribed. ${ACCESS}`, params: Username, response: { 200: Subscription, ...errorResponses(401, 403, 404) } },
  }, async (request) => subscriptions.get(request.params.username, principalOf(request)));

  app.put('/customer/:username/subscription', {
    config: { auth: WRITE_PROFILE },
    preValidation: ownAccountOnly,
    schema: {
      tags: ['customer'],
      operationId: 'putCustomerSubscription',
      summary: 'Start or change the cheese-of-the-month subscription',
      description: `Each month, on \`dayOfMonth\` at 09:00 UTC, a real order is placed for the customer's best recommendation (never a cheese of a milk they are allergic to), shipped as given: it then follows the usual lifecycle and events. When nothing suitable is in stock nothing is placed, \`lastProblem\` says why, and it is tried again the next day. 201 when started, 200 when changed (a cancelled subscription starts again); \`customer.subscription_changed\` fires either way. ${ACCESS}`,
      params: Username,
      body: SubscriptionInput,
      response: { 200: Subscription, 201: Subscription, ...errorResponses(401, 403, 404, 422) },
    },
  }, async (request, reply) => {
    const { view, created } = await subscriptions.save(request.params.username, request.body, principalOf(request), changeContextOf(request));
    return reply.code(created ? 201 : 200).send(view);
  });

  app.delete('/customer/:username/subscription', {
    config: { auth: WRITE_PROFILE },
    preValidation: ownAccountOnly,
    schema: { tags: ['customer'], operationId: 'cancelCustomerSubscription', summary: 'Cancel the subscription', description: `No further orders are placed (orders already placed are not cancelled); \`customer.subscription_changed\` fires. 404 when there is no active subscription. ${ACCESS}`, params: Username, response: { 204: Type.Null({ description: 'Cancelled.' }), ...errorResponses(401, 403, 404) } },
  }, async (request, reply) => {
    await subscriptions.cancel(request.params.username, principalOf(request), changeContextOf(request));
    return reply.code(204).send(null);
  });
};
