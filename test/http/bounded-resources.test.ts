import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { portOf } from '../helpers/raw.js';

/** Resources stay bounded whatever the client does (hardening issue). */
let t: TestApp;
let auth: Record<string, string>;
let read: Record<string, string>;
const BUDGET = 96 * 1024;
beforeAll(async () => {
  ({ t, auth, read } = await createAdminTestApp({ seed: true, config: { readCacheMaxBytes: BUDGET, readCacheTtlMs: 60_000, imageConcurrency: 1, imageQueue: 1 } }));
});
afterAll(() => t.close());

describe('the read cache is an LRU bounded by bytes', () => {
  // Pages of names only: each a few KB, together several times the budget.
  const page = (limit: number, sort: string) => t.http.get(`/v2/cheeses?limit=${limit}&sort=${sort}&fields=name`, { headers: read });

  it('never holds more than its budget, however many distinct URLs are read', async () => {
    for (let limit = 1; limit <= 100; limit++) {
      expect((await page(limit, 'name')).status).toBe(200);
      expect(t.app.readCache.bytes).toBeLessThanOrEqual(BUDGET);
    }
    expect(t.app.readCache.bytes).toBeGreaterThan(BUDGET / 2);
  });

  it('evicts the least recently used entry first', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'LRU Brie', stockQuantityKg: 1 } })).body;
    const url = `/v2/cheeses/${cheese.id}`;
    expect((await t.http.get(url, { headers: read })).body.name).toBe('LRU Brie');
    // Changed behind the cache's back (as another instance would): only a fresh read shows it.
    await t.database.db.updateTable('cheeses').set({ name: 'LRU Renamed' }).where('id', '=', cheese.id).execute();
    for (let limit = 41; limit <= 100; limit++) {
      expect((await t.http.get(url, { headers: read })).body.name).toBe('LRU Brie'); // a hit, and recent again
      await page(limit, 'name');
    }
    for (let limit = 41; limit <= 100; limit++) await page(limit, '-name');
    expect((await t.http.get(url, { headers: read })).body.name).toBe('LRU Renamed'); // evicted meanwhile
  });
});

describe('query parameters are exact', () => {
  it('400 naming every unknown parameter, on operations with and without query parameters', async () => {
    const res = await t.http.get('/v2/cheeses?status[]=sold&contry=france', { headers: read });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'status[]', message: 'is not a known query parameter' },
      { field: 'contry', message: 'is not a known query parameter' },
    ]);
    expect((await t.http.get('/v2/store/inventory?verbose=1', { headers: read })).status).toBe(400);
  });

  it('400 when both spellings of one parameter are sent', async () => {
    for (const query of ['in_stock=true&inStock=false', 'in_stock=true&inStock=true', 'aged_weeks_min=4&agedWeeksMin=8']) {
      const res = await t.http.get(`/v2/cheeses?${query}`, { headers: read });
      expect(res.status, query).toBe(400);
      expect(res.body.message).toMatch(/same parameter/);
    }
    expect((await t.http.get('/v2/cheeses?in_stock=true', { headers: read })).status).toBe(200);
  });

  it('400 naming a single-valued parameter sent more than once; list parameters may repeat', async () => {
    for (const [query, field] of [['limit=5&limit=50', 'limit'], ['in_stock=true&in_stock=false', 'in_stock'], ['sort=name&sort=-name', 'sort']]) {
      const res = await t.http.get(`/v2/cheeses?${query}`, { headers: read });
      expect(res.status, query).toBe(400);
      expect(res.body).toMatchObject({ code: 400, type: 'invalid_request', errors: [{ field, message: 'is given more than once' }] });
    }
    expect((await t.http.get('/v2/cheeses?status=sold&status=available', { headers: read })).status).toBe(200);
    expect((await t.http.get('/v2/cheeses/findByTags?tags=pdo&tags=raw-milk', { headers: auth })).status).toBe(200);
  });

  it('every operation documents that 400 in the OpenAPI document, those without query parameters too', async () => {
    const paths = (await t.http.get('/v2/openapi.json')).body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    const undocumented = Object.entries(paths).flatMap(([path, operations]) => Object.entries(operations).filter(([, operation]) => !operation.responses['400']).map(([method]) => `${method} ${path}`));
    expect(undocumented).toEqual([]);
    expect(paths['/store/inventory']!.get!.responses['400']).toMatchObject({ description: 'Takes no query parameters: any is refused.' });
  });
});

describe('image work is bounded', () => {
  it('beyond the decoding slots and the queue, uploads get 503 with Retry-After and leave nothing behind', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Busy Gouda' } })).body;
    const png = await noisyPng(1600, 1200);
    const upload = () => uploadFile(cheese.id, png);
    const answers = await Promise.all(Array.from({ length: 8 }, upload));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    for (const busy of answers.filter((a) => a.status === 503)) {
      expect(busy.headers.get('retry-after')).toBe('2');
      expect(busy.body).toMatchObject({ code: 503, type: 'service_unavailable' });
    }
    const stored = await t.database.db.selectFrom('cheese_images').select('id').where('cheese_id', '=', cheese.id).execute();
    expect(stored).toHaveLength(statuses.filter((s) => s === 200).length);
    // An image and its thumbnail for each stored row, nothing for the refused ones.
    expect(fs.readdirSync(path.join(t.config.dataDir, 'images', 'cheeses', String(cheese.id)))).toHaveLength(2 * stored.length);
    // The slots are free again afterwards.
    expect((await upload()).status).toBe(200);
  });

  it('a client that goes away, while waiting or while its image is processed, gives its place back', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Fickle Feta' } })).body;
    const png = await noisyPng(1800, 1400);
    const upload = () => uploadFile(cheese.id, png);
    // One slot and one queue place here. Clients that send everything and leave mid-processing:
    // once their decoding ends, the next upload has the slot.
    for (let i = 0; i < 3; i++) {
      const client = rawUpload(cheese.id, png);
      await client.sent;
      await pause(100);
      client.leave();
      expect((await upload()).status).toBe(200);
    }
    // A stalled upload holds the slot; one waits in the queue and leaves; the queue place is free again.
    const holder = rawUpload(cheese.id, png.subarray(0, 1000));
    await pause(200);
    const leaver = rawUpload(cheese.id, png, { headersOnly: true });
    await pause(200);
    leaver.leave();
    await pause(200);
    const waiting = upload();
    await pause(200);
    holder.leave();
    expect((await waiting).status).toBe(200);
    expect((await upload()).status).toBe(200);
  });

  it('a client that leaves while its image is decoded keeps its slot until the decoding ends: the bound holds', async () => {
    const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Stubborn Stilton' } })).body;
    const big = await noisyPng(1800, 1400);
    const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c0a040' } }).png().toBuffer();
    const leaver = rawUpload(cheese.id, big);
    await leaver.sent;
    await pause(100);
    leaver.leave();
    const upload = () => uploadFile(cheese.id, small);
    // Its decoding (most of a second) still holds the one slot: one upload waits in the queue, two are turned away.
    const statuses = (await Promise.all([upload(), upload(), upload()])).map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 503, 503]);
  });
});

/** Noise does not compress: a PNG of several MB that takes most of a second to re-encode. */
const noisyPng = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();

function uploadFile(cheeseId: number, png: Buffer) {
  const data = new FormData();
  data.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'image.png');
  return t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: auth, body: data });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An upload over a raw socket, so the test decides when the client goes away. */
function rawUpload(cheeseId: number, file: Buffer, options: { headersOnly?: boolean } = {}) {
  const boundary = 'bounded-resources';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const socket = net.connect(portOf(t.http.baseUrl), '127.0.0.1');
  socket.on('error', () => undefined);
  const sent = new Promise<void>((resolve) =>
    socket.on('connect', () => {
      socket.write(`POST /v2/cheeses/${cheeseId}/uploadImage HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth.authorization}\r\n`);
      // A stalled upload announces more bytes than it sends.
      socket.write(`Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length + (file.length < 10_000 ? 1_000_000 : 0)}\r\n\r\n`);
      if (options.headersOnly) resolve();
      else socket.write(body, () => resolve());
    }),
  );
  return { sent, leave: () => socket.destroy() };
}
