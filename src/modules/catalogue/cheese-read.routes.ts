import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { AuthRequirement } from '../../http/auth.js';
import { errorResponses, IdParam } from '../../http/common.schema.js';
import { InvalidRequestError } from '../../kernel/errors.js';
import { CheeseList, CheeseRef, Inventory, Milk, Texture } from './cheese.schema.js';
import { STATUSES, TAG_PATTERN } from './cheese.model.js';
import { buildFilter, FIELD_NAMES, parseFields, parseList, parseSort, project } from './cheese.query.js';
import type { CheesePage, CheeseReadService, ListRequest } from './cheese-read.service.js';
import { toCsv } from './csv.codec.js';
import { type Clock } from '../../kernel/clock.js';

const tagPattern = new RegExp(TAG_PATTERN);
const READ_ANY: AuthRequirement = { schemes: ['api_key', 'any_bearer'], scope: 'read:cheeses' };
const READ_OAUTH: AuthRequirement = { schemes: ['any_bearer'], scope: 'read:cheeses' };
const READ_API_KEY: AuthRequirement = { schemes: ['api_key'], scope: 'read:cheeses' };
/** Lists answer JSON, or CSV (2.4.0) when Accept prefers it. */
const PAGE_TYPES = ['application/json', 'text/csv'] as const;
const bool = (description: string) => Type.Optional(Type.Boolean({ description }));
/** Comma-separated (`a,b`, Form A) or repeated (`x=a&x=b`, OpenAPI's explode default): both work. */
const listParam = (maxLength: number, description: string) =>
  Type.Union([Type.String({ minLength: 1, maxLength }), Type.Array(Type.String({ minLength: 1, maxLength }), { minItems: 1, maxItems: 20 })], {
    description: `${description} Comma-separated or repeated.`,
  });

const ListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 1000, description: "The previous page's nextCursor, unchanged." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  status: Type.Optional(listParam(100, `One or more of ${STATUSES.join(', ')}.`)),
  sort: Type.Optional(Type.String({ maxLength: 40, description: 'name (default), createdAt, updatedAt, pricePerKg or agedWeeks; "-" prefix for descending. snake_case accepted.' })),
  order: Type.Optional(Type.Enum(['asc', 'desc'], { description: 'Form B; `sort=-name` equals `sort=name&order=desc`.' })),
  country: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Country of origin, case-insensitive.' })),
  texture: Type.Optional(Texture),
  milk: Type.Optional(Milk),
  aged_weeks_min: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'Form B. Alias: agedWeeksMin.' })),
  agedWeeksMin: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
  organic: bool('Only organic (true) or non-organic (false) cheeses.'),
  seasonal: bool('Only seasonal (true) or year-round (false) cheeses.'),
  inStock: bool('Only cheeses with (true) or without (false) stock. Alias: in_stock.'),
  in_stock: bool('Alias of inStock.'),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Category name, case-insensitive.' })),
  tags: Type.Optional(listParam(500, 'Cheeses with any of these tags (successor of findByTags).')),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Search name, origin, region and producer; accents, case, hyphens and spaces do not matter.' })),
  fields: Type.Optional(Type.String({ maxLength: 500, description: 'Sparse fieldset, comma-separated, either spelling (`price_per_kg` or `pricePerKg`); `id` is always included.' })),
});
type ListQueryType = Type.Static<typeof ListQuery>;

const SeasonalQuery = Type.Object({
  ...ListQuery.properties,
  month: Type.Optional(Type.Integer({ minimum: 1, maximum: 12, description: 'Month to look at (default: the current month, UTC).' })),
});

function nextLink(request: FastifyRequest, cursor: string): string {
  const url = new URL(request.url, 'http://x');
  url.searchParams.set('cursor', cursor);
  return `<${url.pathname}${url.search}>; rel="next"`;
}

/** JSON or CSV (2.4.0), with the sparse fieldset applied and a Link to the next page. */
function sendPage(request: FastifyRequest, reply: FastifyReply, page: CheesePage, fieldsParam: string | undefined) {
  const fields = parseFields(fieldsParam);
  const vary = reply.getHeader('vary');
  reply.header('vary', [vary, 'Accept, Authorization, X-API-Key'].filter(Boolean).join(', '));
  if (page.nextCursor) reply.header('link', nextLink(request, page.nextCursor));
  const items = page.items.map((item) => project(item, fields));
  if (request.representation === 'text/csv') {
    reply.header('x-total-count', String(page.total));
    return reply.type('text/csv; charset=utf-8').send(toCsv(items, fields ?? [...FIELD_NAMES]));
  }
  return reply.send({ ...page, items });
}

function listRequest(query: ListQueryType, extraFilter: Partial<ListRequest['filter']> = {}): ListRequest {
  const { sort, direction } = parseSort(query.sort, query.order);
  return { filter: { ...buildFilter(query, STATUSES, tagPattern), ...extraFilter }, sort, direction, cursor: query.cursor, limit: query.limit ?? 20 };
}

export const cheeseReadRoutes: FastifyPluginAsyncTypebox<{ reader: CheeseReadService; clock: Clock }> = async (app, { reader, clock }) => {
  const listResponses = { 200: { ...CheeseList, description: 'A page of cheeses; `Accept: text/csv` returns CSV.' }, ...errorResponses(400, 401, 403) };

  app.get('/cheeses', {
    config: { auth: READ_ANY, readCache: true, produces: PAGE_TYPES },
    schema: { tags: ['cheeses'], operationId: 'listCheeses', summary: 'List cheeses (keyset pagination, filters, search, CSV)', querystring: ListQuery, response: listResponses },
  }, async (request, reply) => sendPage(request, reply, await reader.list(listRequest(request.query)), request.query.fields));

  app.get('/cheeses/seasonal', {
    config: { auth: READ_ANY, readCache: true, produces: PAGE_TYPES },
    schema: { tags: ['cheeses'], operationId: 'listSeasonalCheeses', summary: 'Seasonal cheeses available this month (2.4.0)', querystring: SeasonalQuery, response: listResponses },
  }, async (request, reply) => {
    const month = request.query.month ?? clock.date().getUTCMonth() + 1;
    return sendPage(request, reply, await reader.list(listRequest(request.query, { availableInMonth: month })), request.query.fields);
  });

  app.get('/cheeses/findByStatus', {
    config: { auth: READ_OAUTH, readCache: true },
    schema: {
      tags: ['cheeses'],
      operationId: 'findCheesesByStatus',
      summary: 'Cheeses in any of the given statuses (at most 1000; use GET /cheeses?status= to page)',
      querystring: Type.Object({ status: listParam(100, `Any of ${STATUSES.join(', ')}.`) }),
      response: { 200: Type.Array(CheeseRef), ...errorResponses(400, 401, 403) },
    },
  }, async (request) => {
    const statuses = parseList(request.query.status, STATUSES) ?? [];
    if (statuses.length === 0) throw new InvalidRequestError('status: give at least one status.', [{ field: 'status', message: 'is empty' }]);
    return reader.findAll({ statuses });
  });

  app.get('/cheeses/findByTags', {
    config: { auth: READ_OAUTH, readCache: true },
    schema: {
      tags: ['cheeses'],
      operationId: 'findCheesesByTags',
      deprecated: true,
      summary: 'Deprecated: use GET /cheeses?tags=. Cheeses with any of the tags (at most 1000).',
      querystring: Type.Object({ tags: listParam(500, 'Tag names.') }),
      response: { 200: Type.Array(CheeseRef), ...errorResponses(400, 401, 403) },
    },
  }, async (request, reply) => {
    const filter = buildFilter({ tags: request.query.tags }, STATUSES, tagPattern);
    if (!filter.tags) throw new InvalidRequestError('tags: give at least one tag.', [{ field: 'tags', message: 'is empty' }]);
    reply.header('deprecation', '@1767225600'); // RFC 9745: deprecated since 2026-01-01
    reply.header('link', `</v2/cheeses?tags=${encodeURIComponent(filter.tags.join(','))}>; rel="successor-version"`);
    return reader.findAll(filter);
  });

  app.get('/cheeses/:cheeseId', {
    config: { auth: READ_API_KEY, readCache: true },
    schema: {
      tags: ['cheeses'],
      operationId: 'getCheese',
      summary: 'One cheese, by id or slug',
      params: Type.Object({ cheeseId: IdParam }),
      response: { 200: CheeseRef, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => reader.get(request.params.cheeseId));

  app.get('/store/inventory', {
    config: { auth: READ_API_KEY, readCache: true },
    schema: { tags: ['store'], operationId: 'getInventory', summary: 'Number of cheeses in each status', response: { 200: Inventory, ...errorResponses(401, 403) } },
  }, async () => reader.inventory());
};
