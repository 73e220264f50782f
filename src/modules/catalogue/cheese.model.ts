import type { CheeseStatus } from './catalogue.table.js';

export const STATUSES = ['available', 'pending', 'sold'] as const satisfies readonly CheeseStatus[];
export const MILKS = ['cow', 'sheep', 'goat', 'buffalo', 'mixed'] as const;
export const TEXTURES = ['soft', 'semi-soft', 'semi-hard', 'hard', 'blue'] as const;
export const WEEKS_PER_MONTH = 4.345;
export type Milk = (typeof MILKS)[number];
export type Texture = (typeof TEXTURES)[number];
export const TAG_PATTERN = '^[a-z0-9][a-z0-9-]{0,39}$';

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

/** Stored grams of a stock read back from a view (`grams / 1000`), exactly. */
export function kgToGrams(kg: number): number {
  return toExactUnits(kg, 3)!;
}

/** A number as JSON writes it: optional sign, digits, optional fraction, optional exponent. */
const DECIMAL = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/;

/**
 * `value × 10^decimals` as an exact integer, or null when `value` has more decimals than
 * that (1.005 dollars is not a whole number of cents; nor is 1e-9): never rounded silently.
 * Judged on the shortest decimal that reads back as the same double (`String(value)`, what
 * JSON.stringify writes), in decimal digits rather than float arithmetic, so 0.29 is exactly
 * 29 cents and 1.000000001 is refused however close it is to a whole cent.
 */
export function toExactUnits(value: number, decimals: number): number | null {
  const match = Number.isFinite(value) ? DECIMAL.exec(String(value)) : null;
  if (!match) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = (whole + fraction).replace(/^0+(?=.)/, '');
  // value = digits × 10^scale, with trailing zeros of digits folded into the scale.
  const trailingZeros = digits === '0' ? 0 : digits.length - digits.replace(/0+$/, '').length;
  const scale = Number(exponent) - fraction.length + trailingZeros + decimals;
  if (scale < 0) return null;
  const units = BigInt(digits.slice(0, digits.length - trailingZeros) || '0') * 10n ** BigInt(scale);
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(sign ? -units : units);
}

/**
 * Whether `url` is an absolute http(s) URL with a host and no credentials: what a client may
 * list in photoUrls. The `//` is required as written, because WHATWG parsing (browsers, `new
 * URL`) quietly repairs `https:example.com` and `http:/x` into other URLs than the text we
 * would store; credentials would be published, and browsers refuse to load images with them.
 */
export function isWebUrl(url: string): boolean {
  if (!/^https?:\/\/[^/\\]/i.test(url)) return false;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '' && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

/** Stored cents of a price read back from a view (`cents / 100`), exactly. */
export function dollarsToCents(dollars: number): number {
  return toExactUnits(dollars, 2)!;
}
