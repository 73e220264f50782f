import Type from 'typebox';
import { CUSTOMER_TIERS } from './customer.table.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const USERNAME_PATTERN = '^[A-Za-z0-9_.-]{3,64}$';
export const MIN_PASSWORD_LENGTH = 12;

const FavouriteByReference = Type.Object(
  {
    cheeseId: Type.Union([Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^[a-z0-9-]{1,120}$' })], {
      description: 'The cheese, by id or slug. Answers carry the integer id.',
      examples: [42],
    }),
    name: Type.Optional(Type.String({ readOnly: true, description: 'In answers: the cheese\'s name. Ignored in requests.' })),
  },
  { additionalProperties: false, title: 'FavouriteCheeseByReference', description: 'A cheese of the catalogue. If it is later deleted, the favourite remains by name.' },
);
const FavouriteByName = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200, pattern: VISIBLE_TEXT_PATTERN, examples: ['The Stilton my grandmother bought'] }) },
  { additionalProperties: false, title: 'FavouriteCheeseByName', description: 'Any cheese, named freely (it need not be in the catalogue).' },
);
export const FavouriteCheese = Type.Union([FavouriteByReference, FavouriteByName], {
  description: 'By reference (`{"cheeseId": 42}`) or by name (`{"name": "…"}`).',
});

/** Form A's Customer, plus `updatedAt` like every resource. */
export const Customer = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    username: Type.String({ examples: ['marie.dupont'] }),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    email: Type.String({ format: 'email' }),
    phone: Nullable(Type.String()),
    customerStatus: Type.Enum([...CUSTOMER_TIERS], { description: 'The tier, by kilograms of orders delivered over the last 12 months: `silver` from 10 kg, `gold` from 30 kg, `platinum` from 75 kg, `bronze` below (and for a new customer). Recomputed at each delivery and hourly as deliveries age out.' }),
    favouriteCheese: Nullable(FavouriteCheese),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Customer' },
);
export type CustomerView = Type.Static<typeof Customer>;

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: VISIBLE_TEXT_PATTERN });

/** Form A's CustomerInput: sign-up (POST /customer) and the full replacement (PUT /customer/{username}). */
export const CustomerInput = Type.Object(
  {
    username: Type.String({ pattern: USERNAME_PATTERN, description: '3 to 64 of A-Z a-z 0-9 _ . -; unique regardless of case.', examples: ['marie.dupont'] }),
    firstName: Type.Optional(Nullable(Name)),
    lastName: Type.Optional(Nullable(Name)),
    email: Type.String({ format: 'email', maxLength: 254, description: 'Unique regardless of case.', examples: ['marie@example.com'] }),
    password: Type.String({
      format: 'password',
      minLength: MIN_PASSWORD_LENGTH,
      maxLength: 256,
      description: `${MIN_PASSWORD_LENGTH} to 256 characters with at least 4 different ones, not containing the username or the e-mail's local part (when 3 or more characters long; regardless of case). On PUT: the current password re-confirms it; another one replaces it and ends the account's other login sessions.`,
      examples: ['correct horse battery staple'],
    }),
    phone: Type.Optional(Nullable(Type.String({ pattern: '^\\+?[0-9 ().-]{6,30}$', examples: ['+33 1 23 45 67 89'] }))),
    favouriteCheese: Type.Optional(Nullable(FavouriteCheese)),
  },
  {
    additionalProperties: false,
    examples: [
      { username: 'marie.dupont', firstName: 'Marie', lastName: 'Dupont', email: 'marie@example.com', password: 'correct horse battery staple', phone: '+33 1 23 45 67 89', favouriteCheese: { cheeseId: 'comte-24-mois' } },
    ],
  },
);
export type CustomerInputBody = Type.Static<typeof CustomerInput>;

/** PUT /customer/{username}: CustomerInput and the proof a new password needs. */
export const CustomerReplaceInput = Type.Object(
  {
    ...CustomerInput.properties,
    currentPassword: Type.Optional(
      Type.String({
        format: 'password',
        minLength: 1,
        maxLength: 256,
        description: 'The account\'s current password: required when `password` is a new one. An e-mail change with the current `password` needs nothing more. A third-party application\'s OAuth token can change neither (403).',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ username: 'marie.dupont', email: 'marie@example.com', password: 'a new correct horse battery', currentPassword: 'correct horse battery staple' }] },
);
export type CustomerReplaceBody = Type.Static<typeof CustomerReplaceInput>;

const StillValidKey = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  keyPrefix: Type.String(),
  scopes: Type.Array(Type.String()),
  expiresAt: Nullable(Type.String({ format: 'date-time' })),
});

/** The answer to PUT /customer/{username}: the customer, and what a new password ended and left valid. */
export const ReplacedCustomer = Type.Object(
  {
    ...Customer.properties,
    passwordChange: Type.Optional(
      Type.Object(
        {
          loginSessionsEnded: Type.Integer({ description: 'Login sessions ended: every one of the account\'s but the one making this request.' }),
          oauthGrantsRevoked: Type.Integer({ description: 'Third-party applications whose access (every token) was revoked: they must ask the customer again.' }),
          apiKeysStillValid: Type.Array(StillValidKey, { description: 'API keys keep working after a password change: revoke any you do not recognise (DELETE /v2/api-keys/{id}).' }),
        },
        { description: 'Present when `password` was a new one.' },
      ),
    ),
  },
  { $id: 'ReplacedCustomer' },
);
export type ReplacedCustomerView = Type.Static<typeof ReplacedCustomer>;
