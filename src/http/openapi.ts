import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { securityFor } from './auth.js';
import { SCOPE_DESCRIPTIONS } from '../modules/identity/scopes.js';
import { API_VERSION } from '../version.js';

const DESCRIPTION = `The Fromagerie API: an online store for artisanal cheese.

One deployment serves both forms of the interface (the 2.0.0 Petstore-style reference and
the workflow form) over one data model. Bodies are camelCase; Form B's snake_case names are
accepted as input aliases where noted. Every error is \`{code, type, message}\` (422 adds
\`errors\`). Identifiers in paths accept the integer id or the slug. Every product decision
is listed in docs/decisions.md of the repository.

Authentication: API keys (\`sk_test_…\` in development and sandbox, \`sk_live_…\` in
production) in \`X-API-Key\` or \`Authorization: Bearer\`; OAuth 2.0 and login tokens arrive
in a later release. 401 means the credential is missing or invalid; 403 that it lacks the
scope.`;

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Fromagerie API', version: API_VERSION, description: DESCRIPTION },
      servers: [{ url: `${publicUrl}/v2`, description: 'This deployment' }],
      tags: [
        { name: 'cheeses', description: 'The catalogue' },
        { name: 'store', description: 'Inventory' },
        { name: 'api-keys', description: 'Your API keys' },
        { name: 'health', description: 'Operations' },
      ],
      components: {
        securitySchemes: {
          api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An `sk_live_…` or `sk_test_…` key.' },
          api_key_bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'sk_live_… / sk_test_… API key', description: 'The same API key as `Authorization: Bearer sk_…` (Form B).' },
          bearer_auth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A login token from POST /customer/login.' },
          cheesy_oauth: {
            type: 'oauth2',
            flows: {
              authorizationCode: { authorizationUrl: `${publicUrl}/oauth/authorize`, tokenUrl: `${publicUrl}/oauth/token`, scopes: SCOPE_DESCRIPTIONS },
              implicit: { authorizationUrl: `${publicUrl}/oauth/authorize`, scopes: SCOPE_DESCRIPTIONS },
            },
          },
        },
      },
    },
    // Paths are declared relative to the /v2 server URL.
    transform: ({ schema, url, route }) => {
      const security = securityFor(route.config?.auth);
      const transformed = { ...(schema as Record<string, unknown>) } as Record<string, unknown>;
      transformed.security = security;
      return { schema: transformed as typeof schema, url: url.replace(/^\/v2/, '') };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true }, staticCSP: true });
}
