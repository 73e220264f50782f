import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import type { ApiKeyRecord } from './api-key.repository.js';
import { ApiKey, CreateApiKeyBody, CreatedApiKey, RollApiKeyBody, RolledApiKey } from './api-key.schema.js';
import type { ApiKeyService } from './api-key.service.js';
import { parseScopes } from '../../kernel/scopes.js';
import { firstPartyRefusal } from './api-key.rules.js';

// Managing your own keys needs no particular scope, only a credential of yours, and never an
// OAuth access token, reads included (least privilege: a third party has no use for them). A
// retiring key is judged per key by the service.
const OWN_KEYS: AuthRequirement = { schemes: ['api_key', 'any_bearer'], refuse: firstPartyRefusal };
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

function present(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    prefix: record.keyPrefix,
    last4: record.keyLast4,
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
'Only the account\'s own credentials (an API key, a login token) use this operation: an OAuth access token, of any grant, is refused (403), as on every /api-keys operation. ' +
          'The key is returned once. `sk_live_` keys in production, `sk_test_` elsewhere. A key never holds more scopes than the credential creating it, ' +
          'and never expires later than it (an omitted `expiresAt` takes the creator\'s expiry); a read-only credential (no `write:*` scope) creates no key (403). ' +
          'An account holds at most 3 active keys (409 beyond); a rolled key living out its grace period (`POST /api-keys/{id}/roll`) does not count there, ' +
          'but at most 6 keys of an account (per environment) may authenticate at once, rolled keys in grace included (409 beyond: revoke one first). ' +
          'A retiring key (rolled, in its grace period) creates no key (403).',
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
        description:
          'The account\'s keys that are neither revoked nor expired, oldest first, with the first 16 characters of each as `prefix` and the last 4 as `last4` to tell them apart. ' +
          'A rolled key is listed until it expires: it still works. An OAuth access token is refused (403): only the account\'s own credentials see its keys.',
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
        description:
          'A credential revokes itself, or keys whose scopes it holds (403 otherwise); a read-only credential, or a retiring key (rolled, in its grace period), revokes only itself. ' +
          'An OAuth access token is refused (403).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await apiKeys.revoke(principal.accountId, request.params.id, principal);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api-keys/:id/roll',
    {
      config: { auth: OWN_KEYS, idempotent: 'secret' },
      schema: {
        tags: ['api-keys'],
        operationId: 'rollApiKey',
        summary: 'Replace an API key with a new one; the old one keeps working for a grace period',
        description:
          'Makes a new key with the old one\'s name and scopes, returned once (as from `POST /api-keys`), and lets the old one keep working for ' +
          '`oldKeyExpiresInSeconds`: 0 (refused at once), 3600 (1 hour), 86400 (24 hours, the default: send `{}`) or 604800 (7 days), never later than it would have expired. ' +
          'The new key expires never if the old one never did, else after the lifetime the old one was made with, counted from now. ' +
          'A rolled key no longer counts against the 3 active keys while it lives out its grace period, so a roll never fails for that limit: the new key takes the old one\'s place ' +
          '(the rolled key is still listed by `GET /api-keys` until it expires). ' +
          'It still authenticates, though, and at most 6 keys of an account (per environment) may at once: a roll that would make a 7th is 409, nothing changed; ' +
          'revoke a key you no longer use (a rolled one too), or roll with `oldKeyExpiresInSeconds: 0` (the old key stops at once, so the count stays). ' +
          'A retiring key rolls no key, itself included (403); an OAuth access token is refused (403). ' +
          'The credential must be allowed both to revoke the old key and to create the new one (403 otherwise; a read-only credential rolls no key); ' +
          'another account\'s key is 404; a key revoked, expired or already rolled is 409.',
        params: IdParams,
        body: RollApiKeyBody,
        response: { 201: RolledApiKey, ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { created, old } = await apiKeys.roll(
        principal.accountId,
        request.params.id,
        { oldKeyExpiresInSeconds: request.body.oldKeyExpiresInSeconds ?? 86400 },
        principal,
      );
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...present(created), key: created.key, replaces: { id: old.id, expiresAt: old.expiresAt! } });
    },
  );
};
