import type { CheeseStatus } from './catalogue.table.js';

export const STATUSES = ['available', 'pending', 'sold'] as const satisfies readonly CheeseStatus[];
export const MILKS = ['cow', 'sheep', 'goat', 'buffalo', 'mixed'] as const;
export const TEXTURES = ['soft', 'semi-soft', 'semi-hard', 'hard', 'blue'] as const;
export const WEEKS_PER_MONTH = 4.345;
export type Milk = (typeof MILKS)[number];
export type Texture = (typeof TEXTURES)[number];
export const TAG_PATTERN = '^[a-z0-9][a-z0-9-]{0,39}$';

export interface AgingStage {
  name: string;
  weeks: number;
  temperatureC: number;
  humidityPct: number;
}

/** A cheese as the API presents it (camelCase, both forms' fields). */
export interface CheeseView {
  id: number;
  slug: string;
  name: string;
  category: { id: number; name: string } | null;
  photoUrls: string[];
  tags: { id: number; name: string }[];
  status: CheeseStatus;
  origin: string | null;
  region: string | null;
  producer: string | null;
  milk: Milk | null;
  pasteurized: boolean | null;
  texture: Texture | null;
  rind: string | null;
  agedWeeks: number | null;
  ageMonths: number | null;
  tastingNotes: string | null;
  stinkinessRating: number | null;
  servingTempCelsius: { min: number; max: number } | null;
  pairings: string[];
  seasonal: boolean;
  availableMonths: number[];
  agingProfile: { stages: AgingStage[] } | null;
  organic: boolean;
  pricePerKg: number | null;
  inStock: boolean;
  stockQuantityKg: number;
  createdAt: string;
  updatedAt: string;
}

/** Every writable attribute, resolved and validated: what repositories store. */
export interface CheeseDraft {
  name: string;
  categoryName: string | null;
  tagNames: string[];
  photoUrls: string[];
  status: CheeseStatus;
  origin: string | null;
  region: string | null;
  producer: string | null;
  milk: Milk | null;
  pasteurized: boolean | null;
  texture: Texture | null;
  rind: string | null;
  agedWeeks: number | null;
  tastingNotes: string | null;
  stinkinessRating: number | null;
  servingTempCelsius: { min: number; max: number } | null;
  pairings: string[];
  seasonal: boolean;
  availableMonths: number[];
  agingProfile: { stages: AgingStage[] } | null;
  organic: boolean;
  priceCents: number | null;
  stockGrams: number;
}

/** Stored weeks -> months read back (decisions.md §3). */
export function weeksToMonths(weeks: number | null): number | null {
  return weeks === null ? null : Math.floor(weeks / WEEKS_PER_MONTH);
}

/** Months given -> weeks stored, chosen so the months read back unchanged. */
export function monthsToWeeks(months: number): number {
  return Math.ceil(months * WEEKS_PER_MONTH);
}

/**
 * Case-folded key for case-insensitive equality ("Époisses" = "ÉPOISSES"). Computed here and
 * stored, because SQL lower() folds only ASCII on SQLite and depends on the locale on PostgreSQL.
 */
export function foldCase(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** Lower-case, accents removed, every run of non-alphanumerics one space: "Saint-Nectaire" = "saint nectaire". */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** Path segments under /cheeses that name operations, not cheeses. */
const RESERVED_SLUGS = new Set(['seasonal', 'bulk', 'findbystatus', 'findbytags']);

/** URL-safe slug; never all digits nor an operation's name, so a path segment is unambiguous. */
export function slugify(name: string): string {
  const slug = normalizeText(name).replaceAll(' ', '-').slice(0, 100).replace(/-+$/, '') || 'cheese';
  return /^[0-9]+$/.test(slug) || RESERVED_SLUGS.has(slug) ? `cheese-${slug}` : slug;
}

export function monthsToMask(months: readonly number[]): number {
  return months.reduce((mask, m) => mask | (1 << m), 0);
}

export function maskToMonths(mask: number): number[] {
  const months: number[] = [];
  for (let m = 1; m <= 12; m++) if (mask & (1 << m)) months.push(m);
  return months;
}

export function kgToGrams(kg: number): number {
  return Math.round(kg * 1000);
}

export function dollarsToCents(dollars: number): number {
  return Math.round(dollars * 100);
}
