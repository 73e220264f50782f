import type { Kysely, Transaction } from 'kysely';
import type Type from 'typebox';
import type { DB } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ConflictError, NotFoundError, ValidationFailedError } from '../../http/errors.js';
import { recordEvents, type EventContext } from '../outbox/outbox.writer.js';
import type { CheeseRecord, CheeseRepository } from './cheese.repository.js';
import type { TaxonomyRepository } from './taxonomy.repository.js';
import type { ImageRepository } from './image.repository.js';
import type { ImageStorage } from './image.storage.js';
import type { CheeseReadService } from './cheese-read.service.js';
import type { CheeseInput, CheesePatch, CheeseReplace } from './cheese.schema.js';
import { applyInput, draftFromView, emptyDraft, type ResolvedRefs } from './cheese.input.js';
import { isOwnImageUrl } from './cheese.mapper.js';
import { kgToGrams, type CheeseDraft, type CheeseView } from './cheese.model.js';
import { applyStockRules } from './stock.rules.js';
import type { CatalogueChanges } from './catalogue-changes.js';
import type { CheeseStatus } from './catalogue.table.js';

export interface ChangeContext {
  requestId: string | null;
}

type WritableInput = Type.Static<typeof CheesePatch> | Type.Static<typeof CheeseInput>;

export class CheeseService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly cheeses: CheeseRepository,
    private readonly taxonomy: TaxonomyRepository,
    private readonly images: ImageRepository,
    private readonly storage: ImageStorage,
    private readonly reader: CheeseReadService,
    private readonly changes: CatalogueChanges,
    private readonly settings: { publicUrl: string; lowStockGrams: number; events: Omit<EventContext, 'requestId'> },
  ) {}

  create(input: Type.Static<typeof CheeseInput>, ctx: ChangeContext): Promise<CheeseView> {
    return this.#transaction((trx) => this.createIn(trx, input, ctx));
  }

  /** PUT /cheeses: every writable field is replaced; omitted ones return to their defaults. */
  replace(input: Type.Static<typeof CheeseReplace>, ctx: ChangeContext): Promise<CheeseView> {
    return this.#transaction((trx) => this.replaceIn(trx, input, ctx));
  }

  /** Partial update: the form-style POST and the bulk `update` operation. */
  patch(idOrSlug: string | number, input: Type.Static<typeof CheesePatch>, ctx: ChangeContext): Promise<CheeseView> {
    return this.#transaction((trx) => this.patchIn(trx, idOrSlug, input, ctx));
  }

  async delete(idOrSlug: string | number, ctx: ChangeContext): Promise<void> {
    const keys = await this.#transaction((trx) => this.deleteIn(trx, idOrSlug, ctx));
    await this.removeFiles(keys);
  }

  async createIn(trx: Transaction<DB>, input: Type.Static<typeof CheeseInput>, ctx: ChangeContext): Promise<CheeseView> {
    const refs = await this.#refs(trx, input);
    return this.writeInTransaction(trx, null, () => applyInput(emptyDraft(input.name), input, refs), input.status, ctx);
  }

  async replaceIn(trx: Transaction<DB>, input: Type.Static<typeof CheeseReplace>, ctx: ChangeContext): Promise<CheeseView> {
    const { id, slug: _slug, inStock: _inStock, createdAt: _c, updatedAt: _u, ...writable } = input;
    const existing = await this.#require(trx, id);
    const refs = await this.#refs(trx, writable);
    // Stock is inventory, not description: a replacement that omits it keeps the current stock.
    const base = (current: CheeseView | null) => ({ ...emptyDraft(writable.name), stockGrams: kgToGrams(current?.stockQuantityKg ?? 0) });
    return this.writeInTransaction(trx, existing.id, (current) => applyInput(base(current), writable, refs), writable.status, ctx);
  }

  async patchIn(trx: Transaction<DB>, idOrSlug: string | number, input: Type.Static<typeof CheesePatch>, ctx: ChangeContext): Promise<CheeseView> {
    const existing = await this.#require(trx, idOrSlug);
    const refs = await this.#refs(trx, input);
    return this.writeInTransaction(trx, existing.id, (current) => applyInput(draftFromView(current!), input, refs), input.status, ctx);
  }

  /** Returns the storage keys of the cheese's images, to remove once the transaction commits. */
  async deleteIn(trx: Transaction<DB>, idOrSlug: string | number, _ctx: ChangeContext): Promise<string[]> {
    const existing = await this.#require(trx, idOrSlug);
    const keys = await this.images.storageKeysOf(trx, existing.id);
    // Orders arrive in a later issue: they will cancel open orders here and refuse (409) if one has shipped.
    await this.cheeses.delete(trx, existing.id);
    return keys;
  }

  /** Files go only after the rows are gone: a crash in between leaves orphans, never dangling rows. */
  async removeFiles(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.storage.delete(key).catch(() => undefined)));
  }

  /**
   * Writes a cheese (insert when `id` is null) with its category, tags, the stock rules and
   * their events, all inside the caller's transaction. The draft is built from the locked
   * current state, so concurrent writers never lose each other's changes. Bulk calls this.
   */
  async writeInTransaction(
    trx: Transaction<DB>,
    id: number | null,
    buildDraft: (current: CheeseView | null) => CheeseDraft,
    requestedStatus: CheeseStatus | undefined,
    ctx: ChangeContext,
  ): Promise<CheeseView> {
    const before = id === null ? null : await this.cheeses.lockById(trx, id);
    if (id !== null && !before) throw new NotFoundError(`Cheese ${id} not found.`);
    const draft = buildDraft(before ? (await this.reader.views([before], trx))[0]! : null);
    const categoryId = draft.categoryName === null ? null : await this.taxonomy.ensureCategory(trx, draft.categoryName);
    if (await this.cheeses.nameTaken(trx, categoryId, draft.name, id)) {
      throw new ConflictError(`A cheese named "${draft.name}" already exists in ${draft.categoryName ? `category "${draft.categoryName}"` : 'the uncategorised cheeses'}.`);
    }
    const rules = applyStockRules({
      before: before ? { stockGrams: Number(before.stock_grams), status: before.status } : null,
      after: { stockGrams: draft.stockGrams, status: draft.status },
      requestedStatus,
      lowStockGrams: this.settings.lowStockGrams,
    });
    const stored: CheeseDraft = { ...draft, status: rules.status, photoUrls: draft.photoUrls.filter((u) => !isOwnImageUrl(this.settings.publicUrl, u)) };
    let cheeseId: number;
    try {
      if (before) {
        cheeseId = before.id;
        await this.cheeses.update(trx, cheeseId, stored, categoryId);
      } else {
        cheeseId = await this.cheeses.insert(trx, stored, await this.cheeses.freeSlug(trx, stored.name), categoryId);
      }
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`A cheese named "${draft.name}" already exists in that category.`);
      throw error;
    }
    await this.taxonomy.setCheeseTags(trx, cheeseId, await this.taxonomy.ensureTags(trx, stored.tagNames));
    const record = (await this.cheeses.findById(cheeseId, trx))!;
    const [view] = await this.reader.views([record], trx);
    const data = {
      cheese_id: String(cheeseId),
      slug: view!.slug,
      name: view!.name,
      status: view!.status,
      in_stock: view!.inStock,
      stock_quantity_kg: view!.stockQuantityKg,
      price_per_kg: view!.pricePerKg,
    };
    const events = rules.events.map((type) => ({
      type,
      aggregateType: 'cheese',
      aggregateId: String(cheeseId),
      data: type === 'cheese.low_stock' ? { ...data, low_stock_threshold_kg: this.settings.lowStockGrams / 1000 } : data,
    }));
    await recordEvents(trx, events, { ...this.settings.events, requestId: ctx.requestId });
    return view!;
  }

  async #require(trx: Transaction<DB>, idOrSlug: string | number): Promise<CheeseRecord> {
    const record = await this.reader.findRecord(idOrSlug, trx);
    if (!record) throw new NotFoundError(`Cheese ${String(idOrSlug).slice(0, 120)} not found.`);
    return record;
  }

  /** Resolves `{id}`-only category and tag references to names, or fails with 422. */
  async #refs(trx: Transaction<DB>, input: WritableInput): Promise<ResolvedRefs> {
    const categoryRef = input.category;
    let categoryName: string | null = null;
    if (categoryRef && categoryRef.name === undefined) {
      if (categoryRef.id === undefined) throw ValidationFailedError.field('category', 'give a name (or the id of an existing category)');
      categoryName = (await this.taxonomy.categoryNameById(categoryRef.id, trx)) ?? null;
      if (categoryName === null) throw ValidationFailedError.field('category.id', `no category ${categoryRef.id}`);
    }
    const tagIds = (input.tags ?? []).filter((t) => t.name === undefined).map((t) => t.id);
    if (tagIds.some((t) => t === undefined)) throw ValidationFailedError.field('tags', 'each tag needs a name (or the id of an existing tag)');
    const tagNames = await this.taxonomy.tagNamesByIds(tagIds as number[], trx);
    return {
      categoryName: (ref) => ref.name?.trim() ?? categoryName,
      tagName: (ref, index) => {
        if (ref.name !== undefined) return ref.name;
        const name = tagNames.get(ref.id!);
        if (name === undefined) throw ValidationFailedError.field(`tags.${index}.id`, `no tag ${ref.id}`);
        return name;
      },
    };
  }

  #transaction<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return this.changes.after(() => this.db.transaction().execute(work));
  }
}
