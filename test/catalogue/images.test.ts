import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

let t: TestApp;
let admin: string;
let cheeseId: number;

async function image(format: 'jpeg' | 'png' | 'webp' | 'gif', width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 180, b: 60 } } }).toFormat(format).toBuffer();
}

/** A PNG whose header claims the given size, followed by a little compressed data. */
function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.alloc(100_000))), chunk('IEND', Buffer.alloc(0))]);
}

function form(file: Buffer | null, fields: Record<string, string> = {}, filename = 'photo.jpg', type = 'image/jpeg'): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (file) data.append('file', new Blob([new Uint8Array(file)], { type }), filename);
  return data;
}

async function imageRows(): Promise<number> {
  return (await t.database.db.selectFrom('cheese_images').select('id').execute()).length;
}

beforeAll(async () => {
  t = await createTestApp();
  admin = await t.key(['admin']);
  const created = await t.http.post('/v2/cheeses', { headers: bearer(admin), json: { name: 'Ossau-Iraty' } });
  cheeseId = created.body.id;
});
afterAll(() => t.close());

describe('POST /cheeses/{id}/uploadImage', () => {
  it.each(['jpeg', 'png', 'webp'] as const)('stores a %s, serves it back with its type and a WebP thumbnail', async (format) => {
    const res = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(await image(format), { caption: 'A wheel' }) });
    expect(res.status).toBe(200);
    expect(res.body.contentType).toBe(`image/${format}`);
    expect(res.body).toMatchObject({ width: 64, height: 48, caption: 'A wheel', isPrimary: false });
    expect(res.body.size).toBeGreaterThan(0);
    expect(res.body.imageUrl).toBe(`http://localhost:8080/v2/cheeses/${cheeseId}/images/${res.body.id}`);
    expect(res.body.thumbnailUrl).toBe(`${res.body.imageUrl}/thumbnail`);

    const path = new URL(res.body.imageUrl).pathname;
    const original = await fetch(`${t.http.baseUrl}${path}`);
    expect(original.status).toBe(200);
    expect(original.headers.get('content-type')).toBe(`image/${format}`);
    const bytes = Buffer.from(await original.arrayBuffer());
    expect(bytes.length).toBe(res.body.size);
    expect((await sharp(bytes).metadata()).format).toBe(format);

    const thumb = await fetch(`${t.http.baseUrl}${path}/thumbnail`);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).format).toBe('webp');
  });

  it('lists uploaded images in photoUrls, the primary one first, and accepts the slug', async () => {
    const res = await t.http.post('/v2/cheeses/ossau-iraty/uploadImage', { headers: bearer(admin), body: form(await image('png'), { isPrimary: 'true' }) });
    expect(res.status).toBe(200);
    expect(res.body.isPrimary).toBe(true);
    const cheese = await t.http.get(`/v2/cheeses/${cheeseId}`, { headers: bearer(admin) });
    expect(cheese.body.photoUrls[0]).toBe(res.body.imageUrl);
    expect(cheese.body.photoUrls).toHaveLength(4);
  });

  it('judges the type by the bytes: a GIF or text declared as image/jpeg is 415 and stores nothing', async () => {
    const before = await imageRows();
    for (const body of [form(await image('gif'), {}, 'x.jpg', 'image/jpeg'), form(Buffer.from('not an image at all'), {}, 'x.png', 'image/png')]) {
      const res = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 415, type: 'unsupported_media_type' });
    }
    expect(await imageRows()).toBe(before);
  });

  it('refuses a file over 10 MB with 413 and stores nothing', async () => {
    const before = await imageRows();
    const big = Buffer.concat([await image('jpeg'), Buffer.alloc(10 * 1024 * 1024 + 10, 1)]);
    const res = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(big) });
    expect(res.status).toBe(413);
    expect(res.body.type).toBe('payload_too_large');
    expect(await imageRows()).toBe(before);
  });

  it('refuses a decompression bomb (small file, huge dimensions) with 413', async () => {
    const bomb = pngClaiming(50_000, 50_000); // 2.5 gigapixels announced in a few hundred bytes
    expect(bomb.length).toBeLessThan(1024);
    const res = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(bomb, {}, 'bomb.png', 'image/png') });
    expect(res.status).toBe(413);
    expect(res.body.message).toMatch(/pixels/);
  });

  it('answers 422 without a file, 415 for a JSON body, 404 for an unknown cheese, 403 without write scope', async () => {
    expect((await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(null, { caption: 'x' }) })).status).toBe(422);
    expect((await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), json: { file: 'x' } })).status).toBe(415);
    expect((await t.http.post('/v2/cheeses/999999/uploadImage', { headers: bearer(admin), body: form(await image('jpeg')) })).status).toBe(404);
    const reader = await t.key(['read:cheeses']);
    expect((await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(reader), body: form(await image('jpeg')) })).status).toBe(403);
  });

  it('strips metadata such as EXIF from the stored image', async () => {
    const withExif = await sharp(await image('jpeg')).withMetadata({ exif: { IFD0: { Copyright: 'secret-gps-owner' } } }).jpeg().toBuffer();
    expect((await sharp(withExif).metadata()).exif).toBeDefined();
    const res = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(withExif) });
    const stored = Buffer.from(await (await fetch(`${t.http.baseUrl}${new URL(res.body.imageUrl).pathname}`)).arrayBuffer());
    expect((await sharp(stored).metadata()).exif).toBeUndefined();
  });

  it('turns an image its EXIF says is rotated, and stores it upright without the tag; an upright one as it is', async () => {
    const sideways = await sharp(await image('jpeg', 64, 48)).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const turned = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(sideways) });
    expect(turned.status).toBe(200);
    expect([turned.body.width, turned.body.height]).toEqual([48, 64]);
    const stored = await sharp(Buffer.from(await (await fetch(`${t.http.baseUrl}${new URL(turned.body.imageUrl).pathname}`)).arrayBuffer())).metadata();
    expect([stored.width, stored.height, stored.orientation]).toEqual([48, 64, undefined]);
    const upright = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(await image('jpeg', 64, 48)) });
    expect([upright.body.width, upright.body.height]).toEqual([64, 48]);
  });

  it('404 for an unknown image, and deleting the cheese removes its images', async () => {
    expect((await t.http.get(`/v2/cheeses/${cheeseId}/images/99999`)).status).toBe(404);
    const up = await t.http.post(`/v2/cheeses/${cheeseId}/uploadImage`, { headers: bearer(admin), body: form(await image('jpeg')) });
    const path = new URL(up.body.imageUrl).pathname;
    expect((await t.http.delete(`/v2/cheeses/${cheeseId}`, { headers: { ...bearer(admin), 'x-confirm-delete': 'true' } })).status).toBe(204);
    expect((await t.http.get(path)).status).toBe(404);
    expect(await imageRows()).toBe(0);
  });
});
