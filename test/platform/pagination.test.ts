import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/kernel/errors.js';
import { CursorCodec, INVALID_CURSOR, paginate, rowId } from '../../src/kernel/pagination.js';
import { KeyRing } from '../../src/kernel/key-ring.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const cursorKeys = (appSecret: string) => new KeyRing({ appSecret }).keys('pagination-cursors');
const codec = new CursorCodec(cursorKeys(SECRET));
const pair = (decoded: unknown) => (Array.isArray(decoded) && decoded.length === 2 ? (decoded as [unknown, unknown]) : undefined);

/** The 400 a client gets, or the decoded position. */
function attempt<T>(run: () => T): T | { refused: string } {
  try {
    return run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).errors).toEqual([{ field: 'cursor', message: 'is invalid' }]);
    return { refused: (error as Error).message };
  }
}

function flip(text: string, index: number): string {
  return text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);
}

describe('CursorCodec', () => {
  it('round-trips any JSON position of its kind, with its binding', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (position, binding) => {
        const cursor = codec.encode('order', position as never, binding);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
        expect(codec.decode('order', cursor, (p) => ({ p }), { binding })).toEqual({ p: JSON.parse(JSON.stringify(position)) });
      }),
    );
    expect(codec.decode('order', codec.encode('order', 42), rowId)).toBe(42);
  });

  it('refuses every single-character change of the payload or the tag, and any cut or addition', () => {
    const cursor = codec.encode('cheese', ['brie', 7, 245], 'binding');
    for (let i = 0; i < cursor.length; i++) {
      if (cursor[i] === '.') continue;
      expect(attempt(() => codec.decode('cheese', flip(cursor, i), pair, { binding: 'binding' }))).toEqual({ refused: INVALID_CURSOR });
    }
    const dot = cursor.indexOf('.');
    for (const bad of [cursor.slice(0, dot), cursor.slice(dot), cursor.slice(0, -1), `${cursor}A`, `${cursor}.x`, `x${cursor}`, cursor.replace('.', '..')]) {
      expect(attempt(() => codec.decode('cheese', bad, pair, { binding: 'binding' }))).toEqual({ refused: INVALID_CURSOR });
    }
  });

  it("refuses another kind's cursor, another binding's, and another secret's", () => {
    const webhook = codec.encode('webhook', 5);
    expect(attempt(() => codec.decode('attempt', webhook, rowId))).toEqual({ refused: INVALID_CURSOR });
    expect(attempt(() => codec.decode('order', webhook, rowId))).toEqual({ refused: INVALID_CURSOR });
    expect(codec.decode('webhook', webhook, rowId)).toBe(5);
    const bound = codec.encode('cheese', ['brie', 7, 245], '["name","asc",{}]');
    expect(attempt(() => codec.decode('cheese', bound, pair, { binding: '["name","desc",{}]' }))).toEqual({ refused: INVALID_CURSOR });
    expect(attempt(() => codec.decode('cheese', bound, pair))).toEqual({ refused: INVALID_CURSOR });
    expect(attempt(() => new CursorCodec(cursorKeys(`${SECRET}!`)).decode('webhook', webhook, rowId))).toEqual({ refused: INVALID_CURSOR });
  });

  it('refuses garbage, the unsigned cursors of before, and a signed payload of the wrong shape, with the message asked for', () => {
    const unsigned = [Buffer.from('order:12').toString('base64url'), Buffer.from('webhook:3').toString('base64url'), 'bm9wZQ', 'bogus', '', '.', '..', 'not-a-cursor', '\u00e9.\u00e9', 'a'.repeat(1000)];
    for (const bad of unsigned) expect(attempt(() => codec.decode('order', bad, rowId))).toEqual({ refused: INVALID_CURSOR });
    for (const wrong of [0, -1, 1.5, '12', null, [12], 2 ** 53]) {
      expect(attempt(() => codec.decode('order', codec.encode('order', wrong), rowId))).toEqual({ refused: INVALID_CURSOR });
    }
    // A tag over a payload that is not JSON: signed by us, still refused.
    const notJson = Buffer.from('{').toString('base64url');
    const forged = `${notJson}.${codec.encode('order', 1).split('.')[1]}`;
    expect(attempt(() => codec.decode('order', forged, rowId, { message: 'start again' }))).toEqual({ refused: 'start again' });
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(attempt(() => codec.decode('order', text, rowId))).toEqual({ refused: INVALID_CURSOR });
      }),
    );
  });
});

describe('paginate', () => {
  const rows = Array.from({ length: 7 }, (_, i) => ({ id: i + 1 }));
  const fetchAfter = (afterId: number) => async (take: number) => rows.filter((row) => row.id > afterId).slice(0, take);

  it('asks for limit + 1 rows and keeps limit; the cursor is of the last row kept', async () => {
    const asked: number[] = [];
    const page = await paginate(3, async (take) => (asked.push(take), fetchAfter(0)(take)), (last) => codec.encode('order', last.id));
    expect(asked).toEqual([4]);
    expect(page.items.map((row) => row.id)).toEqual([1, 2, 3]);
    expect(page.hasMore).toBe(true);
    expect(codec.decode('order', page.nextCursor!, rowId)).toBe(3);
  });

  it('walks every row once; a page ending exactly at the last row has hasMore false and nextCursor null', async () => {
    for (const limit of [1, 2, 3, 6, 7, 8]) {
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const afterId: number = cursor === null ? 0 : codec.decode('order', cursor, rowId);
        const page = await paginate(limit, fetchAfter(afterId), (last) => codec.encode('order', last.id));
        expect(page.nextCursor === null).toBe(!page.hasMore);
        seen.push(...page.items.map((row) => row.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(seen).toEqual(rows.map((row) => row.id));
      expect(pages).toBe(Math.ceil(rows.length / limit));
    }
  });

  it('an empty list is one empty page', async () => {
    expect(await paginate(5, async () => [], () => 'never')).toEqual({ items: [], hasMore: false, nextCursor: null });
  });
});
