import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { toBool } from '../../db/columns.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export interface ImageRecord {
  id: number;
  cheeseId: number;
  storageKey: string;
  thumbnailKey: string;
  contentType: string;
  sizeBytes: number;
  width: number;
  height: number;
  caption: string | null;
  isPrimary: boolean;
}

const COLUMNS = ['id', 'cheese_id', 'storage_key', 'thumbnail_key', 'content_type', 'size_bytes', 'width', 'height', 'caption', 'is_primary'] as const;

type Row = { id: number; cheese_id: number; storage_key: string; thumbnail_key: string; content_type: string; size_bytes: number; width: number; height: number; caption: string | null; is_primary: boolean | number };

function toRecord(r: Row): ImageRecord {
  return {
    id: r.id,
    cheeseId: r.cheese_id,
    storageKey: r.storage_key,
    thumbnailKey: r.thumbnail_key,
    contentType: r.content_type,
    sizeBytes: r.size_bytes,
    width: r.width,
    height: r.height,
    caption: r.caption,
    isPrimary: toBool(r.is_primary),
  };
}

export class ImageRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {}

  async insert(trx: Transaction<DB>, image: Omit<ImageRecord, 'id'>): Promise<ImageRecord> {
    if (image.isPrimary) {
      await trx.updateTable('cheese_images').set({ is_primary: false }).where('cheese_id', '=', image.cheeseId).execute();
    }
    const row = await trx
      .insertInto('cheese_images')
      .values({
        cheese_id: image.cheeseId,
        storage_key: image.storageKey,
        thumbnail_key: image.thumbnailKey,
        content_type: image.contentType,
        size_bytes: image.sizeBytes,
        width: image.width,
        height: image.height,
        caption: image.caption,
        is_primary: image.isPrimary,
        created_at: this.clock.iso(),
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  async find(cheeseId: number, imageId: number): Promise<ImageRecord | undefined> {
    const row = await this.db
      .selectFrom('cheese_images')
      .select(COLUMNS)
      .where('id', '=', imageId)
      .where('cheese_id', '=', cheeseId)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** Primary image first, then in upload order. */
  async idsOf(executor: Kysely<DB>, cheeseIds: number[]): Promise<Map<number, number[]>> {
    const result = new Map<number, number[]>();
    if (cheeseIds.length === 0) return result;
    const rows = await executor
      .selectFrom('cheese_images')
      .select(['cheese_id', 'id'])
      .where('cheese_id', 'in', cheeseIds)
      .orderBy('cheese_id')
      .orderBy('is_primary', 'desc')
      .orderBy('id')
      .execute();
    for (const row of rows) {
      const list = result.get(row.cheese_id) ?? [];
      list.push(row.id);
      result.set(row.cheese_id, list);
    }
    return result;
  }

  async storageKeysOf(trx: Transaction<DB>, cheeseId: number): Promise<string[]> {
    const rows = await trx.selectFrom('cheese_images').select(['storage_key', 'thumbnail_key']).where('cheese_id', '=', cheeseId).execute();
    return rows.flatMap((r) => [r.storage_key, r.thumbnail_key]);
  }
}
