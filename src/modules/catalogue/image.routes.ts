import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import multipart from '@fastify/multipart';
import Type from 'typebox';
import type { AuthRequirement } from '../../http/auth.js';
import { errorResponses, IdParam } from '../../http/common.schema.js';
import Negotiator from 'negotiator';
import { AppError, InvalidRequestError, NotAcceptableError, ServiceUnavailableError, UnsupportedMediaTypeError, ValidationFailedError } from '../../kernel/errors.js';
import type { BoundedWork } from '../../kernel/bounded-work.js';
import { bodyFinished, multipartText } from '../../http/body-parsers.js';
import { isUnstorable } from '../../http/validation.js';
import { hasVisibleText } from '../../kernel/text.js';
import { ImageUpload } from './cheese.schema.js';
import { MAX_IMAGE_BYTES, type ImageService } from './image.service.js';

const WRITE: AuthRequirement = { schemes: ['any_bearer'], scope: 'write:cheeses' };

function parseBoolean(value: string, field: string): boolean {
  const normalised = value.trim().toLowerCase();
  if (normalised === 'true' || normalised === '1') return true;
  if (normalised === 'false' || normalised === '0' || normalised === '') return false;
  throw ValidationFailedError.field(field, 'must be true or false');
}

declare module 'fastify' {
  interface FastifyRequest {
    releaseImageSlot?: () => void;
  }
}

/** Aborts when the response closes: answered, or its client gone. */
function responseClosed(reply: FastifyReply): AbortSignal {
  const closed = new AbortController();
  if (reply.raw.destroyed) closed.abort();
  else reply.raw.once('close', () => closed.abort());
  return closed.signal;
}

const MAX_CAPTION_LENGTH = 500;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;

/** Retry-After for an upload turned away: image work takes about a second. */
const RETRY_AFTER_S = '2';

export const imageRoutes: FastifyPluginAsyncTypebox<{ images: ImageService; imageWork: BoundedWork }> = async (app, { images, imageWork }) => {
  await app.register(multipart, {
    // files: 2, so a second file part reaches our check (422) instead of busboy's limit (413).
    limits: { fileSize: MAX_IMAGE_BYTES, files: 2, fields: 4, fieldSize: 4 * MAX_CAPTION_LENGTH, parts: 6, headerPairs: 50 },
    throwFileSizeLimit: true,
  });

  app.post('/cheeses/:cheeseId/uploadImage', {
    // The file, its caption and the multipart framing: a longer declared Content-Length is a 413 before the body is read.
    bodyLimit: MAX_IMAGE_BYTES + 64 * 1024,
    config: {
      auth: WRITE,
      documentedBody: Type.Object(
      {
          file: Type.String({ format: 'binary', contentMediaType: 'image/*', description: 'JPEG, PNG or WebP, judged by its bytes; 10 MB and 40 megapixels at most.' }),
          caption: Type.Optional(Type.String({ maxLength: 500, description: 'Up to 500 characters, with a visible one; longer is a 422, never truncated.' })),
          isPrimary: Type.Optional(Type.Boolean({ default: false, description: '`true`/`false` (or `1`/`0`).' })),
        },
      ),
    },
    // A slot is taken before the body is read, so uploads beyond the limit never occupy memory.
    preHandler: async (request, reply) => {
      const slot = imageWork.tryAcquire(responseClosed(reply));
      if (!slot) {
        // Its body, still arriving, is drained and the connection closed by the pipeline (unreadBody).
        const error = new ServiceUnavailableError(`Too many images are being processed; retry in ${RETRY_AFTER_S} s.`);
        error.headers['retry-after'] = RETRY_AFTER_S;
        throw error;
      }
      const release = await slot;
      // Its client left while it waited: nobody to read the body from or to answer.
      if (!release) return reply.hijack();
      request.releaseImageSlot = release;
    },
    // Released when the handler's answer or error is sent, which also happens when the client
    // has gone meanwhile (onResponse would then never run). Not when the connection closes:
    // that would free the slot while a departed client's image is still being decoded.
    onSend: async (request, _reply, payload) => {
      request.releaseImageSlot?.();
      return payload;
    },
    schema: {
      tags: ['cheeses'],
      operationId: 'uploadCheeseImage',
      summary: 'Upload an image (JPEG, PNG or WebP by content; 10 MB max)',
      description: 'multipart/form-data with `file` (required), `caption`, `isPrimary`, each at most once: a second `file`, a repeated field or an unknown part is a 422 naming it. The image is re-encoded without metadata and a 320px WebP thumbnail is made. Images are served publicly at the returned URLs.',
      consumes: ['multipart/form-data'],
      params: Type.Object({ cheeseId: IdParam }),
      response: { 200: ImageUpload, ...errorResponses(400, 401, 403, 404, 413, 415, 422, 503) },
    },
  }, async (request) => {
    if (!request.isMultipart()) throw new UnsupportedMediaTypeError('Send the image as multipart/form-data with a "file" part.');
    let file: Buffer | undefined;
    let caption: string | null = null;
    let isPrimary = false;
    const seenFields = new Set<string>();
    // The first problem is answered only once every part has been read: a client still
    // sending its body would otherwise meet a closed connection instead of the 422.
    let problem: AppError | undefined;
    try {
      for await (const part of request.parts()) {
        try {
          // A repeated field would otherwise be decided silently by whichever part came last.
          if (part.type === 'field' && (part.fieldname === 'caption' || part.fieldname === 'isPrimary')) {
            if (seenFields.has(part.fieldname)) throw ValidationFailedError.field(part.fieldname, 'is given more than once');
            seenFields.add(part.fieldname);
          }
          if (part.type === 'file') {
            if (part.fieldname !== 'file' || file) {
              // Read (at most 10 MB, and at most two file parts) before answering, so the client
              // can finish sending and read the 422 rather than meet a closed connection.
              await part.toBuffer();
              throw ValidationFailedError.field(part.fieldname, 'only one file part, named "file", is accepted');
            }
            file = await part.toBuffer();
          } else if (part.fieldname === 'caption') {
            const value = multipartText(String(part.value), 'caption');
            // As for JSON bodies (validation.ts), which never see multipart fields.
            if (isUnstorable(value)) throw ValidationFailedError.field('caption', 'must not contain U+0000 or unpaired surrogates');
            if (part.valueTruncated || [...value].length > MAX_CAPTION_LENGTH) throw ValidationFailedError.field('caption', `must be at most ${MAX_CAPTION_LENGTH} characters`);
            if (value !== '' && !hasVisibleText(value)) throw ValidationFailedError.field('caption', 'must contain a visible character');
            caption = value || null;
          } else if (part.fieldname === 'isPrimary') {
            isPrimary = parseBoolean(String(part.value), 'isPrimary');
          } else {
            throw ValidationFailedError.field(part.fieldname, 'is not a known field');
          }
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          problem ??= error;
          if (part.type === 'file' && !part.file.readableEnded) await part.toBuffer().catch(() => undefined);
        }
      }
      if (problem) throw problem;
    } catch (error) {
      // A limit reached while reading past an earlier problem (a third file part) still answers that problem.
      if (problem) throw problem;
      // The parser (busboy) throws plain Errors for a missing or overlong boundary and a part cut short.
      if (error instanceof AppError || typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error;
      throw new InvalidRequestError('The multipart/form-data body is malformed (boundary or part framing).');
    } finally {
      await bodyFinished(request.raw, 64 * 1024);
    }
    if (!file || file.length === 0) throw ValidationFailedError.field('file', 'is required');
    return images.upload(request.params.cheeseId, file, { caption, isPrimary });
  });

  const ImageParams = Type.Object({ cheeseId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), imageId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
  for (const variant of ['original', 'thumbnail'] as const) {
    app.get(variant === 'original' ? '/cheeses/:cheeseId/images/:imageId' : '/cheeses/:cheeseId/images/:imageId/thumbnail', {
      config: { auth: 'public', produces: variant === 'original' ? IMAGE_TYPES : ['image/webp'] },
      schema: {
        tags: ['cheeses'],
        operationId: variant === 'original' ? 'getCheeseImage' : 'getCheeseImageThumbnail',
        summary: variant === 'original' ? 'An uploaded image (public, so <img> tags can load it)' : 'Its 320px WebP thumbnail',
        description: 'Public, so `<img>` tags can load it; the bytes never change under a URL, so it is cached for a year (`immutable`). Re-encoded at upload without metadata.',
        params: ImageParams,
        produces: variant === 'original' ? [...IMAGE_TYPES] : ['image/webp'],
        response: { 200: Type.Unsafe({ description: 'The image bytes.', type: 'string', format: 'binary' }), ...errorResponses(400, 404, 406) },
      },
    }, async (request, reply) => {
      const image = await images.read(request.params.cheeseId, request.params.imageId, variant);
      // Which of the offered types this image is, is known only now.
      if (request.headers.accept !== undefined && !new Negotiator(request).mediaType([image.contentType])) {
        throw new NotAcceptableError(`This image is ${image.contentType}; your Accept header does not allow it.`);
      }
      // Image bytes never change under a URL: cache for a year.
      return reply.type(image.contentType).header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').send(image.bytes);
    });
  }
};
