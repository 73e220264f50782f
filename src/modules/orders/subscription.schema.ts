import Type from 'typebox';
import { COUNTRY_CODE_FORMAT } from '../../kernel/countries.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { SHIPPING_METHODS } from './order.table.js';

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: VISIBLE_TEXT_PATTERN });
const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Address = Type.Object(
  {
    line1: Text(200),
    city: Text(100),
    region: Type.Optional(Nullable(Text(100))),
    postalCode: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 -]{0,11}$' }))),
    country: Type.String({ format: COUNTRY_CODE_FORMAT, description: 'ISO 3166-1 alpha-2 (`FR`, `us`): a code that exists.' }),
  },
  { additionalProperties: false },
);

export const SubscriptionInput = Type.Object(
  {
    quantity_kg: Type.Number({ minimum: 0.1, maximum: 5, multipleOf: 0.05, description: 'Each month\'s cheese: 0.1 to 5 kg, a multiple of 0.05.' }),
    shipping: Type.Object({ method: Type.Enum([...SHIPPING_METHODS]), address: Address }, { additionalProperties: false }),
    dayOfMonth: Type.Optional(Type.Integer({ minimum: 1, maximum: 28, description: 'The day each month\'s order is placed (09:00 UTC); 1 to 28 so every month has it. Default 1.' })),
  },
  { additionalProperties: false, examples: [{ quantity_kg: 0.5, shipping: { method: 'temperature_controlled', address: { line1: '12 rue des Fromagers', city: 'Lyon', country: 'FR' } }, dayOfMonth: 5 }] },
);
export type SubscriptionInputBody = Type.Static<typeof SubscriptionInput>;

export const Subscription = Type.Object(
  {
    plan: Type.Literal('cheese_of_the_month'),
    status: Type.Enum(['active', 'cancelled']),
    quantityKg: Type.Number(),
    shipping: Type.Object({ method: Type.Enum([...SHIPPING_METHODS]), address: Type.Object({ line1: Type.String(), city: Type.String(), region: Nullable(Type.String()), postalCode: Nullable(Type.String()), country: Type.String() }) }),
    dayOfMonth: Type.Integer(),
    nextOrderAt: Nullable(Type.String({ format: 'date-time', description: 'When the next month\'s order is placed; null once cancelled.' })),
    lastOrderId: Nullable(Type.Integer({ format: 'int64', description: 'The order placed last (GET /orders/{id}).' })),
    lastProblem: Nullable(Type.String({ description: 'Why the last attempt placed nothing (nothing in stock that suits); retried the next day.' })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Subscription' },
);
export type SubscriptionView = Type.Static<typeof Subscription>;
