import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { NotFoundError } from '../../http/errors.js';
import type { CheeseRepository, CheeseFilter, CheeseRecord, Direction, SortField } from './cheese.repository.js';
import { sortValueOf } from './cheese.repository.js';
import type { TaxonomyRepository } from './taxonomy.repository.js';
import type { ImageRepository } from './image.repository.js';
import { toView } from './cheese.mapper.js';
import type { CursorCodec } from './cursor.js';
import type { CheeseView } from './cheese.model.js';

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

/** Cap for the unpaginated Form A finders (findByStatus, findByTags). */
export const FINDER_LIMIT = 1000;

export class CheeseReadService {
  constructor(
    private readonly cheeses: CheeseRepository,
    private readonly taxonomy: TaxonomyRepository,
    private readonly images: ImageRepository,
    private readonly cursors: CursorCodec,
    private readonly publicUrl: string,
  ) {}

  /** `{cheeseId}` is an integer id or a slug (decisions.md §2). */
  async findRecord(idOrSlug: string | number, executor?: Kysely<DB>): Promise<CheeseRecord | undefined> {
    const text = String(idOrSlug);
    if (/^[0-9]{1,15}$/.test(text)) return this.cheeses.findById(Number(text), executor);
    return this.cheeses.findBySlug(text.toLowerCase(), executor);
  }

  async get(idOrSlug: string | number): Promise<CheeseView> {
    const record = await this.findRecord(idOrSlug);
    if (!record) throw new NotFoundError(`Cheese ${String(idOrSlug).slice(0, 120)} not found.`);
    return (await this.views([record]))[0]!;
  }

  /** Inside a write, pass its transaction: the new tags are visible only there. */
  async views(records: CheeseRecord[], executor?: Kysely<DB>): Promise<CheeseView[]> {
    const ids = records.map((r) => r.id);
    const tags = await this.taxonomy.tagsOf(ids, executor);
    const images = await this.images.idsOf(ids, executor);
    return records.map((r) => toView(r, { tags: tags.get(r.id) ?? [], imageIds: images.get(r.id) ?? [] }, this.publicUrl));
  }

  async list(request: ListRequest): Promise<CheesePage> {
    const binding = JSON.stringify([request.sort, request.direction, request.filter]);
    const resumed = request.cursor === undefined ? null : this.cursors.decode(request.cursor, binding);
    // Counting is the one cost that grows with the catalogue: done on a walk's first page only.
    const [{ records, hasMore }, total] = await Promise.all([
      this.cheeses.page({ filter: request.filter, sort: request.sort, direction: request.direction, after: resumed?.position ?? null, limit: request.limit }),
      resumed ? resumed.total : this.cheeses.count(request.filter),
    ]);
    const last = records.at(-1);
    return {
      items: await this.views(records),
      nextCursor: hasMore && last ? this.cursors.encode({ value: sortValueOf(last, request.sort), id: last.id }, total, binding) : null,
      hasMore,
      total,
    };
  }

  async findAll(filter: CheeseFilter): Promise<CheeseView[]> {
    return this.views(await this.cheeses.findAll(filter, FINDER_LIMIT));
  }

  async inventory(): Promise<{ available: number; pending: number; sold: number }> {
    return { available: 0, pending: 0, sold: 0, ...(await this.cheeses.countByStatus()) };
  }
}
