import Type from 'typebox';
import { COUNTRY_CODE_FORMAT } from '../../kernel/countries.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: VISIBLE_TEXT_PATTERN });

export const Address = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    label: Nullable(Type.String({ examples: ['Home'] })),
    recipient: Nullable(Type.String({ description: 'Whom the parcel is for, when not the customer.' })),
    line1: Type.String({ examples: ['12 rue des Fromagers'] }),
    line2: Nullable(Type.String()),
    city: Type.String({ examples: ['Lyon'] }),
    region: Nullable(Type.String()),
    postalCode: Nullable(Type.String({ examples: ['69002'] })),
    country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2.', examples: ['FR'] }),
    phone: Nullable(Type.String()),
    isDefault: Type.Boolean({ description: 'Exactly one address of a customer is the default: orders ship there unless told otherwise.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Address' },
);
export type AddressView = Type.Static<typeof Address>;

const fields = {
  label: Type.Optional(Nullable(Text(60))),
  recipient: Type.Optional(Nullable(Text(100))),
  line1: Text(200),
  line2: Type.Optional(Nullable(Text(200))),
  city: Text(100),
  region: Type.Optional(Nullable(Text(100))),
  postalCode: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,11}$' }))),
  country: Type.String({ format: COUNTRY_CODE_FORMAT, description: 'ISO 3166-1 alpha-2 (`FR`, `gb`): a code that exists.' }),
  phone: Type.Optional(Nullable(Type.String({ pattern: '^\\+?[0-9 ().-]{6,30}$' }))),
  isDefault: Type.Optional(Type.Boolean({ description: 'Make this the default address (the first one always is).' })),
};

export const AddressInput = Type.Object(fields, {
  additionalProperties: false,
  examples: [{ label: 'Home', line1: '12 rue des Fromagers', city: 'Lyon', postalCode: '69002', country: 'FR', isDefault: true }],
});
export type AddressInputBody = Type.Static<typeof AddressInput>;

/** A partial update: only the fields sent change (`null` clears an optional one). */
export const AddressPatch = Type.Partial(Type.Object(fields), { additionalProperties: false, minProperties: 1 });
export type AddressPatchBody = Type.Static<typeof AddressPatch>;
