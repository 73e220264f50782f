import Type from 'typebox';
import { OAUTH_SCOPES } from '../../kernel/scopes.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { GRANTS } from './oauth-client.rules.js';

const Grant = Type.Enum([...GRANTS]);
const ClientScope = Type.Enum([...OAUTH_SCOPES]);

export const OAuthClient = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    clientId: Type.String({ examples: ['cl_4f3Jx9QbU0tEw2r8Yk1m2Q'] }),
    name: Type.String(),
    type: Type.Enum(['confidential', 'public'], { description: '`public`: a single-page or native app, which holds no secret and must use PKCE.' }),
    redirectUris: Type.Array(Type.String({ format: 'uri' }), { description: 'Matched exactly at authorization.' }),
    grants: Type.Array(Grant),
    scopes: Type.Array(ClientScope, { description: 'What the client may ask for; a user grants at most what their role allows (`admin`: staff only).' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'OAuthClient' },
);
export type OAuthClientView = Type.Static<typeof OAuthClient>;

export const CreatedOAuthClient = Type.Object(
  {
    ...OAuthClient.properties,
    clientSecret: Type.Union([Type.String(), Type.Null()], { description: 'Confidential clients only; shown in this response and never again: store it now.' }),
  },
  { $id: 'CreatedOAuthClient' },
);

export const OAuthClientInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: VISIBLE_TEXT_PATTERN }),
    type: Type.Enum(['confidential', 'public']),
    redirectUris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 10, uniqueItems: true, default: [] }),
    grants: Type.Array(Grant, { minItems: 1, uniqueItems: true }),
    scopes: Type.Array(ClientScope, { minItems: 1, uniqueItems: true }),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Cheese shop SPA', type: 'public', redirectUris: ['https://shop.example/callback'], grants: ['authorization_code', 'refresh_token'], scopes: ['read:cheeses', 'write:orders'] }],
  },
);
export type OAuthClientInputBody = Type.Static<typeof OAuthClientInput>;
