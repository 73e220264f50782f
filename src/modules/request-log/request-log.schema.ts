import Type from 'typebox';

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });

const Headers = Type.Record(Type.String(), Type.String(), { description: 'As sent, names lower-case; credentials, cookies and credential-shaped values replaced by `[redacted]`. Kept with the bodies (`REQUEST_LOG_BODIES`): empty when this answer keeps none.' });
const Body = nullable(
  Type.String(),
  'The first 16 KB, as text, with every password, secret and token redacted (by field name, and by shape anywhere: `sk_…`, `whsec_…`, OAuth tokens and client secrets, JWTs); bytes and streams described, not kept. Null when none was sent, or when `REQUEST_LOG_BODIES` keeps none for this answer (`errors`: only 4xx and 5xx keep bodies; `none`).',
);

export const RequestLogEntry = Type.Object(
  {
    object: Type.Literal('request_log'),
    requestId: Type.String({ description: 'The request\'s `X-Request-Id` (yours when you sent a safe one): what an event\'s `metadata.request_id` names.', examples: ['6f1c2b9e-3a4d-4e8f-9b1a-2c3d4e5f6a7b'] }),
    createdAt: Type.String({ format: 'date-time', description: 'When the request arrived.' }),
    method: Type.String({ examples: ['POST'] }),
    route: Type.String({ description: 'The operation\'s path template (`/v2/orders/:id`); the path itself when no operation matched (a 404).', examples: ['/v2/orders'] }),
    path: Type.String({ examples: ['/v2/orders'] }),
    query: Type.String({ description: 'The query string without `?`, secrets redacted; empty when none.' }),
    status: Type.Integer({ minimum: 100, maximum: 599, examples: [201] }),
    durationMs: Type.Number({ minimum: 0, description: 'From the request\'s arrival to the answer\'s last byte handed to the connection.' }),
    credential: Type.Object(
      {
        kind: Type.Enum(['api_key', 'login_token', 'oauth_token'], { description: 'What authenticated the request.' }),
        label: Type.String({ description: 'Public, never the secret: an API key\'s `prefix` (its first 16 characters, as `GET /v2/api-keys` lists it), an OAuth client\'s id, `login_token:<session>`.', examples: ['sk_test_Xq3v9Lm2'] }),
      },
      { additionalProperties: false },
    ),
    accountId: Type.String({ description: 'The account that made the request (staff see every account\'s).' }),
    idempotencyKey: nullable(Type.String(), 'The `Idempotency-Key` header, when sent.'),
    clientIp: Type.String({ description: 'The client\'s address (through trusted proxies: TRUST_PROXY).' }),
    userAgent: nullable(Type.String(), 'The `User-Agent` header, when sent.'),
    traceId: nullable(Type.String({ pattern: '^[0-9a-f]{32}$' }), 'The request\'s trace id (W3C, 32 hex digits) when the service exports traces (`OTEL_EXPORTER_OTLP_ENDPOINT`): its spans in your tracing backend. Null when tracing is off.'),
    request: Type.Object({ headers: Headers, body: Body }, { additionalProperties: false }),
    response: Type.Object({ headers: Headers, body: Body }, { additionalProperties: false }),
  },
  { $id: 'RequestLogEntry', additionalProperties: false, description: 'One request an account made to /v2, as recorded when it was answered.' },
);

export const RequestLogPage = Type.Object(
  {
    items: Type.Array(Type.Unsafe<Record<string, unknown>>({ $ref: 'RequestLogEntry#' }), { description: 'Newest first (`order=asc`: oldest first).' }),
    hasMore: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page, with the same filters; null exactly when `hasMore` is false.' }),
    nextAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'Polling forward (`order=asc`): pass as `after` in the next poll to go on exactly where this page ended (an opaque `pos_…`), also when the page is empty. Null when newest first.',
    }),
  },
  { additionalProperties: false },
);

export const RequestLogListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Entries per page, 1 to 100.' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: '`nextCursor` of the previous page, unchanged, with the same filters (another filter is a 400).' })),
    status: Type.Optional(Type.String({ pattern: '^(?:[1-5]xx|[1-5][0-9]{2})$', description: 'A class (`2xx`, `4xx`, `5xx`) or one status (`404`).', examples: ['4xx'] })),
    method: Type.Optional(Type.Enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], { description: 'Only requests of this method.' })),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 500, pattern: '^/', description: 'Only paths starting with this (`/v2/orders` also finds `/v2/orders/42`).', examples: ['/v2/orders'] })),
    credential: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only requests of this credential: a key\'s `prefix`, an OAuth client id, or a kind (`api_key`, `login_token`, `oauth_token`).' })),
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only requests that sent this `Idempotency-Key` (the first and its replays).' })),
    request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only the request(s) with this `X-Request-Id`.' })),
    created_gte: Type.Optional(Type.String({ format: 'date-time', description: 'Arrived at or after this instant.' })),
    created_lt: Type.Optional(Type.String({ format: 'date-time', description: 'Arrived before this instant.' })),
    order: Type.Optional(Type.Enum(['desc', 'asc'], { description: '`desc`: newest first (the default without `after`). `asc`: oldest first (the default with `after`).' })),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 400,
        description: 'Polls forward: the entries recorded after this place, in the order they were written. `now`: only what is recorded after this request; a request id of yours; or the `nextAfter` of an earlier page.',
        examples: ['now'],
      }),
    ),
    wait: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 25,
        description:
          'Long poll, with `after`: when nothing past `after` is recorded yet, hold the request up to this many seconds until an entry the filters would list is (entries are written in batches, within about a quarter of a second of their answer), then answer the page; at the end of the wait, an empty page. Held requests of one account on one instance are limited (`EVENTS_MAX_HELD_PER_ACCOUNT`, 100 by default, counted apart from the event log\'s): past it a 429; an instance shutting down answers them at once.',
        examples: [25],
      }),
    ),
  },
  { additionalProperties: false },
);

export const RequestIdParams = Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$', description: 'The request\'s `X-Request-Id`.' }) });
