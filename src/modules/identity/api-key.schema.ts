import Type from 'typebox';
import { SCOPES } from '../../kernel/scopes.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

export const ScopeSchema = Type.Enum([...SCOPES]);

export const ApiKey = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    name: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String({ description: 'The first 16 characters, to tell keys apart.', examples: ['sk_test_Xq3v9Lm2'] }),
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
