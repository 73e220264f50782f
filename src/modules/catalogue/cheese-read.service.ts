import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { paginate, type CursorCodec } from '../../kernel/pagination.js';
import type { CheeseRepository, CheeseFilter, CheeseRecord, Direction, KeysetPosition, SortField } from './cheese.repository.js';
import { sortValueOf } from './cheese.repository.js';
import type { TaxonomyRepository } from './taxonomy.repository.js';
import type { ImageRepository } from './image.repository.js';
import { toView } from './cheese.mapper.js';
import type { CheeseView } from './cheese.schema.js';
import { CheeseNotFoundError } from './cheese.errors.js';

export interface ListRequest {
  filter: CheeseFilter;
  sort: SortField;
  direction: Direction;
  cursor: string | undefined;
  limit: number;
}

export interface CheesePage {
  items: CheeseView[];
  nextCursor: string | null;
  hasMore: boolean;
  total: number;
}

const CURSOR_KIND = 'cheese';
const INVALID_CURSOR = 'cursor is invalid: pass nextCursor from the previous page unchanged, with the same filters and sort.';

/**
 * A list cursor carries the last row's sort value and id and the walk's total, bound to the
 * sort, direction and filters (`binding`): reused with other filters it is a 400, not a wrong
 * page. Carrying the total means only a walk's first page counts the catalogue.
 */
export function encodeCheeseCursor(codec: CursorCodec, position: KeysetPosition, total: number, binding: string): string {
  return codec.encode(CURSOR_KIND, [position.value, position.id, total], binding);
}

function readCheeseCursor(decoded: unknown): { position: KeysetPosition; total: number } | undefined {
  if (!Array.isArray(decoded) || decoded.length !== 3) return undefined;
  const [value, id, total] = decoded as unknown[];
  if ((typeof value !== 'string' && typeof value !== 'number') || !Number.isSafeInteger(id) || !Number.isSafeInteger(total)) return undefined;
  return { position: { value, id: id as number }, total: total as number };
}

/** A `{cheeseId}`: all digits is an id, anything else a slug (slugs are lower case). */
function parseCheeseRef(idOrSlug: string | number): { id: number } | { slug: string } {
  const text = String(idOrSlug);
  return /^[0-9]{1,15}$/.test(text) ? { id: Number(text) } : { slug: text.toLowerCase() };
}

/** Cap for the unpaginated Form A finders (findByStatus, findByTags). */
export const FINDER_LIMIT = 1000;

export class CheeseReadService {
  constructor(
    private readonly options: {
      db: Kysely<DB>;
      cheeses: CheeseRepository;
      taxonomy: TaxonomyRepository;
      images: ImageRepository;
      cursors: CursorCodec;
      publicUrl: string;
    },
  ) {}

  /** `{cheeseId}` is an integer id or a slug (decisions.md §2). */
  async findRecord(executor: Kysely<DB>, idOrSlug: string | number): Promise<CheeseRecord | undefined> {
    const ref = parseCheeseRef(idOrSlug);
    return 'id' in ref ? this.options.cheeses.findById(executor, ref.id) : this.options.cheeses.findBySlug(executor, ref.slug);
  }

  /** The ids of several cheeses given by id or slug, in order; undefined where there is no such cheese. */
  async idsOf(executor: Kysely<DB>, idsOrSlugs: readonly (string | number)[]): Promise<(number | undefined)[]> {
    return (await this.pricesOf(executor, idsOrSlugs)).map((found) => found?.id);
  }

  /** Several cheeses' ids and prices (cents per kg, null when unpriced), in order; undefined where there is no such cheese. Read without locks. */
  async pricesOf(executor: Kysely<DB>, idsOrSlugs: readonly (string | number)[]): Promise<({ id: number; priceCents: number | null } | undefined)[]> {
    const refs = idsOrSlugs.map(parseCheeseRef);
    const rows = await this.options.cheeses.idsBy(executor, refs.flatMap((ref) => ('id' in ref ? [ref.id] : [])), refs.flatMap((ref) => ('slug' in ref ? [ref.slug] : [])));
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    const bySlug = new Map(rows.map((row) => [row.slug, row]));
    return refs.map((ref) => {
      const row = 'id' in ref ? byId.get(ref.id) : bySlug.get(ref.slug);
      return row && { id: Number(row.id), priceCents: row.price_cents };
    });
  }

  /** The record, or CheeseNotFoundError. */
  async requireRecord(executor: Kysely<DB>, idOrSlug: string | number): Promise<CheeseRecord> {
    const record = await this.findRecord(executor, idOrSlug);
    if (!record) throw new CheeseNotFoundError(idOrSlug);
    return record;
  }

  /** The stored record, or CheeseNotFoundError: for a write that needs only its id. */
  require(idOrSlug: string | number): Promise<CheeseRecord> {
    return this.requireRecord(this.options.db, idOrSlug);
  }

  async get(idOrSlug: string | number): Promise<CheeseView> {
    const { db } = this.options;
    return (await this.views(db, [await this.requireRecord(db, idOrSlug)]))[0]!;
  }

  /** Inside a write, pass its transaction: the new tags are visible only there. */
  async views(executor: Kysely<DB>, records: CheeseRecord[]): Promise<CheeseView[]> {
    const { taxonomy, images, publicUrl } = this.options;
    const ids = records.map((r) => r.id);
    const tags = await taxonomy.tagsOf(executor, ids);
    const imageIds = await images.idsOf(executor, ids);
    return records.map((r) => toView(r, { tags: tags.get(r.id) ?? [], imageIds: imageIds.get(r.id) ?? [] }, publicUrl));
  }

  async list(request: ListRequest): Promise<CheesePage> {
    const binding = JSON.stringify([request.sort, request.direction, request.filter]);
    const { db, cheeses, cursors } = this.options;
    const resumed = request.cursor === undefined ? null : cursors.decode(CURSOR_KIND, request.cursor, readCheeseCursor, { binding, message: INVALID_CURSOR });
    // Counting is the one cost that grows with the catalogue: done on a walk's first page only.
    const counted = resumed ? Promise.resolve(resumed.total) : cheeses.count(request.filter);
    const [page, total] = await Promise.all([
      paginate(
        request.limit,
        (take) => cheeses.page({ filter: request.filter, sort: request.sort, direction: request.direction, after: resumed?.position ?? null, limit: take }),
        async (last) => encodeCheeseCursor(cursors, { value: sortValueOf(last, request.sort), id: last.id }, await counted, binding),
      ),
      counted,
    ]);
    return { items: await this.views(db, page.items), nextCursor: page.nextCursor, hasMore: page.hasMore, total };
  }

  async findAll(filter: CheeseFilter): Promise<CheeseView[]> {
    return this.views(this.options.db, await this.options.cheeses.findAll(filter, FINDER_LIMIT));
  }

  async inventory(): Promise<{ available: number; pending: number; sold: number }> {
    return { available: 0, pending: 0, sold: 0, ...(await this.options.cheeses.countByStatus()) };
  }
}
