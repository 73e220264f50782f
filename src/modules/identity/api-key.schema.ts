import Type from 'typebox';
import { SCOPES } from '../../kernel/scopes.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

export const ScopeSchema = Type.Enum([...SCOPES]);

export const ApiKey = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    name: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String({ description: 'The first 16 characters, to tell keys apart.', examples: ['sk_test_Xq3v9Lm2'] }),
    last4: Type.Union([Type.String({ minLength: 4, maxLength: 4 }), Type.Null()], { description: 'The last 4 characters; null for keys made before 2.5.', examples: ['x9Qa'] }),
    environment: Type.Enum(['live', 'test']),
    scopes: Type.Array(ScopeSchema),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Updated at most once a minute.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'ApiKey' },
);

export const CreatedApiKey = Type.Object(
  {
    ...ApiKey.properties,
    key: Type.String({ description: 'The key itself. Shown only in this response: store it now.' }),
  },
  { $id: 'CreatedApiKey' },
);

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100, pattern: VISIBLE_TEXT_PATTERN }), Type.Null()])),
    scopes: Type.Array(ScopeSchema, {
      minItems: 1,
      maxItems: SCOPES.length,
      uniqueItems: true,
      description: 'Never more than the owner may hold, nor more than the credential creating it carries.',
    }),
    expiresAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the key stops working; omitted: never, or when the creating credential expires.' }),
    ),
  },
  // No expiresAt in the example: a fixed date would one day make "Try it out" fail.
  { additionalProperties: false, examples: [{ name: 'storefront', scopes: ['read:cheeses'] }] },
);

export const RollApiKeyBody = Type.Object(
  {
    oldKeyExpiresInSeconds: Type.Optional(
      Type.Enum([0, 3600, 86400, 604800], {
        default: 86400,
        description: 'How long the old key keeps working, in seconds: 0 (refused at once), 3600 (1 hour), 86400 (24 hours, the default) or 604800 (7 days); never longer than it would have.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ oldKeyExpiresInSeconds: 3600 }] },
);

export const RolledApiKey = Type.Object(
  {
    ...CreatedApiKey.properties,
    replaces: Type.Object(
      {
        id: Type.Integer({ format: 'int64', description: 'The key rolled.' }),
        expiresAt: Type.String({ format: 'date-time', description: 'When the old key stops working.' }),
      },
      { description: 'The old key: it works until `expiresAt`, and no longer counts against the 3 active keys.' },
    ),
  },
  { $id: 'RolledApiKey' },
);
