import Type from 'typebox';
import { MILKS, TEXTURES } from '../catalogue/catalogue.module.js';
import { VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';

const Milk = Type.Enum([...MILKS]);
const list = <T extends Type.TSchema>(item: T, description: string) => Type.Array(item, { uniqueItems: true, maxItems: 20, description });

const fields = {
  milkAllergies: list(Milk, 'Milks the customer must never be offered (recommendations exclude every cheese of these).'),
  favouriteMilks: list(Milk, 'Milks the customer likes.'),
  favouriteTextures: list(Type.Enum([...TEXTURES]), 'Textures the customer likes.'),
  favouriteCountries: list(Type.String({ minLength: 2, maxLength: 100, pattern: VISIBLE_TEXT_PATTERN }), 'Countries of origin the customer likes, as the catalogue names them (`France`).'),
  maxStinkiness: Type.Union([Type.Integer({ minimum: 1, maximum: 10 }), Type.Null()], { description: 'No cheese smellier than this (1..10), or null for no limit.' }),
  organicOnly: Type.Boolean(),
};

/** The preference profile (Form B): what recommendations and the cheese of the month draw on. */
export const Preferences = Type.Object({ ...fields, updatedAt: Type.String({ format: 'date-time' }) }, { $id: 'Preferences' });
export type PreferencesView = Type.Static<typeof Preferences>;

export const PreferencesInput = Type.Object(
  Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, Type.Optional(schema)])) as { [K in keyof typeof fields]: Type.TOptional<(typeof fields)[K]> },
  {
    additionalProperties: false,
    description: 'Replaces the whole profile; an omitted field returns to its default (empty, null, false).',
    examples: [{ milkAllergies: ['goat'], favouriteMilks: ['sheep', 'cow'], favouriteTextures: ['hard', 'blue'], favouriteCountries: ['France', 'Spain'], maxStinkiness: 7, organicOnly: false }],
  },
);
export type PreferencesInputBody = Type.Static<typeof PreferencesInput>;

export const DEFAULT_PREFERENCES: Omit<PreferencesView, 'updatedAt'> = {
  milkAllergies: [],
  favouriteMilks: [],
  favouriteTextures: [],
  favouriteCountries: [],
  maxStinkiness: null,
  organicOnly: false,
};
