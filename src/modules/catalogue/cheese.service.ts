import type { Transaction } from 'kysely';
import type Type from 'typebox';
import type { DB } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { ConflictError, ValidationFailedError } from '../../kernel/errors.js';
import type { Outbox } from '../outbox/outbox.module.js';
import type { CheeseRepository } from './cheese.repository.js';
import type { TaxonomyRepository } from './taxonomy.repository.js';
import type { ImageRepository } from './image.repository.js';
import type { ImageStorage } from './image.storage.js';
import type { CheeseReadService } from './cheese-read.service.js';
import type { CheeseInput, CheesePatch, CheeseReplace, CheeseView } from './cheese.schema.js';
import { applyInput, draftFromView, emptyDraft, type CheeseDraft, type ResolvedRefs } from './cheese.input.js';
import { isOwnImageUrl } from './cheese.mapper.js';
import { foldCase, kgToGrams } from './cheese.model.js';
import { applyStockRules } from './stock.rules.js';
import type { CatalogueChanges } from './catalogue.changes.js';
import type { CheeseStatus } from './catalogue.table.js';
import type { CheeseDeletionPort } from './catalogue.ports.js';
import { CheeseNotFoundError } from './cheese.errors.js';

type WritableInput = Type.Static<typeof CheesePatch> | Type.Static<typeof CheeseInput>;

export interface CheeseServiceOptions {
  cheeses: CheeseRepository;
  taxonomy: TaxonomyRepository;
  images: ImageRepository;
  storage: ImageStorage;
  reader: CheeseReadService;
  changes: CatalogueChanges;
  outbox: Outbox;
  cheeseDeletion: CheeseDeletionPort;
  publicUrl: string;
  lowStockGrams: number;
}

/** Cheese writes: each public method is one transaction; each `…In` method joins the caller's (bulk). */
export class CheeseService {
  private readonly cheeses: CheeseRepository;
  private readonly taxonomy: TaxonomyRepository;
  private readonly reader: CheeseReadService;

  constructor(private readonly options: CheeseServiceOptions) {
    this.cheeses = options.cheeses;
    this.taxonomy = options.taxonomy;
    this.reader = options.reader;
  }

  create(input: Type.Static<typeof CheeseInput>, ctx: ChangeContext): Promise<CheeseView> {
    return this.#transaction(async (trx) => {
      const cheese = await this.createIn(trx, input, ctx);
      // With an Idempotency-Key: the cheese is noted with the key, in its own transaction.
      await ctx.created?.(trx, cheese.id);
      return cheese;
    });
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
    const keys = await this.options.changes.transaction((trx) => this.deleteIn(trx, idOrSlug, ctx));
    await this.removeFiles(keys);
  }

  async createIn(trx: Transaction<DB>, input: Type.Static<typeof CheeseInput>, ctx: ChangeContext): Promise<CheeseView> {
    const refs = await this.#refs(trx, input);
    return this.writeInTransaction(trx, null, () => applyInput(emptyDraft(input.name), input, refs), input.status, ctx);
  }

  async replaceIn(trx: Transaction<DB>, input: Type.Static<typeof CheeseReplace>, ctx: ChangeContext): Promise<CheeseView> {
    const { id, slug: _slug, inStock: _inStock, createdAt: _c, updatedAt: _u, ...writable } = input;
    const existing = await this.#existing(trx, id);
    const refs = await this.#refs(trx, writable);
    // Stock is inventory, not description: a replacement that omits it keeps the current stock.
    const base = (current: CheeseView | null) => ({ ...emptyDraft(writable.name), stockGrams: kgToGrams(current?.stockQuantityKg ?? 0) });
    return this.writeInTransaction(trx, existing.id, (current) => applyInput(base(current), writable, refs), writable.status, ctx);
  }

  async patchIn(trx: Transaction<DB>, idOrSlug: string | number, input: Type.Static<typeof CheesePatch>, ctx: ChangeContext): Promise<CheeseView> {
    const existing = await this.#existing(trx, idOrSlug);
    if (Object.keys(input).length === 0) {
      // Nothing to change (the form update with neither field): nothing is written, so
      // updatedAt and the ETag stay, and other clients' If-Match still holds.
      const locked = await this.cheeses.lockById(trx, existing.id);
      if (!locked) throw new CheeseNotFoundError(idOrSlug);
      const [current] = await this.reader.views(trx, [locked]);
      ctx.precondition?.(current!);
      return current!;
    }
    const refs = await this.#refs(trx, input);
    return this.writeInTransaction(trx, existing.id, (current) => applyInput(draftFromView(current!), input, refs), input.status, ctx);
  }

  /** Returns the storage keys of the cheese's images, to remove once the transaction commits. */
  async deleteIn(trx: Transaction<DB>, idOrSlug: string | number, ctx: ChangeContext): Promise<string[]> {
    const found = await this.#existing(trx, idOrSlug);
    // Locked first: of concurrent deletes one goes ahead, and the others then find nothing (404).
    const existing = await this.cheeses.lockById(trx, found.id);
    if (!existing) throw new CheeseNotFoundError(idOrSlug);
    if (ctx.precondition) ctx.precondition((await this.reader.views(trx, [existing]))[0]!);
    await this.options.cheeseDeletion.beforeCheeseDeleted(trx, existing.id, ctx);
    const keys = await this.options.images.storageKeysOf(trx, existing.id);
    await this.cheeses.delete(trx, existing.id);
    return keys;
  }

  /** Files go only after the rows are gone: a crash in between leaves orphans, never dangling rows. */
  async removeFiles(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.options.storage.delete(key).catch(() => undefined)));
  }

  /**
   * Writes a cheese (insert when `id` is null) with its category, tags, the stock rules and
   * their events, all inside the caller's transaction. The draft is built from the locked
   * current state, so concurrent writers never lose each other's changes.
   */
  async writeInTransaction(
    trx: Transaction<DB>,
    id: number | null,
    buildDraft: (current: CheeseView | null) => CheeseDraft,
    requestedStatus: CheeseStatus | undefined,
    ctx: ChangeContext,
  ): Promise<CheeseView> {
    const before = id === null ? null : await this.cheeses.lockById(trx, id);
    if (id !== null && !before) throw new CheeseNotFoundError(id);
    const current = before ? (await this.reader.views(trx, [before]))[0]! : null;
    if (current) ctx.precondition?.(current);
    const draft = buildDraft(current);
    const categoryId = draft.categoryName === null ? null : await this.taxonomy.ensureCategory(trx, draft.categoryName);
    if (await this.cheeses.nameTaken(trx, categoryId, draft.name, id)) {
      throw new ConflictError(`A cheese named "${draft.name}" already exists in ${draft.categoryName ? `category "${draft.categoryName}"` : 'the uncategorised cheeses'}.`);
    }
    const rules = applyStockRules({
      before: before ? { stockGrams: Number(before.stock_grams), status: before.status } : null,
      after: { stockGrams: draft.stockGrams, status: draft.status },
      requestedStatus,
      lowStockGrams: this.options.lowStockGrams,
    });
    const stored: CheeseDraft = { ...draft, status: rules.status, photoUrls: draft.photoUrls.filter((u) => !isOwnImageUrl(this.options.publicUrl, u)) };
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
    const record = (await this.cheeses.findById(trx, cheeseId))!;
    const [view] = await this.reader.views(trx, [record]);
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
      audience: 'public' as const,
      aggregateId: String(cheeseId),
      data: type === 'cheese.low_stock' ? { ...data, low_stock_threshold_kg: this.options.lowStockGrams / 1000 } : data,
    }));
    await this.options.outbox.record(trx, events, ctx);
    return view!;
  }

  /**
   * The cheese, or 404 whatever the request's preconditions: RFC 9110 §13.2.1 has them ignored
   * when the answer without them would be an error, so If-Match on a missing cheese is a 404.
   */
  async #existing(trx: Transaction<DB>, idOrSlug: string | number) {
    return this.reader.requireRecord(trx, idOrSlug);
  }

  /**
   * Resolves category and tag references to names, or fails with 422: `{id}` alone names an
   * existing one; `{id, name}` must agree (case aside), never silently creating another.
   */
  async #refs(trx: Transaction<DB>, input: WritableInput): Promise<ResolvedRefs> {
    const categoryRef = input.category;
    let categoryName: string | null = null;
    if (categoryRef?.id !== undefined) {
      categoryName = (await this.taxonomy.categoryNameById(trx, categoryRef.id)) ?? null;
      if (categoryName === null) throw ValidationFailedError.field('category.id', `no category ${categoryRef.id}`);
      if (categoryRef.name !== undefined && foldCase(categoryRef.name.trim()) !== foldCase(categoryName)) {
        throw ValidationFailedError.field('category', `id ${categoryRef.id} is "${categoryName}", not "${categoryRef.name.trim().slice(0, 100)}"`);
      }
    } else if (categoryRef && categoryRef.name === undefined) {
      throw ValidationFailedError.field('category', 'give a name (or the id of an existing category)');
    }
    const tags = input.tags ?? [];
    if (tags.some((t) => t.id === undefined && t.name === undefined)) throw ValidationFailedError.field('tags', 'each tag needs a name (or the id of an existing tag)');
    const tagNames = await this.taxonomy.tagNamesByIds(trx, tags.flatMap((t) => (t.id === undefined ? [] : [t.id])));
    return {
      categoryName: (ref) => categoryName ?? ref.name?.trim() ?? null,
      tagName: (ref, index) => {
        if (ref.id === undefined) return ref.name!;
        const name = tagNames.get(ref.id);
        if (name === undefined) throw ValidationFailedError.field(`tags.${index}.id`, `no tag ${ref.id}`);
        if (ref.name !== undefined && ref.name !== name) throw ValidationFailedError.field(`tags.${index}`, `id ${ref.id} is "${name}", not "${ref.name}"`);
        return name;
      },
    };
  }

  #transaction<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return this.options.changes.transaction(work);
  }
}
