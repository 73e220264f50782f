import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * The OpenAPI document as a newcomer meets it in the docs page: where "Try it out" sends
 * requests, what the Authorize dialog offers, whether a file can be sent, and whether the
 * request examples, sent as shown, work.
 */
type Operation = {
  requestBody?: { content: Record<string, { schema?: any; example?: unknown }> };
  responses: Record<string, { content?: Record<string, unknown>; $ref?: string }>;
  parameters?: { in: string; name: string; required?: boolean }[];
  security?: Record<string, string[]>[];
};
let t: TestApp;
let doc: any;
let admin: string;
beforeAll(async () => {
  t = await createTestApp({ seed: true });
  admin = await t.key(['admin']);
  doc = (await t.http.get('/v2/openapi.json')).body;
});
afterAll(() => t.close());

const operation = (path: string, method: string): Operation => doc.paths[path][method];
const operations = (): [string, string, Operation][] =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [path, method, op] as [string, string, Operation]));

describe('the OpenAPI document', () => {
  it('sends "Try it out" to the origin the document came from, whatever PUBLIC_URL says', () => {
    // The test app's PUBLIC_URL (localhost:8080) is not where it listens: a server naming it would break the docs page.
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/v2' })]);
  });

  it('points its OAuth flows at the endpoints this deployment serves, as its metadata lists them', async () => {
    const oauth = (doc.components.securitySchemes as Record<string, { type: string; flows?: Record<string, { authorizationUrl?: string; tokenUrl?: string; scopes: Record<string, string> }> }>).cheesy_oauth!;
    expect(oauth.type).toBe('oauth2');
    const metadata = (await t.http.get('/.well-known/oauth-authorization-server')).body;
    const onThisOrigin = (url: string) => new URL(url, `${t.http.baseUrl}/v2/openapi.json`).pathname;
    expect(Object.keys(oauth.flows!).sort()).toEqual(['authorizationCode', 'clientCredentials', 'implicit']);
    for (const flow of Object.values(oauth.flows!)) {
      if (flow.authorizationUrl) expect(onThisOrigin(flow.authorizationUrl)).toBe(new URL(metadata.authorization_endpoint).pathname);
      if (flow.tokenUrl) expect(onThisOrigin(flow.tokenUrl)).toBe(new URL(metadata.token_endpoint).pathname);
      expect(Object.keys(flow.scopes).sort()).toEqual([...metadata.scopes_supported].sort());
    }
    // An operation that takes OAuth names its scope on the OAuth scheme.
    expect(operation('/cheeses', 'post').security).toContainEqual({ cheesy_oauth: ['write:cheeses'] });
    expect((await t.http.get('/oauth/authorize')).status).toBe(400);
  });

  it('describes the image upload as a multipart form with a file, so the docs page can send one', () => {
    const body = operation('/cheeses/{cheeseId}/uploadImage', 'post').requestBody;
    const form = body?.content['multipart/form-data']?.schema;
    expect(form).toMatchObject({ type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' }, caption: { type: 'string' }, isPrimary: { type: 'boolean' } } });
  });

  it('lets the docs page send X-Confirm-Delete with a bulk batch that deletes', () => {
    expect(operation('/cheeses/bulk', 'post').parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'x-confirm-delete' }));
  });

  it('types the image answers as images, not JSON', () => {
    expect(Object.keys(operation('/cheeses/{cheeseId}/images/{imageId}', 'get').responses['200']?.content ?? {})).toEqual(['image/jpeg', 'image/png', 'image/webp']);
    expect(Object.keys(operation('/cheeses/{cheeseId}/images/{imageId}/thumbnail', 'get').responses['200']?.content ?? {})).toEqual(['image/webp']);
  });

  it('documents 408, 413 and 415 on every operation that takes a body', () => {
    const withBody = operations().filter(([, , op]) => op.requestBody);
    expect(withBody.length).toBeGreaterThan(10);
    for (const [path, method, op] of withBody) {
      for (const status of ['408', '413', '415']) expect(op.responses[status], `${method.toUpperCase()} ${path} ${status}`).toBeDefined();
    }
  });

  it('shows a request example that works as shown: POST then PUT /cheeses, bulk, a new API key, sign-up', async () => {
    const sent: [string, string, number][] = [];
    for (const [path, method] of [['/cheeses', 'post'], ['/cheeses', 'put'], ['/cheeses/bulk', 'post'], ['/api-keys', 'post']] as const) {
      const example = operation(path, method).requestBody?.content['application/json']?.example;
      expect(example, `${method} ${path} example`).toBeDefined();
      // As the docs page sends it after "Try it out": the example body, nothing else.
      const res = await t.http.request(method.toUpperCase(), `/v2${path}`, { headers: bearer(admin), json: example });
      sent.push([method, path, res.status]);
      if (res.status >= 300) console.error(`${method} ${path}: ${res.text}`);
      if (path === '/cheeses/bulk' && res.status === 200) expect(res.body.failed, JSON.stringify(res.body.results)).toBe(0);
    }
    expect(sent).toEqual([['post', '/cheeses', 201], ['put', '/cheeses', 200], ['post', '/cheeses/bulk', 200], ['post', '/api-keys', 201]]);
    // Sign-up is public: no Authorize needed.
    expect((await t.http.post('/v2/customer', { json: operation('/customer', 'post').requestBody?.content['application/json']?.example })).status).toBe(201);
  });
});
