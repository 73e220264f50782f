import Type from 'typebox';
import { MILKS, STATUSES, TAG_PATTERN, TEXTURES } from './cheese.model.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

const Nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** Human-facing text: never only invisible characters (kernel/text.ts). */
const Text = (maxLength: number, extra: Record<string, unknown> = {}) => Type.String({ minLength: 1, maxLength, pattern: VISIBLE_TEXT_PATTERN, ...extra });

export const Status = Type.Enum([...STATUSES], { description: 'Listing state. Reaching 0 kg of stock sets `sold`; a restock from 0 sets `available`.' });
export const Milk = Type.Enum([...MILKS]);
export const Texture = Type.Enum([...TEXTURES], { description: 'A blue-mould cheese is `blue` even if crumbly.' });
export const TagName = Type.String({ pattern: TAG_PATTERN, description: 'Lower-case kebab-case, e.g. `raw-milk`.' });

export const Category = Type.Object({ id: Type.Integer({ format: 'int64' }), name: Type.String() }, { $id: 'Category' });
type NamedEntity = Type.Static<typeof Category>;
export const Tag = Type.Object({ id: Type.Integer({ format: 'int64' }), name: Type.String() }, { $id: 'Tag' });

const AgingStage = Type.Object(
  {
    name: Text(80),
    weeks: Type.Integer({ minimum: 0, maximum: 600 }),
    temperatureC: Type.Number({ minimum: -5, maximum: 40 }),
    humidityPct: Type.Number({ minimum: 0, maximum: 100 }),
  },
  { additionalProperties: false },
);
const AgingProfile = Type.Object({ stages: Type.Array(AgingStage, { maxItems: 10 }) }, { additionalProperties: false, description: 'Structured maturation data (2.2.0).' });
const ServingTemp = Type.Object(
  { min: Type.Integer({ minimum: -5, maximum: 40 }), max: Type.Integer({ minimum: -5, maximum: 40 }) },
  { additionalProperties: false },
);
const Months = Type.Array(Type.Integer({ minimum: 1, maximum: 12 }), { maxItems: 12, uniqueItems: true, description: 'Months (1 = January) in which a seasonal cheese is sold.' });

/** The full resource: Form A fields plus Form B attributes in camelCase (decisions.md §3). */
const cheeseProperties = {
    id: Type.Integer({ format: 'int64', examples: [42] }),
    slug: Type.String({ description: 'URL-safe, unique, derived from the name; usable wherever an id is.', examples: ['comte-24-mois'] }),
    name: Type.String({ examples: ['Comté 24 mois'] }),
    category: Nullable(Type.Unsafe<NamedEntity>({ $ref: 'Category#' })),
    photoUrls: Type.Array(Type.String({ format: 'uri' })),
    tags: Type.Array(Type.Unsafe<NamedEntity>({ $ref: 'Tag#' })),
    status: Status,
    origin: Nullable(Type.String({ description: 'Country of origin.' })),
    region: Nullable(Type.String()),
    producer: Nullable(Type.String()),
    milk: Nullable(Milk),
    pasteurized: Nullable(Type.Boolean()),
    texture: Nullable(Texture),
    rind: Nullable(Type.String()),
    agedWeeks: Nullable(Type.Integer({ description: 'Typical ageing; stored unit.' })),
    ageMonths: Nullable(Type.Integer({ description: 'floor(agedWeeks / 4.345).' })),
    tastingNotes: Nullable(Type.String()),
    stinkinessRating: Nullable(Type.Integer({ minimum: 1, maximum: 10 })),
    servingTempCelsius: Nullable(ServingTemp),
    pairings: Type.Array(Type.String()),
    seasonal: Type.Boolean(),
    availableMonths: Months,
    agingProfile: Nullable(AgingProfile),
    organic: Type.Boolean(),
    pricePerKg: Nullable(Type.Number({ description: 'USD per kilogram.' })),
    inStock: Type.Boolean({ description: 'stockQuantityKg > 0.' }),
    stockQuantityKg: Type.Number(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
};
export const Cheese = Type.Object(cheeseProperties, { $id: 'Cheese', description: 'A cheese: Form A fields plus Form B attributes in camelCase.' });
/** A cheese as the API presents it: the type of the schema, so the two cannot disagree. */
export type CheeseView = Type.Static<typeof Cheese>;
/** Every field of the resource, in the schema's order (sparse fieldsets, CSV columns). */
export const CHEESE_FIELDS = Object.keys(cheeseProperties) as (keyof CheeseView)[];
export const CheeseRef = Type.Unsafe<Type.Static<typeof Cheese>>({ $ref: 'Cheese#' });

const OriginInput = Type.Union([
  Nullable(Text(100)),
  Type.Object(
    { country: Text(100), region: Type.Optional(Nullable(Text(100))), producer: Type.Optional(Nullable(Text(200))) },
    { additionalProperties: false, description: "Form B's object form; stored as origin + region + producer." },
  ),
]);
const NamedRef = Type.Object(
  { id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })), name: Type.Optional(Text(100)) },
  { additionalProperties: false, description: 'Give `name` (found case-insensitively, created if new); `id` alone refers to an existing one; `id` and `name` together must agree (case aside), else 422: a disagreement never creates one.' },
);
const TagRef = Type.Object(
  { id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })), name: Type.Optional(TagName) },
  { additionalProperties: false, description: 'Give `name` (created if new); `id` alone refers to an existing tag; `id` and `name` together must agree, else 422 naming `tags.N`.' },
);

/** Every field a client may write. */
export const writableFields = {
  category: Type.Optional(Nullable(NamedRef)),
  photoUrls: Type.Optional(
    Type.Array(Type.String({ format: 'uri', maxLength: 2000 }), {
      maxItems: 20,
      description: 'Absolute `http://` or `https://` URLs with a host and no credentials; anything else (`javascript:`, `data:`, relative) is a 422 naming `photoUrls.N`. Our own image URLs are ignored: uploads manage them. Alias: photo_urls.',
    }),
  ),
  tags: Type.Optional(Type.Array(TagRef, { maxItems: 20 })),
  status: Type.Optional(Status),
  origin: Type.Optional(OriginInput),
  region: Type.Optional(Nullable(Text(100))),
  producer: Type.Optional(Nullable(Text(200))),
  milk: Type.Optional(Nullable(Milk)),
  pasteurized: Type.Optional(Nullable(Type.Boolean())),
  texture: Type.Optional(Nullable(Texture)),
  rind: Type.Optional(Nullable(Text(60))),
  agedWeeks: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 522, description: 'Alias: aged_weeks.' }))),
  ageMonths: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 120, description: 'Stored as weeks = ceil(months x 4.345); must agree with agedWeeks if both are sent.' }))),
  tastingNotes: Type.Optional(Nullable(Text(2000))),
  stinkinessRating: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10, description: 'Integer 1..10; a float is refused.' }))),
  servingTempCelsius: Type.Optional(Nullable(ServingTemp)),
  pairings: Type.Optional(Type.Array(Text(100), { maxItems: 20 })),
  seasonal: Type.Optional(Type.Boolean()),
  availableMonths: Type.Optional(Nullable(Months)),
  agingProfile: Type.Optional(Nullable(AgingProfile)),
  organic: Type.Optional(Type.Boolean()),
  pricePerKg: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 100000, description: 'USD, at most two decimals (whole cents): more is a 422, never rounded. Alias: price_per_kg.' }))),
  stockQuantityKg: Type.Optional(Type.Number({ minimum: 0, maximum: 1000000, description: 'At most three decimals (whole grams): more is a 422, never rounded. Alias: stock_quantity_kg.' })),
};

export const CheeseInput = Type.Object(
  { name: Text(200), ...writableFields },
  {
    additionalProperties: false,
    description: 'Only `name` is required; `status` defaults to `available`. snake_case names of Form B are accepted as aliases.',
    examples: [
      {
        name: 'Tomme de Chèvre du Berry',
        category: { name: 'Semi-soft' },
        tags: [{ name: 'raw-milk' }],
        milk: 'goat',
        texture: 'semi-soft',
        origin: 'France',
        region: 'Centre-Val de Loire',
        agedWeeks: 8,
        pricePerKg: 34.5,
        stockQuantityKg: 12,
      },
    ],
  },
);

/** Body of PUT /cheeses: a Cheese. Read-only fields may be sent back and are ignored. */
export const CheeseReplace = Type.Object(
  {
    id: Type.Union([Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^[a-z0-9-]{1,120}$' })], { description: 'The cheese to replace: id or slug.' }),
    name: Text(200),
    ...writableFields,
    status: Status,
    slug: Type.Optional(Type.String()),
    inStock: Type.Optional(Type.Boolean()),
    createdAt: Type.Optional(Type.String()),
    updatedAt: Type.Optional(Type.String()),
  },
  {
    additionalProperties: false,
    description: 'Replaces every writable field; omitted optional fields return to their defaults, except stockQuantityKg, which is kept when omitted.',
    examples: [{ id: 'tomme-de-chevre-du-berry', name: 'Tomme de Chèvre du Berry', status: 'available', milk: 'goat', texture: 'semi-soft', origin: 'France', pricePerKg: 36 }],
  },
);

/** A partial update: the bulk `update` operation. */
export const CheesePatch = Type.Object(
  { name: Type.Optional(Text(200)), ...writableFields },
  { additionalProperties: false },
);

export const CheeseList = Type.Object(
  {
    items: Type.Array(Type.Partial(Type.Object(cheeseProperties)), { description: 'With `fields=`, only those fields (and `id`).' }),
    nextCursor: Nullable(Type.String({ description: 'Opaque. Null exactly when hasMore is false.' })),
    hasMore: Type.Boolean(),
    total: Type.Integer({ description: 'Number of cheeses matching the filters.' }),
  },
  { description: 'A page of cheeses (keyset pagination).' },
);

export const Inventory = Type.Object(
  { available: Type.Integer(), pending: Type.Integer(), sold: Type.Integer() },
  { additionalProperties: Type.Integer(), description: 'Number of cheeses in each status.' },
);

export const ImageUpload = Type.Object(
  {
    id: Type.Integer({ format: 'int64' }),
    imageUrl: Type.String({ format: 'uri' }),
    thumbnailUrl: Type.String({ format: 'uri' }),
    size: Type.Integer({ description: 'Bytes of the stored image.' }),
    contentType: Type.Enum(['image/jpeg', 'image/png', 'image/webp']),
    width: Type.Integer(),
    height: Type.Integer(),
    caption: Nullable(Type.String()),
    isPrimary: Type.Boolean(),
  },
  { description: 'The stored image.' },
);
