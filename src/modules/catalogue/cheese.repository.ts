import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { foldForSearch } from '../../kernel/text.js';
import { claimRows } from '../../db/claim.js';
import { isPostgres } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import { columnsExcept } from '../../db/table-columns.js';
import { CHEESE_COLUMNS, type CheeseStatus } from './catalogue.table.js';
import { foldCase, monthsToMask, slugify } from './cheese.model.js';
import type { CheeseDraft } from './cheese.input.js';
import type { CheeseProfile } from './catalogue.ports.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export const SORT_FIELDS = ['name', 'createdAt', 'updatedAt', 'pricePerKg', 'agedWeeks'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type Direction = 'asc' | 'desc';

export interface CheeseFilter {
  statuses?: CheeseStatus[];
  country?: string;
  texture?: string;
  milk?: string;
  agedWeeksMin?: number;
  organic?: boolean;
  seasonal?: boolean;
  inStock?: boolean;
  category?: string;
  /** Any of these tags. */
  tags?: string[];
  /** Normalised search terms; every one must match. */
  terms?: string[];
  /** Seasonal cheeses whose window includes this month. */
  availableInMonth?: number;
}

export interface KeysetPosition {
  value: string | number;
  id: number;
}

export interface PageRequest {
  filter: CheeseFilter;
  sort: SortField;
  direction: Direction;
  after: KeysetPosition | null;
  limit: number;
}

/**
 * The stored row, with the category joined in: every column but the keys kept only for
 * uniqueness, filtering, search and the season job. Explicit columns (docs/architecture.md):
 * never `selectAll()`.
 */
const RECORD_COLUMNS = columnsExcept(CHEESE_COLUMNS, ['name_key', 'search_text', 'origin_key', 'season_announced']).map((column) => `c.${column}` as const);

function selectCheeses(db: Kysely<DB>) {
  return db
    .selectFrom('cheeses as c')
    .leftJoin('categories as cat', 'cat.id', 'c.category_id')
    .select([...RECORD_COLUMNS, 'cat.name as category_name']);
}

export type CheeseRecord = Awaited<ReturnType<ReturnType<typeof selectCheeses>['executeTakeFirstOrThrow']>>;

const selectIdsBy = prepared((db, { ids, slugs }: { ids: number[]; slugs: string[] }) =>
  db
    .selectFrom('cheeses')
    .select(['id', 'slug', 'price_cents'])
    .where((eb) => eb.or([...(ids.length > 0 ? [eb('id', 'in', ids)] : []), ...(slugs.length > 0 ? [eb('slug', 'in', slugs)] : [])])),
);

/** The sort key as one SQL expression; nullable keys sort as -1 so keyset comparisons stay total. */
function sortExpression(sort: SortField) {
  switch (sort) {
    case 'name':
      return sql.ref('c.sort_name');
    case 'createdAt':
      return sql.ref('c.created_at');
    case 'updatedAt':
      return sql.ref('c.updated_at');
    case 'pricePerKg':
      return sql`coalesce(c.price_cents, -1)`;
    case 'agedWeeks':
      return sql`coalesce(c.aged_weeks, -1)`;
  }
}

export function sortValueOf(record: CheeseRecord, sort: SortField): string | number {
  switch (sort) {
    case 'name':
      return record.sort_name;
    case 'createdAt':
      return new Date(record.created_at).toISOString();
    case 'updatedAt':
      return new Date(record.updated_at).toISOString();
    case 'pricePerKg':
      return record.price_cents ?? -1;
    case 'agedWeeks':
      return record.aged_weeks ?? -1;
  }
}

function filterConditions(eb: ExpressionBuilder<DB & { c: DB['cheeses'] }, 'c'>, f: CheeseFilter): Expression<SqlBool>[] {
  const where: Expression<SqlBool>[] = [];
  if (f.statuses?.length) where.push(eb('c.status', 'in', f.statuses));
  if (f.country) where.push(eb('c.origin_key', '=', foldCase(f.country)));
  if (f.texture) where.push(eb('c.texture', '=', f.texture));
  if (f.milk) where.push(eb('c.milk', '=', f.milk));
  if (f.agedWeeksMin !== undefined) where.push(eb('c.aged_weeks', '>=', f.agedWeeksMin));
  if (f.organic !== undefined) where.push(eb('c.organic', '=', f.organic));
  if (f.seasonal !== undefined) where.push(eb('c.seasonal', '=', f.seasonal));
  if (f.inStock !== undefined) where.push(eb('c.stock_grams', f.inStock ? '>' : '=', 0));
  if (f.category) {
    where.push(eb('c.category_id', 'in', eb.selectFrom('categories').select('id').where('name_key', '=', foldCase(f.category))));
  }
  if (f.tags?.length) {
    where.push(
      eb.exists(
        eb.selectFrom('cheese_tags as ct').innerJoin('tags as t', 't.id', 'ct.tag_id').select('ct.cheese_id').whereRef('ct.cheese_id', '=', 'c.id').where('t.name', 'in', f.tags),
      ),
    );
  }
  // Terms hold only letters, digits and their marks (searchTerms): no %, _ or \ to escape in LIKE.
  for (const term of f.terms ?? []) where.push(sql<SqlBool>`c.search_text like ${`%${term}%`}`);
  if (f.availableInMonth !== undefined) {
    where.push(eb('c.seasonal', '=', true));
    where.push(sql<SqlBool>`(c.available_months_mask & ${1 << f.availableInMonth}) <> 0`);
  }
  return where;
}

function searchTextOf(draft: CheeseDraft): string {
  return foldForSearch([draft.name, draft.origin, draft.region, draft.producer].filter(Boolean).join(' '));
}

function columnsOf(draft: CheeseDraft, categoryId: number | null) {
  return {
    name: draft.name,
    name_key: foldCase(draft.name),
    sort_name: foldForSearch(draft.name),
    search_text: searchTextOf(draft),
    category_id: categoryId,
    status: draft.status,
    origin: draft.origin,
    origin_key: draft.origin === null ? null : foldCase(draft.origin),
    region: draft.region,
    producer: draft.producer,
    milk: draft.milk,
    pasteurized: draft.pasteurized,
    texture: draft.texture,
    rind: draft.rind,
    aged_weeks: draft.agedWeeks,
    tasting_notes: draft.tastingNotes,
    stinkiness_rating: draft.stinkinessRating,
    serving_temp_min: draft.servingTempCelsius?.min ?? null,
    serving_temp_max: draft.servingTempCelsius?.max ?? null,
    pairings: JSON.stringify(draft.pairings),
    seasonal: draft.seasonal,
    available_months_mask: monthsToMask(draft.availableMonths),
    aging_profile: draft.agingProfile ? JSON.stringify(draft.agingProfile) : null,
    organic: draft.organic,
    price_cents: draft.priceCents,
    stock_grams: draft.stockGrams,
    photo_urls: JSON.stringify(draft.photoUrls),
  };
}

export class CheeseRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {}

  async findById(executor: Kysely<DB>, id: number): Promise<CheeseRecord | undefined> {
    return selectCheeses(executor).where('c.id', '=', id).executeTakeFirst();
  }

  async findBySlug(executor: Kysely<DB>, slug: string): Promise<CheeseRecord | undefined> {
    return selectCheeses(executor).where('c.slug', '=', slug).executeTakeFirst();
  }

  /** Reads the row and, on PostgreSQL, locks it until the transaction ends (stock read-modify-write). */
  async lockById(trx: Transaction<DB>, id: number): Promise<CheeseRecord | undefined> {
    const query = selectCheeses(trx).where('c.id', '=', id);
    return (isPostgres(trx) ? query.forUpdate('c') : query).executeTakeFirst();
  }

  /** Up to `limit` rows after `after`, in the sort's order (the caller asks one more to learn whether more follow). */
  async page(request: PageRequest): Promise<CheeseRecord[]> {
    const key = sortExpression(request.sort);
    const comparison = request.direction === 'asc' ? '>' : '<';
    return selectCheeses(this.db)
      .where((eb) => {
        const conditions = filterConditions(eb, request.filter);
        if (request.after) {
          conditions.push(sql<SqlBool>`(${key}, c.id) ${sql.raw(comparison)} (${request.after.value}, ${request.after.id})`);
        }
        return eb.and(conditions);
      })
      .orderBy(key, request.direction)
      .orderBy('c.id', request.direction)
      .limit(request.limit)
      .execute();
  }

  async count(filter: CheeseFilter): Promise<number> {
    const row = await this.db
      .selectFrom('cheeses as c')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => eb.and(filterConditions(eb, filter)))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** For the unpaginated Form A finders; capped by the caller. */
  async findAll(filter: CheeseFilter, limit: number): Promise<CheeseRecord[]> {
    return selectCheeses(this.db)
      .where((eb) => eb.and(filterConditions(eb, filter)))
      .orderBy('c.sort_name')
      .orderBy('c.id')
      .limit(limit)
      .execute();
  }

  async countByStatus(): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('cheeses')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** The name's slug, or its first free `-2`, `-3`… variant; sees rows inserted earlier in `trx`. */
  async freeSlug(trx: Transaction<DB>, name: string): Promise<string> {
    const base = slugify(name);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      if (!(await trx.selectFrom('cheeses').select('id').where('slug', '=', candidate).executeTakeFirst())) return candidate;
    }
  }

  async nameTaken(trx: Transaction<DB>, categoryId: number | null, name: string, exceptId: number | null): Promise<boolean> {
    let query = trx
      .selectFrom('cheeses')
      .select('id')
      .where(sql<SqlBool>`coalesce(category_id, 0) = ${categoryId ?? 0}`)
      .where('name_key', '=', foldCase(name));
    if (exceptId !== null) query = query.where('id', '<>', exceptId);
    return (await query.executeTakeFirst()) !== undefined;
  }

  async insert(trx: Transaction<DB>, draft: CheeseDraft, slug: string, categoryId: number | null): Promise<number> {
    const now = this.clock.iso();
    const row = await trx
      .insertInto('cheeses')
      .values({ slug, ...columnsOf(draft, categoryId), created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async update(trx: Transaction<DB>, id: number, draft: CheeseDraft, categoryId: number | null): Promise<void> {
    await trx
      .updateTable('cheeses')
      .set({ ...columnsOf(draft, categoryId), updated_at: this.clock.iso() })
      .where('id', '=', id)
      .execute();
  }

  async profiles(executor: Kysely<DB>): Promise<CheeseProfile[]> {
    const rows = await executor
      .selectFrom('cheeses')
      .select(['id', 'slug', 'name', 'milk', 'texture', 'origin', 'stinkiness_rating', 'organic', 'status', 'price_cents', 'stock_grams'])
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      slug: row.slug,
      name: row.name,
      milk: row.milk,
      texture: row.texture,
      origin: row.origin,
      stinkiness: row.stinkiness_rating,
      organic: row.organic === true || row.organic === 1,
      orderable: row.status === 'available' && row.price_cents !== null && Number(row.stock_grams) > 0,
      pricePerKg: row.price_cents === null ? null : Number(row.price_cents) / 100,
    }));
  }

  /** Id and slug of the cheeses with one of these ids or slugs. */
  async idsBy(executor: Kysely<DB>, ids: readonly number[], slugs: readonly string[]): Promise<{ id: number; slug: string; price_cents: number | null }[]> {
    if (ids.length === 0 && slugs.length === 0) return [];
    return selectIdsBy(executor, { ids: [...ids], slugs: [...slugs] });
  }

  async orderableIds(executor: Kysely<DB>, minGrams: number, limit: number): Promise<number[]> {
    const rows = await executor.selectFrom('cheeses').select('id').where('status', '=', 'available').where('price_cents', 'is not', null).where('stock_grams', '>=', minGrams).orderBy('id').limit(limit).execute();
    return rows.map((row) => Number(row.id));
  }

  async delete(trx: Transaction<DB>, id: number): Promise<void> {
    await trx.deleteFrom('cheeses').where('id', '=', id).execute();
  }

  /**
   * Seasonal cheeses whose window opens in `month` (it did not include `previousMonth`) and
   * whose opening for `yearMonth` is not yet announced; each is claimed by exactly one caller.
   */
  async claimSeasonOpenings(trx: Transaction<DB>, month: number, previousMonth: number, yearMonth: string) {
    const due = trx
      .selectFrom('cheeses')
      .select('id')
      .where('seasonal', '=', true)
      .where(sql<SqlBool>`(available_months_mask & ${1 << month}) <> 0`)
      .where(sql<SqlBool>`(available_months_mask & ${1 << previousMonth}) = 0`)
      .where((eb) => eb.or([eb('season_announced', 'is', null), eb('season_announced', '<>', yearMonth)]));
    return claimRows(trx, due, (ids) =>
      trx.updateTable('cheeses').set({ season_announced: yearMonth }).where('id', 'in', ids).returning(['id', 'slug', 'name', 'stock_grams']),
    );
  }
}
