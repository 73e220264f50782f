import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';

/**
 * An upload whose cheese is deleted while its image is being processed: 404 (or 200 when the
 * upload committed first), never a 500; and the files on disk are exactly those of the images
 * listed in the database: none left behind by the losing upload, none missing for a listed one.
 */
let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  ({ t, auth } = await createAdminTestApp());
});
afterAll(() => t.close());

/** Every file under the image directory, as storage keys (`cheeses/12/….png`); temporary files included. */
async function filesOnDisk(): Promise<string[]> {
  const root = path.join(t.config.dataDir, 'images');
  let entries;
  try {
    entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The files the database lists: each image's original and thumbnail. */
async function filesListed(): Promise<string[]> {
  const rows = await t.database.db.selectFrom('cheese_images').select(['storage_key', 'thumbnail_key']).execute();
  return rows.flatMap((row) => [row.storage_key, row.thumbnail_key]).sort();
}

function form(png: Buffer): FormData {
  const data = new FormData();
  data.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'big.png');
  return data;
}

describe('image upload racing the deletion of its cheese', () => {
  it('answers 404 (or 200 when the upload won), never 500, and leaves no file without its image nor an image without its files', async () => {
    const png = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    // A cheese that stays, with its image: its two files must still be there at the end.
    const kept = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: 'Kept Brie' } })).body;
    const keptUpload = await t.http.post(`/v2/cheeses/${kept.id}/uploadImage`, { headers: auth, body: form(png) });
    expect(keptUpload.status).toBe(200);

    const outcomes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: `Racing Brie ${round}` } })).body;
      const upload = t.http.post(`/v2/cheeses/${cheese.id}/uploadImage`, { headers: auth, body: form(png) });
      // Deleted through the API, as another instance would, while the image is being decoded:
      // the rows go, then the files of the images the delete saw.
      await new Promise((resolve) => setTimeout(resolve, 40 * (round + 1)));
      const deleted = await t.http.delete(`/v2/cheeses/${cheese.id}`, { headers: { ...auth, 'x-confirm-delete': 'true' } });
      expect(deleted.status).toBe(204);
      const res = await upload;
      outcomes.push(res.status);
      if (res.status === 404) expect(res.body).toMatchObject({ code: 404, type: 'not_found' });
      else expect(res.body).toMatchObject({ id: expect.any(Number), imageUrl: expect.stringContaining(`/cheeses/${cheese.id}/images/`) });
      // Whoever won, nothing of that cheese is left: no row, no file.
      expect(await t.database.db.selectFrom('cheese_images').select('id').where('cheese_id', '=', cheese.id).execute()).toEqual([]);
      expect((await filesOnDisk()).filter((file) => file.startsWith(`cheeses/${cheese.id}/`))).toEqual([]);
    }
    for (const status of outcomes) expect([200, 404]).toContain(status);
    // The race was run: at least one upload lost to its deletion (a 1600 × 1200 PNG takes far longer than 40 ms).
    expect(outcomes).toContain(404);

    const listed = await filesListed();
    expect(listed).toHaveLength(2);
    expect(listed.every((file) => file.startsWith(`cheeses/${kept.id}/`))).toBe(true);
    expect(await filesOnDisk()).toEqual(listed);
  });
});
