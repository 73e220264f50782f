import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';

/**
 * Asked inside the deleting transaction before a cheese goes (decisions.md §4): cancel the
 * open orders holding it, or refuse with a ConflictError when one has shipped. Declared here,
 * implemented by the orders module, so orders can plug in without catalogue importing it.
 */
export interface CheeseDeletionPort {
  beforeCheeseDeleted(trx: Transaction<DB>, cheeseId: number, ctx: ChangeContext): Promise<void>;
}

/** What catalogue offers other modules about cheeses: a lookup inside their own transaction. */
export interface CheeseDirectory {
  /** The cheese by id or slug, or undefined. */
  find(executor: Kysely<DB>, idOrSlug: string | number): Promise<{ id: number; name: string } | undefined>;
  /** The ids of several cheeses given by id or slug, in order; undefined where there is no such cheese. */
  idsOf(executor: Kysely<DB>, idsOrSlugs: readonly (string | number)[]): Promise<(number | undefined)[]>;
  /** Ids and prices (cents per kg; null when unpriced) of cheeses by id or slug, in order, read without locks: a quote, which the locked read confirms. */
  pricesOf(executor: Kysely<DB>, idsOrSlugs: readonly (string | number)[]): Promise<({ id: number; priceCents: number | null } | undefined)[]>;
  /** Every cheese's tasting facts, for recommendations (the whole catalogue: a few hundred rows). */
  profiles(executor: Kysely<DB>): Promise<CheeseProfile[]>;
  /** Ids of cheeses that can be ordered now (available, priced, at least `minGrams` in stock), by id. */
  orderable(executor: Kysely<DB>, minGrams: number, limit: number): Promise<number[]>;
}

/** What recommendations weigh about a cheese. */
export interface CheeseProfile {
  id: number;
  slug: string;
  name: string;
  milk: string | null;
  texture: string | null;
  origin: string | null;
  stinkiness: number | null;
  organic: boolean;
  /** Available, priced and in stock: it can be ordered now. */
  orderable: boolean;
  pricePerKg: number | null;
}
