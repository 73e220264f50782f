import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { AuthRequirement } from '../../http/auth.js';
import { errorResponses, IdParam } from '../../http/common.schema.js';
import { InvalidRequestError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { CheeseInput, CheeseRef, CheeseReplace, Status } from './cheese.schema.js';
import { normalizeAliases } from './cheese.input.js';
import type { ChangeContext } from './cheese.service.js';
import type { BulkOperation } from './cheese-bulk.service.js';
import { BulkBody, BulkResponse, presentBulkResults } from './cheese-bulk.schema.js';

const WRITE: AuthRequirement = { schemes: ['oauth'], scope: 'write:cheeses' };

export function changeContext(request: FastifyRequest): ChangeContext {
  return { requestId: request.id };
}

/** Form B's snake_case names become camelCase before validation (decisions.md §1). */
const acceptAliases = async (request: FastifyRequest) => normalizeAliases(request.body);

export const cheeseWriteRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const cheeses = services.cheeses;

  app.post('/cheeses', {
    config: { auth: WRITE },
    preValidation: acceptAliases,
    schema: {
      tags: ['cheeses'],
      operationId: 'createCheese',
      summary: 'Add a cheese (fires cheese.new_arrival)',
      body: CheeseInput,
      response: { 201: CheeseRef, ...errorResponses(400, 401, 403, 409, 415, 422) },
    },
  }, async (request, reply) => {
    const cheese = await cheeses.create(request.body, changeContext(request));
    return reply.code(201).header('location', `/v2/cheeses/${cheese.id}`).send(cheese);
  });

  app.put('/cheeses', {
    config: { auth: WRITE },
    preValidation: acceptAliases,
    schema: {
      tags: ['cheeses'],
      operationId: 'replaceCheese',
      summary: 'Replace a cheese named by the body\'s id (or slug)',
      body: CheeseReplace,
      response: { 200: CheeseRef, ...errorResponses(400, 401, 403, 404, 409, 415, 422) },
    },
  }, async (request) => cheeses.replace(request.body, changeContext(request)));

  app.post('/cheeses/:cheeseId', {
    config: { auth: WRITE },
    schema: {
      tags: ['cheeses'],
      operationId: 'updateCheeseWithForm',
      summary: 'Update name and/or status from query parameters (Form A); only given fields change',
      params: Type.Object({ cheeseId: IdParam }),
      querystring: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), status: Type.Optional(Status) }),
      response: { 200: CheeseRef, ...errorResponses(400, 401, 403, 404, 409, 422) },
    },
  }, async (request) => {
    const { name, status } = request.query;
    return cheeses.patch(request.params.cheeseId, { ...(name !== undefined && { name }), ...(status !== undefined && { status }) }, changeContext(request));
  });

  app.delete('/cheeses/:cheeseId', {
    config: { auth: WRITE },
    schema: {
      tags: ['cheeses'],
      operationId: 'deleteCheese',
      summary: 'Delete a cheese; X-Confirm-Delete: true is required',
      description: 'Open orders holding the cheese are cancelled; if one has shipped, 409 and nothing changes (orders arrive in a later release).',
      params: Type.Object({ cheeseId: IdParam }),
      headers: Type.Object({ 'x-confirm-delete': Type.String({ description: 'Must be `true`.', examples: ['true'] }) }),
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    if (request.headers['x-confirm-delete'].trim().toLowerCase() !== 'true') {
      throw new InvalidRequestError('X-Confirm-Delete must be "true" to delete a cheese.', [{ field: 'X-Confirm-Delete', message: 'must be true' }]);
    }
    await cheeses.delete(request.params.cheeseId, changeContext(request));
    return reply.code(204).send(null);
  });

  app.post('/cheeses/bulk', {
    config: { auth: WRITE },
    schema: {
      tags: ['cheeses'],
      operationId: 'bulkCheeses',
      summary: 'Up to 100 create/update/delete operations (2.2.0); `atomic: true` for all-or-nothing',
      description: 'Answers 200 with one result per operation. In an atomic batch that fails, the failing operation carries its error and every other one 424 (not applied).',
      body: BulkBody,
      response: { 200: BulkResponse, ...errorResponses(400, 401, 403, 415, 422) },
    },
  }, async (request) => presentBulkResults(await services.bulk.run(request.body.operations as BulkOperation[], request.body.atomic ?? false, changeContext(request))));
};
