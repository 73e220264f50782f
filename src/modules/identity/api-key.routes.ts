import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import type { ApiKeyRecord } from './api-key.repository.js';
import { ApiKey, CreateApiKeyBody, CreatedApiKey } from './api-key.schema.js';
import type { ApiKeyService } from './api-key.service.js';
import { parseScopes } from '../../kernel/scopes.js';

// Managing your own keys needs no particular scope, only a credential of yours.
const OWN_KEYS: AuthRequirement = { schemes: ['api_key', 'any_bearer'] };

function present(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    prefix: record.keyPrefix,
    environment: record.environment,
    scopes: parseScopes(record.scopes),
    expiresAt: record.expiresAt,
    lastUsedAt: record.lastUsedAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.post(
    '/api-keys',
    {
      config: { auth: OWN_KEYS, idempotent: 'secret' },
      schema: {
        tags: ['api-keys'],
        operationId: 'createApiKey',
        summary: 'Create an API key for your account (at most 3 active)',
        description:
          'The key is returned once. `sk_live_` keys in production, `sk_test_` elsewhere. A key never holds more scopes than the credential creating it, ' +
          'and never expires later than it (an omitted `expiresAt` takes the creator\'s expiry); a read-only credential (no `write:*` scope) creates no key (403).',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const created = await apiKeys.create({ accountId: principal.accountId, role: principal.role }, request.body, principal);
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...present(created), key: created.key });
    },
  );

  app.get(
    '/api-keys',
    {
      config: { auth: OWN_KEYS },
      schema: {
        tags: ['api-keys'],
        operationId: 'listApiKeys',
        summary: 'List your active API keys (never the keys themselves)',
        description: 'The account\'s keys that are neither revoked nor expired, oldest first, with the first 16 characters of each as `prefix` to tell them apart.',
        response: { 200: Type.Object({ items: Type.Array(ApiKey) }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ items: (await apiKeys.list(principalOf(request).accountId)).map(present) }),
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { auth: OWN_KEYS },
      schema: {
        tags: ['api-keys'],
        operationId: 'revokeApiKey',
        summary: 'Revoke one of your API keys (idempotent)',
        description: 'A credential revokes itself, or keys whose scopes it holds (403 otherwise); a read-only credential revokes only itself.',
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) }),
        response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await apiKeys.revoke(principal.accountId, request.params.id, principal);
      return reply.code(204).send(null);
    },
  );
};
