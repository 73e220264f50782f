import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { changeContextOf, principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { ownAccountOnly } from './customer.access.js';
import { Address, AddressInput, AddressPatch } from './address.schema.js';
import type { AddressService } from './address.service.js';
import { USERNAME_PATTERN } from './customer.schema.js';
import { Preferences, PreferencesInput } from './preferences.schema.js';
import type { PreferencesService } from './preferences.service.js';

const READ_PROFILE: AuthRequirement = { schemes: ['api_key', 'bearer_auth', 'any_bearer'], scope: 'read:profile' };
const WRITE_PROFILE: AuthRequirement = { schemes: ['bearer_auth', 'any_bearer'], scope: 'write:profile' };
const OWNERSHIP = 'A customer reaches only their own account (any other username is 403); staff reach every customer.';

const Username = Type.String({ pattern: USERNAME_PATTERN });
const UsernameParams = Type.Object({ username: Username });
const AddressParams = Type.Object({ username: Username, addressId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const AddressRef = Type.Unsafe<Type.Static<typeof Address>>({ $ref: 'Address#' });
const PreferencesRef = Type.Unsafe<Type.Static<typeof Preferences>>({ $ref: 'Preferences#' });

/** Form B's customer parts: shipping addresses and the preference profile with milk allergies. */
export const profileRoutes: FastifyPluginAsyncTypebox<{ addresses: AddressService; preferences: PreferencesService }> = async (app, { addresses, preferences }) => {
  app.addSchema(Address);
  app.addSchema(Preferences);
  const acting = (request: Parameters<typeof principalOf>[0], pathOf?: (id: string | number) => string) => ({ ...changeContextOf(request, pathOf), principal: principalOf(request) });

  app.get('/customer/:username/addresses', {
    preValidation: ownAccountOnly,
    config: { auth: READ_PROFILE },
    schema: {
      tags: ['customer'],
      operationId: 'listCustomerAddresses',
      summary: 'A customer\'s shipping addresses, the default one marked',
      description: `Oldest first. ${OWNERSHIP}`,
      params: UsernameParams,
      response: { 200: Type.Object({ items: Type.Array(AddressRef) }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => ({ items: await addresses.list(request.params.username, principalOf(request)) }));

  app.post('/customer/:username/addresses', {
    preValidation: ownAccountOnly,
    config: { auth: WRITE_PROFILE, writesResource: true, idempotent: true },
    schema: {
      tags: ['customer'],
      operationId: 'addCustomerAddress',
      summary: 'Add a shipping address',
      description: `The first address is the default; \`isDefault: true\` makes a new one the default instead. The country is an ISO 3166-1 alpha-2 code that exists (422 otherwise). Records \`customer.updated\` with \`changed: ["addresses"]\`. ${OWNERSHIP}`,
      params: UsernameParams,
      body: AddressInput,
      response: { 201: AddressRef, ...errorResponses(400, 401, 403, 404, 415, 422) },
    },
  }, async (request, reply) => {
    const addressPath = (id: string | number) => `/v2/customer/${request.params.username}/addresses/${id}`;
    const address = await addresses.create(request.params.username, request.body, acting(request, addressPath));
    return reply.code(201).header('location', addressPath(address.id)).send(address);
  });

  app.patch('/customer/:username/addresses/:addressId', {
    preValidation: ownAccountOnly,
    config: { auth: WRITE_PROFILE, writesResource: true },
    schema: {
      tags: ['customer'],
      operationId: 'updateCustomerAddress',
      summary: 'Change a shipping address (only the fields sent)',
      description: `\`null\` clears an optional field; \`isDefault: true\` makes it the default (the previous default stops being one). ${OWNERSHIP}`,
      params: AddressParams,
      body: AddressPatch,
      response: { 200: AddressRef, ...errorResponses(400, 401, 403, 404, 415, 422) },
    },
  }, async (request) => addresses.patch(request.params.username, request.params.addressId, request.body, acting(request)));

  app.delete('/customer/:username/addresses/:addressId', {
    preValidation: ownAccountOnly,
    config: { auth: WRITE_PROFILE },
    schema: {
      tags: ['customer'],
      operationId: 'deleteCustomerAddress',
      summary: 'Remove a shipping address',
      description: `When it was the default, the oldest remaining address becomes the default. ${OWNERSHIP}`,
      params: AddressParams,
      response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    await addresses.delete(request.params.username, request.params.addressId, acting(request));
    return reply.code(204).send(null);
  });

  app.get('/customer/:username/preferences', {
    preValidation: ownAccountOnly,
    config: { auth: READ_PROFILE },
    schema: {
      tags: ['customer'],
      operationId: 'getCustomerPreferences',
      summary: 'The preference profile and milk allergies',
      description: OWNERSHIP,
      params: UsernameParams,
      response: { 200: PreferencesRef, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => preferences.get(request.params.username, principalOf(request)));

  app.put('/customer/:username/preferences', {
    preValidation: ownAccountOnly,
    config: { auth: WRITE_PROFILE, writesResource: true },
    schema: {
      tags: ['customer'],
      operationId: 'replaceCustomerPreferences',
      summary: 'Replace the preference profile and milk allergies',
      description: `Recommendations never offer a cheese of a milk listed in \`milkAllergies\`. Records \`customer.updated\` with \`changed: ["preferences"]\`. ${OWNERSHIP}`,
      params: UsernameParams,
      body: PreferencesInput,
      response: { 200: PreferencesRef, ...errorResponses(400, 401, 403, 404, 415, 422) },
    },
  }, async (request) => preferences.replace(request.params.username, request.body, acting(request)));
};
