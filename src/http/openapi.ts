import type { FastifyInstance, FastifyReply } from 'fastify';
import { etagOf } from './etag.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { securityFor } from './auth.js';
import { API_VERSION } from '../version.js';
import { OAUTH_SCOPES, SCOPE_DESCRIPTIONS } from '../kernel/scopes.js';
import type { DocumentedRoute, OperationDocumenter } from '../kernel/module.js';

/** What an OAuth client may ask for: `read:logs` is read with the account's own credentials only. */
const OAUTH_SCOPE_DESCRIPTIONS = Object.fromEntries(OAUTH_SCOPES.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope]]));
import { refineDocument, SCHEMA_NAME_MARK } from './openapi-document.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The request body as the OpenAPI document shows it, for an operation whose body the
     * route reads itself (multipart uploads): documented, never validated by Ajv.
     */
    documentedBody?: object;
  }
}

const DESCRIPTION = `The Fromagerie API: an online store for artisanal cheese.

One deployment serves both forms of the interface (the 2.0.0 Petstore-style reference and
the workflow form) over one data model. Bodies are camelCase; Form B's snake_case names are
accepted as input aliases where noted (both spellings at once are refused, as is a
single-valued query parameter given twice). Every error is \`{code, type, message}\` (422 adds
\`errors\`). Identifiers in paths accept the integer id or the slug. Every product rule
is stated once in docs/decisions/ of the repository, one page per topic (index:
docs/decisions.md).

Authentication: API keys (\`sk_test_…\` in development and sandbox, \`sk_live_…\` in
production) in \`X-API-Key\` or \`Authorization: Bearer\`; login tokens from
\`POST /customer/login\` as \`Authorization: Bearer\`. Each operation says which it takes
and which scope it needs. 401 means the credential is missing or invalid; 403 that it lacks
the scope or the ownership. OAuth 2.0 (\`cheesy_oauth\`): the authorization server is at this
deployment's root, described by \`/.well-known/oauth-authorization-server\` (RFC 8414): code
with PKCE (S256, required of public clients), client credentials, refresh tokens (rotated;
reuse revokes the grant, except within 2 s of the rotation: then only \`invalid_grant\`),
revocation (RFC 7009), and the implicit grant for clients
registered for it (RFC 9700 advises against it: prefer code with PKCE). Its access tokens
(\`oat_…\`) are accepted wherever an operation takes OAuth, with the scopes granted.

Rate limits (docs/decisions/limits.md): a token bucket per account by plan (Free 100 requests/hour,
burst 10; Pro 10,000/hour, burst 100; Enterprise a bucket of 1,000 refilled at 1,000/s), plus
1,000 requests/minute for authenticated Free and Pro callers; anonymous callers share their
address's Free budget, and a refused credential counts against it. Sandbox multiplies every
figure by 10 and development by 100 (\`RATE_LIMIT_MULTIPLIER\`; production always 1).
Every response carries \`RateLimit-Policy\` (e.g. \`"free";q=100;w=3600\`) and
\`RateLimit\` (\`"free";r=9;t=324\`: what is left of the tightest limit, and in how many seconds
it is full again), per draft-ietf-httpapi-ratelimit-headers; over a limit, 429 with
\`Retry-After\`. Logins, sign-ups and the OAuth token endpoint are also limited per address
and per username (or client). \`/v2/health\` and the docs page are not limited; this
document (\`/v2/openapi.json\`) is, as any anonymous request: fetch it once and keep it
(\`If-None-Match\` with its \`ETag\` answers 304).

Compression: answers of 1 KB or more in a text, JSON, XML, JavaScript or CSS type come in
\`br\` or \`gzip\` when \`Accept-Encoding\` allows it (q-values honoured, \`br\` preferred at
equal q; no header means uncompressed; images never). Every such answer says
\`Vary: Accept-Encoding\`. Each coding has its own strong \`ETag\` (\`"…-br"\`, \`"…-gzip"\`):
send back the one you received; \`If-Match\` on a write takes the tag in any coding.

Headers that take one value (\`Authorization\`, \`X-API-Key\`, \`Content-Type\`,
\`Idempotency-Key\`, \`If-Unmodified-Since\`, \`Host\`) sent on two lines are 400, on every
operation, before the credential is looked at.

Every request (the limits are the defaults): headers within 10 s and the whole request
within 60 s, else 408; bodies over 1 MiB (images: 10 MB) are 413, before the body is read
when \`Content-Length\` says so (\`Expect: 100-continue\` is honoured); an answer given
before the body has arrived closes the connection. At most 100 open connections per client;
beyond, 503 with \`Retry-After\`. A body that is not JSON (or multipart where images are
uploaded) is 415; an operation without a request body takes an empty one whatever its
Content-Type. Unknown query parameters are 400. Integers in paths and queries are plain
decimal: \`03\`, \`0x3\`, \`1e0\`, \`+3\`, \`-0\` are 400, never another id.`;

const errorRef = { $ref: 'Error#' };
const BODY_ERRORS: Record<string, { description: string }> = {
  408: { description: 'The request did not arrive within the time allowed.' },
  413: { description: 'The body is over the size limit; when `Content-Length` says so, answered before the body is read (and the connection closed).' },
  415: { description: 'The body is not in a media type this operation takes, declares a charset other than UTF-8, or comes in a content or transfer coding (send it uncompressed: `Accept-Encoding: identity`).' },
};

/**
 * `webhooks`: the OpenAPI 3.1 section describing the requests we send to receivers;
 * `documenters`: what modules add to the operations they concern (FeatureModule.documents).
 */
export async function registerOpenApi(app: FastifyInstance, webhooks: Record<string, unknown>, documenters: OperationDocumenter[] = []): Promise<void> {
  /** Per "method path", the media types besides JSON its route negotiates (`config.produces`). */
  const representations = new Map<string, readonly string[]>();
  await app.register(swagger, {
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Fromagerie API',
        version: API_VERSION,
        description: DESCRIPTION,
        contact: { name: 'Fromagerie API team', email: 'api@fromagerie.example' },
      },
      // Relative: the docs page (and any client reading this document) calls the origin it came from.
      servers: [{ url: '/v2', description: 'This deployment (relative to where this document is served)' }],
      // Built from the event schemas (webhook.openapi.ts); its shape is OpenAPI 3.1's, checked by Spectral in CI.
      webhooks: webhooks as never,
      tags: [
        { name: 'cheeses', description: 'The catalogue' },
        { name: 'store', description: 'Inventory and orders (Form A)' },
        { name: 'orders', description: 'Orders (Form B), their tracking and the sandbox' },
        { name: 'api-keys', description: 'Your API keys' },
        { name: 'customer', description: 'Customer accounts and login tokens' },
        { name: 'oauth-clients', description: 'OAuth 2.0 clients, registered by staff' },
        { name: 'webhooks', description: 'Signed event deliveries to your endpoints: registration, the attempt log, test, replay and secret rotation. Event kinds: docs/events.md' },
        // issue 21 (helperA): the event log's tag
        { name: 'events', description: 'The event log: every event, read in commit order or polled forward. Kinds: docs/events.md' },
        { name: 'request-logs', description: 'The request log: every /v2 request your account made, with status, timing, credential and bodies (secrets redacted), listed or tailed' },
        { name: 'accounts', description: 'Accounts\' rate-limit plans (staff)' },
        { name: 'health', description: 'Operations' },
      ],
      components: {
        securitySchemes: {
          // In this order in the docs page's Authorize dialog: the first box takes the key for every operation.
          api_key_bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_live_… / sk_test_… API key',
            description:
              'Your API key (`sk_live_…` or `sk_test_…`) as `Authorization: Bearer sk_…`. It serves every operation that takes an API key, reads and writes. **In the docs page, enter your key here once**: the other boxes are for login tokens, OAuth and the `X-API-Key` header.',
          },
          bearer_auth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A login token from `POST /customer/login`, as `Authorization: Bearer`. Not an API key: a key goes in `api_key_bearer`.' },
          cheesy_oauth: {
            type: 'oauth2',
            description: 'OAuth 2.0 at this deployment\'s root (metadata: `/.well-known/oauth-authorization-server`). Clients are registered by staff (`POST /oauth-clients`). Access tokens are `oat_…`, for one hour; refresh tokens rotate.',
            flows: {
              authorizationCode: { authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: OAUTH_SCOPE_DESCRIPTIONS },
              implicit: { authorizationUrl: '/oauth/authorize', scopes: OAUTH_SCOPE_DESCRIPTIONS },
              clientCredentials: { tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: OAUTH_SCOPE_DESCRIPTIONS },
            },
          },
          api_key: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description:
              'The same API key in `X-API-Key` (Form A). The operations Form A gives OAuth (the catalogue\'s and a customer\'s writes, `findByStatus`, `findByTags`) refuse it; `api_key_bearer` serves those and every operation this one does, so the docs page does not need it.',
          },
        },
      },
    },
    // Paths are declared relative to the /v2 server URL.
    transform: ({ schema, url, route }) => {
      const produces = route.config?.produces?.filter((type) => type !== 'application/json');
      if (produces && produces.length > 0) for (const method of [route.method].flat()) representations.set(`${String(method).toLowerCase()} ${url.replace(/^\/v2/, '')}`, produces);
      const auth = route.config?.auth;
      const transformed = { ...(schema as Record<string, unknown>) } as Record<string, unknown>;
      transformed.security = securityFor(auth);
      if (auth !== undefined && auth !== 'public' && auth.scope) {
        const needs = `Needs the \`${auth.scope}\` scope.`;
        transformed.description = transformed.description ? `${String(transformed.description)}\n\n${needs}` : needs;
      }
      if (route.config?.documentedBody) transformed.body = route.config.documentedBody;
      // Every operation refuses unknown query parameters, including those that take none.
      if (!transformed.querystring && transformed.response) {
        transformed.response = { 400: { ...errorRef, description: 'Takes no query parameters: any is refused.' }, ...(transformed.response as Record<string, unknown>) };
      }
      for (const document of documenters) document(route as DocumentedRoute, transformed);
      if (transformed.body && transformed.response) {
        const responses = { ...(transformed.response as Record<string, unknown>) };
        for (const [status, { description }] of Object.entries(BODY_ERRORS)) responses[status] ??= { ...errorRef, description };
        transformed.response = responses;
      }
      markNamedSchemas(transformed);
      return { schema: transformed as typeof schema, url: url.replace(/^\/v2/, '') };
    },
    transformObject: (documentObject) => {
      const document = documentRepresentations(refineDocument('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject), representations);
      // Every schema is JSON Schema 2020-12 (OpenAPI 3.1's own): said, so validators judge `unevaluatedProperties` and the rest as written
      // (@fastify/swagger does not pass the field through from its options).
      return Object.assign(document, { jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema' });
    },
  });
  // The docs page and its files are the same bytes all along: compressed once (compression.ts).
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...route.config, compressOnce: true };
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null, requestInterceptor: dropDuplicateApiKey },
    staticCSP: DOCS_CSP,
  });
}

/**
 * @fastify/swagger inlines a body or response schema that has an `$id` when it is the whole
 * body (`201: Order`) and references it only when nested: marked here (on copies, never the
 * route's own schema objects), it is emitted once under that name by refineDocument.
 */
function markNamedSchemas(operation: Record<string, unknown>): void {
  const mark = (schema: unknown) => (typeof schema === 'object' && schema !== null && typeof (schema as { $id?: unknown }).$id === 'string' ? { ...schema, [SCHEMA_NAME_MARK]: (schema as { $id: string }).$id } : schema);
  if (operation.body) operation.body = mark(operation.body);
  if (operation.response) operation.response = Object.fromEntries(Object.entries(operation.response as Record<string, unknown>).map(([status, schema]) => [status, mark(schema)]));
}

/**
 * The policy of the docs page (every /docs route, and nothing else): script from this origin
 * only, never inline; inline style allowed, since Swagger UI renders `<style>` elements (its
 * logo's SVG) that no nonce or stable hash covers. No `upgrade-insecure-requests`: the page
 * loads nothing but its own origin, and the directive blanked it when served over plain http
 * at any host but localhost. No validator badge (validatorUrl null), so no image from
 * validator.swagger.io.
 */
const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ');

/**
 * The docs page's `requestInterceptor`: a key authorised in both `api_key_bearer` and
 * `api_key` would travel twice (Swagger UI applies every authorized scheme an operation
 * lists); when `Authorization: Bearer` carries the same key, `X-API-Key` is dropped, from the
 * request and from the curl shown. Runs in the browser, serialised into the page's
 * swagger-initializer.js by its source text: self-contained, and without nested functions
 * (tsx's keepNames would wrap a named one in a helper the page does not have).
 */
function dropDuplicateApiKey(request: { headers?: Record<string, string> }) {
  const headers = request.headers ?? {};
  let apiKey: string | undefined;
  let authorization: string | undefined;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === 'x-api-key') apiKey = name;
    if (name.toLowerCase() === 'authorization') authorization = name;
  }
  if (apiKey !== undefined && authorization !== undefined && headers[authorization] === `Bearer ${headers[apiKey]}`) delete headers[apiKey];
  return request;
}

/**
 * `GET /v2/openapi.json`: the document serialised once per process (461 KB, the same bytes
 * `app.swagger()` would give each time) with its ETag; compression.ts compresses it once
 * per coding at the best level (`compressOnce` on the route).
 */
export function serveDocument(app: FastifyInstance): (request: unknown, reply: FastifyReply) => FastifyReply {
  let document: { body: Buffer; etag: string } | undefined;
  return (_request, reply) => {
    if (!document) {
      const body = Buffer.from(JSON.stringify(app.swagger()), 'utf8');
      document = { body, etag: etagOf(body) };
    }
    return reply.type('application/json; charset=utf-8').header('etag', document.etag).send(document.body);
  };
}

/** What a non-JSON representation is, for the document. */
const REPRESENTATION_SCHEMAS: Record<string, { schema: Record<string, unknown> }> = {
  'text/csv': {
    schema: {
      type: 'string',
      description: 'CSV (RFC 4180, UTF-8): a header line of field names, then one line per item, with the fields of the JSON representation (`fields` picks and orders them); lists inside a field are joined with `;`, objects are JSON.',
    },
  },
};

/** Adds to each successful answer of a negotiating operation its other media types (the JSON one is already there). */
function documentRepresentations<T extends object>(document: T, representations: ReadonlyMap<string, readonly string[]>): T {
  const paths = (document as { paths?: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>> }).paths ?? {};
  for (const [key, types] of representations) {
    const [method, path] = key.split(' ') as [string, string];
    const responses = paths[path]?.[method]?.responses ?? {};
    for (const [status, response] of Object.entries(responses)) {
      if (!status.startsWith('2') || !response.content) continue;
      for (const type of types) response.content[type] ??= REPRESENTATION_SCHEMAS[type] ?? { schema: { type: 'string' } };
    }
  }
  return document;
}
