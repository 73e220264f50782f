import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { changeContextOf, type AuthRequirement } from '../../http/auth.js';
import { writePrecondition } from '../../http/etag.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { errorResponses, IdParam } from '../../http/common.schema.js';
import { InvalidRequestError } from '../../kernel/errors.js';
import { CheeseInput, CheeseRef, CheeseReplace, Status, type CheeseView } from './cheese.schema.js';
import { normalizeAliases } from './cheese.input.js';
import type { CheeseService } from './cheese.service.js';
import type { BulkOperation, CheeseBulkService } from './cheese-bulk.service.js';
import { BulkBody, BulkResponse, presentBulkResults } from './cheese-bulk.schema.js';

const WRITE: AuthRequirement = { schemes: ['any_bearer'], scope: 'write:cheeses' };

/** A deletion, single or in a batch, needs `X-Confirm-Delete: true`; 400 otherwise, and nothing changes. */
function requireDeleteConfirmation(request: FastifyRequest): void {
  const header = request.headers['x-confirm-delete'];
  if (typeof header !== 'string' || header.trim().toLowerCase() !== 'true') {
    throw new InvalidRequestError('X-Confirm-Delete must be "true" to delete a cheese.', [{ field: 'X-Confirm-Delete', message: 'must be true' }]);
  }
}

/** RFC 9110 §13.1 preconditions a write of one cheese honours, checked against the locked current cheese. */
const PRECONDITIONS = {
  'if-match': Type.Optional(
    Type.String({
      description: 'ETags of the cheese (from a GET or a write), compared strongly: the change applies only if one is still current, else 412 and nothing changes. `*`: any current cheese. A missing cheese is a 404 all the same.',
    }),
  ),
  'if-none-match': Type.Optional(Type.String({ description: 'The change applies only if none of these ETags is current (weak comparison), else 412; `*` makes every existing cheese a 412.' })),
  'if-unmodified-since': Type.Optional(
    Type.String({ description: 'An HTTP-date: the change applies only if the cheese\'s `updatedAt`, to the second, is not later, else 412. Ignored beside If-Match, or when not a date.' }),
  ),
};

/** The change context with the request's preconditions, checked by the service against the locked current cheese. */
function conditionalContext(request: FastifyRequest, reply: FastifyReply): ChangeContext {
  const precondition = writePrecondition(request, reply, { schema: { $ref: 'Cheese#' }, lastModified: (cheese) => (cheese as CheeseView).updatedAt });
  return { ...changeContextOf(request), precondition };
}

/** Form B's snake_case names become camelCase before validation (decisions.md §1). */
const acceptAliases = async (request: FastifyRequest) => normalizeAliases(request.body);

const cheesePath = (id: string | number) => `/v2/cheeses/${id}`;

export const cheeseWriteRoutes: FastifyPluginAsyncTypebox<{ cheeses: CheeseService; bulk: CheeseBulkService }> = async (app, { cheeses, bulk }) => {

  app.post('/cheeses', {
    config: { auth: WRITE, writesResource: true, idempotent: true },
    preValidation: acceptAliases,
    schema: {
      tags: ['cheeses'],
      operationId: 'createCheese',
      summary: 'Add a cheese (fires cheese.new_arrival)',
      body: CheeseInput,
      response: { 201: CheeseRef, ...errorResponses(400, 401, 403, 409, 415, 422) },
    },
  }, async (request, reply) => {
    const cheese = await cheeses.create(request.body, changeContextOf(request, cheesePath));
    return reply.code(201).header('location', cheesePath(cheese.id)).send(cheese);
  });

  app.put('/cheeses', {
    config: { auth: WRITE, writesResource: true },
    preValidation: acceptAliases,
    schema: {
      tags: ['cheeses'],
      operationId: 'replaceCheese',
      summary: 'Replace a cheese named by the body\'s id (or slug)',
      headers: Type.Object(PRECONDITIONS),
      body: CheeseReplace,
      response: { 200: CheeseRef, ...errorResponses(400, 401, 403, 404, 409, 412, 415, 422) },
    },
  }, async (request, reply) => cheeses.replace(request.body, conditionalContext(request, reply)));

  app.post('/cheeses/:cheeseId', {
    config: { auth: WRITE, writesResource: true },
    schema: {
      tags: ['cheeses'],
      operationId: 'updateCheeseWithForm',
      summary: 'Update name and/or status from query parameters (Form A); only given fields change',
      description: 'With neither parameter, nothing changes (not even `updatedAt`, so the ETag stays).',
      params: Type.Object({ cheeseId: IdParam }),
      querystring: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), status: Type.Optional(Status) }),
      headers: Type.Object(PRECONDITIONS),
      response: { 200: CheeseRef, ...errorResponses(400, 401, 403, 404, 409, 412, 422) },
    },
  }, async (request, reply) => {
    const { name, status } = request.query;
    return cheeses.patch(request.params.cheeseId, { ...(name !== undefined && { name }), ...(status !== undefined && { status }) }, conditionalContext(request, reply));
  });

  app.delete('/cheeses/:cheeseId', {
    config: { auth: WRITE },
    schema: {
      tags: ['cheeses'],
      operationId: 'deleteCheese',
      summary: 'Delete a cheese; X-Confirm-Delete: true is required',
      description: 'Open orders holding the cheese are cancelled; if one has shipped, 409 and nothing changes (orders arrive in a later release).',
      params: Type.Object({ cheeseId: IdParam }),
      headers: Type.Object({ 'x-confirm-delete': Type.String({ description: 'Must be `true`.', examples: ['true'] }), ...PRECONDITIONS }),
      response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(400, 401, 403, 404, 409, 412) },
    },
  }, async (request, reply) => {
    requireDeleteConfirmation(request);
    await cheeses.delete(request.params.cheeseId, conditionalContext(request, reply));
    return reply.code(204).send(null);
  });

  app.post('/cheeses/bulk', {
    config: { auth: WRITE, idempotent: true },
    schema: {
      tags: ['cheeses'],
      operationId: 'bulkCheeses',
      summary: 'Up to 100 create/update/delete operations (2.2.0); `atomic: true` for all-or-nothing',
      description: 'Answers 200 with one result per operation. In an atomic batch that fails, the failing operation carries its error and every other one 424 (not applied). A batch with a `delete` needs `X-Confirm-Delete: true`, as a single delete does (400 otherwise, nothing applied).',
      // Declared so the docs page can send it with a batch that deletes.
      headers: Type.Object({ 'x-confirm-delete': Type.Optional(Type.String({ description: 'Must be `true` when any operation is a `delete`.', examples: ['true'] })) }),
      body: BulkBody,
      response: { 200: BulkResponse, ...errorResponses(400, 401, 403, 415, 422) },
    },
  }, async (request) => {
    const operations = request.body.operations as BulkOperation[];
    if (operations.some((operation) => operation.op === 'delete')) requireDeleteConfirmation(request);
    return presentBulkResults(await bulk.run(operations, request.body.atomic ?? false, changeContextOf(request)));
  });
};
