import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import Type from 'typebox';
import type { AuthRequirement } from '../../http/auth.js';
import { errorResponses, IdParam } from '../../http/common.schema.js';
import { AppError, InvalidRequestError, UnsupportedMediaTypeError, ValidationFailedError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { isUnstorable } from '../../http/validation.js';
import { ImageUpload } from './cheese.schema.js';
import { MAX_IMAGE_BYTES } from './image.service.js';

const WRITE: AuthRequirement = { schemes: ['oauth'], scope: 'write:cheeses' };

function parseBoolean(value: string, field: string): boolean {
  const normalised = value.trim().toLowerCase();
  if (normalised === 'true' || normalised === '1') return true;
  if (normalised === 'false' || normalised === '0' || normalised === '') return false;
  throw ValidationFailedError.field(field, 'must be true or false');
}

export const imageRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  await app.register(multipart, {
    limits: { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 4, fieldSize: 2000, parts: 6, headerPairs: 50 },
    throwFileSizeLimit: true,
  });

  app.post('/cheeses/:cheeseId/uploadImage', {
    config: { auth: WRITE },
    schema: {
      tags: ['cheeses'],
      operationId: 'uploadCheeseImage',
      summary: 'Upload an image (JPEG, PNG or WebP by content; 10 MB max)',
      description: 'multipart/form-data with `file` (required), `caption`, `isPrimary`. The image is re-encoded without metadata and a 320px WebP thumbnail is made. Images are served publicly at the returned URLs.',
      consumes: ['multipart/form-data'],
      params: Type.Object({ cheeseId: IdParam }),
      response: { 200: ImageUpload, ...errorResponses(400, 401, 403, 404, 413, 415, 422) },
    },
  }, async (request) => {
    if (!request.isMultipart()) throw new UnsupportedMediaTypeError('Send the image as multipart/form-data with a "file" part.');
    let file: Buffer | undefined;
    let caption: string | null = null;
    let isPrimary = false;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || file) {
            await part.toBuffer();
            throw ValidationFailedError.field(part.fieldname, 'only one file part, named "file", is accepted');
          }
          file = await part.toBuffer();
        } else if (part.fieldname === 'caption') {
          const value = String(part.value);
          // As for JSON bodies (validation.ts), which never see multipart fields.
          if (isUnstorable(value)) throw ValidationFailedError.field('caption', 'must not contain U+0000 or unpaired surrogates');
          caption = value.slice(0, 500) || null;
        } else if (part.fieldname === 'isPrimary') {
          isPrimary = parseBoolean(String(part.value), 'isPrimary');
        } else {
          throw ValidationFailedError.field(part.fieldname, 'is not a known field');
        }
      }
    } catch (error) {
      // The parser (busboy) throws plain Errors for a missing or overlong boundary and a part cut short.
      if (error instanceof AppError || typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error;
      throw new InvalidRequestError('The multipart/form-data body is malformed (boundary or part framing).');
    }
    if (!file || file.length === 0) throw ValidationFailedError.field('file', 'is required');
    return services.images.upload(request.params.cheeseId, file, { caption, isPrimary });
  });

  const ImageParams = Type.Object({ cheeseId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), imageId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
  for (const variant of ['original', 'thumbnail'] as const) {
    app.get(variant === 'original' ? '/cheeses/:cheeseId/images/:imageId' : '/cheeses/:cheeseId/images/:imageId/thumbnail', {
      config: { auth: 'public' },
      schema: {
        tags: ['cheeses'],
        operationId: variant === 'original' ? 'getCheeseImage' : 'getCheeseImageThumbnail',
        summary: variant === 'original' ? 'An uploaded image (public, so <img> tags can load it)' : 'Its 320px WebP thumbnail',
        params: ImageParams,
        response: { 200: Type.Unsafe({ description: 'The image bytes.', type: 'string', contentMediaType: 'image/*' }), ...errorResponses(400, 404) },
      },
    }, async (request, reply) => {
      const image = await services.images.read(request.params.cheeseId, request.params.imageId, variant);
      // Image bytes never change under a URL: cache for a year.
      return reply.type(image.contentType).header('cache-control', 'public, max-age=31536000, immutable').header('x-content-type-options', 'nosniff').send(image.bytes);
    });
  }
};
