import type { BruteForceGuard } from '../../kernel/brute-force.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { changeContextOf, principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { addBodyRules } from '../../http/validation.js';
import { inputProblems } from './customer.rules.js';
import { ownAccountOnly } from './customer.access.js';
import { CustomerInput, CustomerReplaceInput, Customer, ReplacedCustomer, USERNAME_PATTERN } from './customer.schema.js';
import type { CustomerService } from './customer.service.js';

const READ_PROFILE: AuthRequirement = { schemes: ['api_key', 'bearer_auth', 'any_bearer'], scope: 'read:profile' };
const WRITE_PROFILE: AuthRequirement = { schemes: ['bearer_auth', 'any_bearer'], scope: 'write:profile' };
// Closing an account takes the customer's own login (or staff), never a third-party application's token.
const CLOSE_ACCOUNT: AuthRequirement = { schemes: ['bearer_auth'], scope: 'write:profile' };

const UsernameParams = Type.Object({ username: Type.String({ pattern: USERNAME_PATTERN, examples: ['marie.dupont'] }) });
const CustomerRef = Type.Unsafe<Type.Static<typeof Customer>>({ $ref: 'Customer#' });
const customerPath = (username: string | number) => `/v2/customer/${username}`;
const OWNERSHIP = 'A customer reaches only their own account: any other username is 403, existing or not, so usernames cannot be probed. Staff reach every customer (an unknown one is 404).';

export const customerRoutes: FastifyPluginAsyncTypebox<{ customers: CustomerService; bruteForce: BruteForceGuard }> = async (app, { customers, bruteForce }) => {
  // The rules no schema states are named in the same 422 as the schema's errors.
  addBodyRules(CustomerInput, inputProblems);
  addBodyRules(CustomerReplaceInput, inputProblems);
  app.addSchema(Customer);
  app.addSchema(ReplacedCustomer);

  app.post('/customer', {
    config: { auth: 'public', idempotent: true },
    schema: {
      tags: ['customer'],
      operationId: 'createCustomer',
      summary: 'Sign up: create a customer account',
      description: 'Public. Username and e-mail are unique regardless of case (409 naming the field). The new customer is on the `bronze` tier. Records `customer.created`.',
      body: CustomerInput,
      response: { 201: CustomerRef, ...errorResponses(400, 409, 415, 422) },
    },
  }, async (request, reply) => {
    await bruteForce('signup', request.ip);
    const customer = await customers.signUp(request.body, changeContextOf(request, customerPath));
    return reply.code(201).header('location', customerPath(customer.username)).header('cache-control', 'no-store').send(customer);
  });

  app.get('/customer/:username', {
    preValidation: ownAccountOnly,
    config: { auth: READ_PROFILE },
    schema: {
      tags: ['customer'],
      operationId: 'getCustomer',
      summary: 'A customer account',
      description: OWNERSHIP,
      params: UsernameParams,
      response: { 200: CustomerRef, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => customers.get(request.params.username, principalOf(request)));

  app.put('/customer/:username', {
    preValidation: ownAccountOnly,
    config: { auth: WRITE_PROFILE },
    schema: {
      tags: ['customer'],
      operationId: 'replaceCustomer',
      summary: 'Replace a customer\'s profile (CustomerInput; password required)',
      description:
        'Every field of CustomerInput; omitted optional fields are cleared. `username` must be the path\'s: it cannot change. `password` is required: the current one re-confirms it (and is the proof an e-mail change needs); a new one also needs `currentPassword` (422 without it, 403 when wrong, nothing changed). ' +
        'A third-party application\'s OAuth token never changes the password or e-mail (403). A new password ends every other login session and every OAuth grant of the account, and the answer\'s `passwordChange` says so and lists the API keys that stay valid. ' +
        `Records \`customer.updated\`. ${OWNERSHIP}`,
      params: UsernameParams,
      body: CustomerReplaceInput,
      response: { 200: Type.Unsafe<Type.Static<typeof ReplacedCustomer>>({ $ref: 'ReplacedCustomer#' }), ...errorResponses(400, 401, 403, 404, 409, 415, 422) },
    },
  }, async (request) => {
    // A wrong currentPassword is a password guess: it counts as a login attempt on the account.
    const attempt = request.body.currentPassword === undefined ? undefined : await bruteForce('login', request.ip, request.params.username);
    const replaced = await customers.replace(request.params.username, request.body, { ...changeContextOf(request), principal: principalOf(request) });
    await attempt?.succeeded();
    return replaced;
  });

  app.delete('/customer/:username', {
    preValidation: ownAccountOnly,
    config: { auth: CLOSE_ACCOUNT },
    schema: {
      tags: ['customer'],
      operationId: 'deleteCustomer',
      summary: 'Close a customer account and remove its data',
      description: `Removes the account, its profile, API keys and login sessions at once: its tokens and keys are refused from then on (on other instances within AUTH_CACHE_TTL_MS). ${OWNERSHIP}`,
      params: UsernameParams,
      response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    await customers.delete(request.params.username, { ...changeContextOf(request), principal: principalOf(request) });
    return reply.code(204).send(null);
  });
};
