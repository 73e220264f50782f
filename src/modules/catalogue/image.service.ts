import { randomUUID } from 'node:crypto';
import type sharp from 'sharp';
import { NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationFailedError } from '../../kernel/errors.js';
import type { ImageRepository, ImageRecord } from './image.repository.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { CheeseNotFoundError } from './cheese.errors.js';
import type { ImageStorage } from './image.storage.js';
import type { CheeseReadService } from './cheese-read.service.js';
import { imageUrl } from './cheese.mapper.js';
import type { CatalogueChanges } from './catalogue.changes.js';

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Decoded size limit: a 10 MB file may not unpack into gigabytes (decompression bombs). */
export const MAX_IMAGE_PIXELS = 40_000_000;
const THUMBNAIL_PX = 320;

/**
 * The image libraries load with the first upload, not at start: sharp (libvips) and
 * file-type added about 30 MB to an idle instance's memory and 80 ms to its start, for a
 * feature most instances serve rarely (docs/performance.md, "Start-up").
 */
const imageLibraries = once(async () => {
  const [{ default: sharpLib }, { fileTypeFromBuffer }] = await Promise.all([import('sharp'), import('file-type')]);
  // libvips's operation cache keeps decoded images after the upload that decoded them: memory
  // an upload never gets back (docs/performance.md, "Image uploads").
  sharpLib.cache(false);
  return { sharp: sharpLib, fileTypeFromBuffer };
});

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}
const FORMATS = { 'image/jpeg': 'jpeg', 'image/png': 'png', 'image/webp': 'webp' } as const;
type AcceptedType = keyof typeof FORMATS;

export interface UploadedImage {
  id: number;
  imageUrl: string;
  thumbnailUrl: string;
  size: number;
  contentType: AcceptedType;
  width: number;
  height: number;
  caption: string | null;
  isPrimary: boolean;
}

export class ImageService {
  private readonly images: ImageRepository;
  private readonly storage: ImageStorage;

  constructor(
    private readonly options: { images: ImageRepository; storage: ImageStorage; reader: CheeseReadService; changes: CatalogueChanges; publicUrl: string },
  ) {
    this.images = options.images;
    this.storage = options.storage;
  }

  async upload(cheeseIdOrSlug: string, bytes: Buffer, options: { caption: string | null; isPrimary: boolean }): Promise<UploadedImage> {
    const cheese = await this.options.reader.require(cheeseIdOrSlug);
    if (bytes.length > MAX_IMAGE_BYTES) throw new PayloadTooLargeError('Images may be at most 10 MB.');
    // The bytes decide, never the declared Content-Type or file name.
    const { fileTypeFromBuffer } = await imageLibraries();
    const detected = await fileTypeFromBuffer(bytes);
    if (!detected || !Object.hasOwn(FORMATS, detected.mime)) {
      throw new UnsupportedMediaTypeError('Only JPEG, PNG and WebP images are accepted (judged by their content).');
    }
    const contentType = detected.mime as AcceptedType;
    const { image, thumbnail, width, height } = await this.#process(bytes, contentType);
    const base = `cheeses/${cheese.id}/${randomUUID()}`;
    const storageKey = `${base}.${FORMATS[contentType]}`;
    const thumbnailKey = `${base}.thumb.webp`;
    await this.storage.put(storageKey, image);
    await this.storage.put(thumbnailKey, thumbnail);
    let record: ImageRecord;
    try {
      record = await this.options.changes.transaction((trx) =>
        this.images.insert(trx, { cheeseId: cheese.id, storageKey, thumbnailKey, contentType, sizeBytes: image.length, width, height, caption: options.caption, isPrimary: options.isPrimary }),
      );
    } catch (error) {
      await Promise.all([this.storage.delete(storageKey), this.storage.delete(thumbnailKey)]).catch(() => undefined);
      // The cheese was deleted while its image was being processed.
      if (isForeignKeyViolation(error)) throw new CheeseNotFoundError(cheese.id);
      throw error;
    }
    const url = imageUrl(this.options.publicUrl, cheese.id, record.id);
    return { id: record.id, imageUrl: url, thumbnailUrl: `${url}/thumbnail`, size: record.sizeBytes, contentType, width, height, caption: record.caption, isPrimary: record.isPrimary };
  }

  /** Re-encodes (dropping EXIF such as GPS, applying orientation) and makes a WebP thumbnail. */
  async #process(bytes: Buffer, contentType: AcceptedType) {
    const { sharp } = await imageLibraries();
    const options = { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'error' as const };
    let meta: sharp.Metadata;
    try {
      // Header only: nothing is decoded before the dimensions are checked.
      meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    } catch {
      throw ValidationFailedError.field('file', 'could not be decoded as an image');
    }
    if (!meta.width || !meta.height) throw ValidationFailedError.field('file', 'has no dimensions');
    if (meta.width * meta.height > MAX_IMAGE_PIXELS) {
      throw new PayloadTooLargeError(`Images may have at most ${MAX_IMAGE_PIXELS.toLocaleString('en')} pixels.`);
    }
    try {
      // Memory is what bounds uploads (docs/performance.md, "Image uploads"): each output is its
      // own pipeline reading the pixels top to bottom (sequentialRead), so libvips streams them;
      // turning (random access) only when the EXIF says so; JPEG without Huffman optimisation,
      // which holds every coefficient of the image (a 27-megapixel JPEG: 210 MB against 68 MB,
      // for a file about 5% larger). The thumbnail is shrunk while it is decoded.
      const oriented = (source: sharp.Sharp) => ((meta.orientation ?? 1) > 1 ? source.rotate() : source);
      const encoder = contentType === 'image/jpeg' ? { optimiseCoding: false } : {};
      const image = await oriented(sharp(bytes, { ...options, sequentialRead: true })).toFormat(FORMATS[contentType], encoder).toBuffer({ resolveWithObject: true });
      const thumbnail = await oriented(sharp(bytes, { ...options, sequentialRead: true })).resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer();
      return { image: image.data, thumbnail, width: image.info.width, height: image.info.height };
    } catch {
      throw ValidationFailedError.field('file', 'could not be decoded as an image');
    }
  }

  async read(cheeseId: number, imageId: number, variant: 'original' | 'thumbnail'): Promise<{ bytes: Buffer; contentType: string }> {
    const record = await this.images.find(cheeseId, imageId);
    const bytes = record ? await this.storage.get(variant === 'original' ? record.storageKey : record.thumbnailKey) : null;
    if (!record || !bytes) throw new NotFoundError(`Image ${imageId} of cheese ${cheeseId} not found.`);
    return { bytes, contentType: variant === 'original' ? record.contentType : 'image/webp' };
  }
}
