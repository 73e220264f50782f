import type Type from 'typebox';
import { ValidationFailedError, type FieldError } from '../../kernel/errors.js';
import { hasVisibleText, VISIBLE_TEXT_MESSAGE } from '../../kernel/text.js';
import type { CheeseInput, CheesePatch, CheeseView } from './cheese.schema.js';
import { dollarsToCents, isWebUrl, kgToGrams, monthsToWeeks, toExactUnits, weeksToMonths } from './cheese.model.js';

/** Form B's snake_case names, accepted on input (decisions.md §1). */
export const INPUT_ALIASES: Record<string, string> = {
  photo_urls: 'photoUrls',
  price_per_kg: 'pricePerKg',
  aged_weeks: 'agedWeeks',
  age_months: 'ageMonths',
  tasting_notes: 'tastingNotes',
  stinkiness_rating: 'stinkinessRating',
  serving_temp_celsius: 'servingTempCelsius',
  available_months: 'availableMonths',
  aging_profile: 'agingProfile',
  stock_quantity_kg: 'stockQuantityKg',
  in_stock: 'inStock',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
};

/** Rewrites aliases to camelCase in place before validation; sending both spellings is a 422. */
export function normalizeAliases(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const record = body as Record<string, unknown>;
  for (const [alias, name] of Object.entries(INPUT_ALIASES)) {
    if (!Object.hasOwn(record, alias)) continue;
    if (Object.hasOwn(record, name)) throw ValidationFailedError.field(alias, `is the same field as ${name}; send only one`);
    record[name] = record[alias];
    delete record[alias];
  }
}

/**
 * Every writable attribute, resolved and validated: what repositories store. The view's
 * fields, less those the server derives, with references by name and money and stock in
 * integer cents and grams.
 */
export type CheeseDraft = Omit<CheeseView, 'id' | 'slug' | 'category' | 'tags' | 'ageMonths' | 'pricePerKg' | 'inStock' | 'stockQuantityKg' | 'createdAt' | 'updatedAt'> & {
  categoryName: string | null;
  tagNames: string[];
  priceCents: number | null;
  stockGrams: number;
};

type Writable = Type.Static<typeof CheesePatch>;
type Create = Type.Static<typeof CheeseInput>;

/** The draft a brand-new cheese (or a full replacement) starts from. */
export function emptyDraft(name: string): CheeseDraft {
  return {
    name,
    categoryName: null,
    tagNames: [],
    photoUrls: [],
    status: 'available',
    origin: null,
    region: null,
    producer: null,
    milk: null,
    pasteurized: null,
    texture: null,
    rind: null,
    agedWeeks: null,
    tastingNotes: null,
    stinkinessRating: null,
    servingTempCelsius: null,
    pairings: [],
    seasonal: false,
    availableMonths: [],
    agingProfile: null,
    organic: false,
    priceCents: null,
    stockGrams: 0,
  };
}

/** The current state of a cheese as a draft, so a partial update can be applied on top. */
export function draftFromView(view: CheeseView): CheeseDraft {
  const { id: _id, slug: _slug, category, tags, ageMonths: _ageMonths, pricePerKg, inStock: _inStock, stockQuantityKg, createdAt: _c, updatedAt: _u, ...described } = view;
  return {
    ...described,
    categoryName: category?.name ?? null,
    tagNames: tags.map((t) => t.name),
    priceCents: pricePerKg === null ? null : dollarsToCents(pricePerKg),
    stockGrams: kgToGrams(stockQuantityKg),
  };
}

export interface ResolvedRefs {
  /** Category name resolved from `{id}` when only the id was sent. */
  categoryName: (ref: { id?: number; name?: string }) => string | null;
  tagName: (ref: { id?: number; name?: string }, index: number) => string;
}

/**
 * Applies the fields present in `input` to `base` and checks the rules that span fields.
 * Throws one ValidationFailedError listing every problem.
 */
export function applyInput(base: CheeseDraft, input: Writable | Create, refs: ResolvedRefs): CheeseDraft {
  const draft = { ...base };
  const errors: FieldError[] = [];
  const has = (key: keyof Writable) => Object.hasOwn(input, key) && input[key] !== undefined;

  if (input.name !== undefined) draft.name = input.name.trim();
  if (has('category')) draft.categoryName = input.category ? refs.categoryName(input.category) : null;
  if (has('tags')) draft.tagNames = [...new Set((input.tags ?? []).map((t, i) => refs.tagName(t, i)))];
  if (has('photoUrls')) {
    draft.photoUrls = input.photoUrls ?? [];
    draft.photoUrls.forEach((url, i) => isWebUrl(url) || errors.push({ field: `photoUrls.${i}`, message: 'must be an absolute http(s) URL (http:// or https://, a host, no credentials)' }));
  }
  if (has('status')) draft.status = input.status!;
  if (has('origin')) {
    const origin = input.origin;
    if (origin !== null && typeof origin === 'object') {
      draft.origin = origin.country;
      if (origin.region !== undefined) draft.region = origin.region;
      if (origin.producer !== undefined) draft.producer = origin.producer;
      if ((has('region') && origin.region !== undefined) || (has('producer') && origin.producer !== undefined)) {
        errors.push({ field: 'origin', message: 'region/producer given both inside origin and beside it' });
      }
    } else {
      draft.origin = origin ?? null;
    }
  }
  for (const key of ['region', 'producer', 'milk', 'pasteurized', 'texture', 'rind', 'tastingNotes', 'stinkinessRating', 'servingTempCelsius', 'agingProfile'] as const) {
    if (has(key)) (draft as Record<string, unknown>)[key] = input[key] ?? null;
  }
  if (has('pairings')) draft.pairings = input.pairings ?? [];
  if (has('organic')) draft.organic = input.organic!;
  if (has('pricePerKg')) {
    const cents = input.pricePerKg === null || input.pricePerKg === undefined ? null : toExactUnits(input.pricePerKg, 2);
    if (cents === null && input.pricePerKg != null) errors.push({ field: 'pricePerKg', message: 'must have at most two decimals (whole cents)' });
    else draft.priceCents = cents;
  }
  if (has('stockQuantityKg')) {
    const grams = toExactUnits(input.stockQuantityKg!, 3);
    if (grams === null) errors.push({ field: 'stockQuantityKg', message: 'must have at most three decimals (whole grams)' });
    else draft.stockGrams = grams;
  }

  if (has('agedWeeks') || has('ageMonths')) {
    const weeks = input.agedWeeks ?? null;
    const months = input.ageMonths ?? null;
    if (has('agedWeeks') && has('ageMonths') && weeksToMonths(weeks) !== months) {
      errors.push({ field: 'ageMonths', message: `disagrees with agedWeeks (${weeks} weeks is ${weeksToMonths(weeks)} months)` });
    }
    draft.agedWeeks = has('agedWeeks') ? weeks : months === null ? null : monthsToWeeks(months);
  }

  if (has('availableMonths')) draft.availableMonths = [...(input.availableMonths ?? [])].sort((a, b) => a - b);
  if (has('seasonal')) draft.seasonal = input.seasonal!;
  else if (has('availableMonths')) draft.seasonal = draft.availableMonths.length > 0;
  if (draft.seasonal && draft.availableMonths.length === 0) {
    errors.push({ field: 'availableMonths', message: 'a seasonal cheese needs the months it is available' });
  }
  if (!draft.seasonal && draft.availableMonths.length > 0) {
    errors.push({ field: 'seasonal', message: 'is false but availableMonths is set; send seasonal: true or drop the months' });
  }
  if (draft.servingTempCelsius && draft.servingTempCelsius.min > draft.servingTempCelsius.max) {
    errors.push({ field: 'servingTempCelsius', message: 'min must not exceed max' });
  }
  // Also the form update's `name`, which arrives as a query parameter, outside the body schema's pattern.
  if (!hasVisibleText(draft.name)) errors.push({ field: 'name', message: VISIBLE_TEXT_MESSAGE });
  if (errors.length > 0) throw new ValidationFailedError(`The request body is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, errors);
  return draft;
}
