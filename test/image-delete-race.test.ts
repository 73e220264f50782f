import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminTestApp, type TestApp } from './helpers/app.js';

/** An upload whose cheese is deleted while its image is being processed: 404, never a 500, and no files left. */
let t: TestApp;
let auth: Record<string, string>;
beforeAll(async () => {
  ({ t, auth } = await createAdminTestApp());
});
afterAll(() => t.close());

describe('image upload racing the deletion of its cheese', () => {
  it('answers 404 (or 200 when the upload won), never 500', async () => {
    const png = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 60 } } }).png().toBuffer();
    const outcomes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const cheese = (await t.http.post('/v2/cheeses', { headers: auth, json: { name: `Racing Brie ${round}` } })).body;
      const data = new FormData();
      data.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'big.png');
      const upload = t.http.post(`/v2/cheeses/${cheese.id}/uploadImage`, { headers: auth, body: data });
      // Straight to the database, as another instance would, while the image is being decoded.
      await new Promise((resolve) => setTimeout(resolve, 40 * (round + 1)));
      await t.database.db.deleteFrom('cheeses').where('id', '=', cheese.id).execute();
      const res = await upload;
      outcomes.push(res.status);
      expect([200, 404]).toContain(res.status);
      if (res.status === 404) expect(res.body).toMatchObject({ code: 404, type: 'not_found' });
    }
    expect(await t.database.db.selectFrom('cheese_images').select('id').execute()).toHaveLength(0);
  });
});
