import { createHmac } from 'node:crypto';
import { InvalidRequestError, ValidationFailedError } from './errors.js';
import { matchesAny, type Keys } from './key-ring.js';

/** What a cursor may carry: plain JSON (a position, and whatever else a list needs back). */
export type CursorPosition = string | number | boolean | null | readonly CursorPosition[] | { readonly [key: string]: CursorPosition };

/** What a client is told about a cursor this service did not give out for this list. */
export const INVALID_CURSOR = 'The cursor is not one this API gave out: start again without it.';

/**
 * Opaque keyset cursors for every list: `base64url(JSON position).tag`, where the tag is an
 * HMAC-SHA256 (128 bits kept) under the key ring's 'pagination-cursors' key, over the list's `kind`,
 * the `binding` (what else the cursor is valid only with, such as a query's sort and
 * filters) and the payload. An edited cursor, one of another list, or one reused with
 * another binding is a 400 (InvalidRequestError on `cursor`), never a silently wrong page.
 * Verification compares tags in constant time. Cursors are made under the current key and
 * accepted under the previous one too while APP_SECRET is being rotated.
 */
export class CursorCodec {
  constructor(private readonly keys: Keys) {}

  encode(kind: string, position: CursorPosition, binding = ''): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${tagOf(this.keys.current, kind, binding, payload)}`;
  }

  /**
   * The position `read` makes of a verified payload; `read` answers undefined for a shape it
   * does not accept. Every failure is the same 400, with `message` or INVALID_CURSOR.
   */
  decode<T>(kind: string, cursor: string, read: (position: unknown) => T | undefined, options: { binding?: string; message?: string } = {}): T {
    const invalid = () => new InvalidRequestError(options.message ?? INVALID_CURSOR, [{ field: 'cursor', message: 'is invalid' }]);
    const [payload, tag, extra] = cursor.split('.');
    if (!payload || !tag || extra !== undefined) throw invalid();
    // Compared as the strings given out: base64url decoding would ignore a tail bit or a stray character.
    if (!matchesAny(tag, this.keys.all.map((key) => tagOf(key, kind, options.binding ?? '', payload)))) throw invalid();
    let position: unknown;
    try {
      position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    const value = read(position);
    if (value === undefined) throw invalid();
    return value;
  }
}

function tagOf(key: Buffer, kind: string, binding: string, payload: string): string {
  return createHmac('sha256', key).update(JSON.stringify([kind, binding, payload])).digest().subarray(0, 16).toString('base64url');
}

/** A reader for cursors that carry a row id alone. */
export function rowId(position: unknown): number | undefined {
  return typeof position === 'number' && Number.isSafeInteger(position) && position > 0 ? position : undefined;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Null exactly when hasMore is false. */
  nextCursor: string | null;
}

/**
 * One page of a keyset walk: asks `fetch` for limit + 1 rows, keeps `limit`, and when the
 * extra row came back, answers hasMore with the cursor `cursorAfter` makes of the last row kept.
 */
export async function paginate<T>(limit: number, fetch: (take: number) => Promise<readonly T[]>, cursorAfter: (last: T) => string | Promise<string>): Promise<Page<T>> {
  const rows = await fetch(limit + 1);
  const hasMore = rows.length > limit;
  const items = rows.slice(0, limit);
  return { items, hasMore, nextCursor: hasMore ? await cursorAfter(items.at(-1)!) : null };
}

/** Where a page of a newest-first list is: after the `next` cursor of one page, or before the `previous` cursor of another. */
export interface PagePosition {
  next?: string | undefined;
  previous?: string | undefined;
}

/** A page of a newest-first list that can be walked both ways (the dashboard's Older and Newer links). */
export interface TwoWayPage<T> extends Page<T> {
  /** Null on the newest page. */
  previousCursor: string | null;
}

/** One side of a keyset walk over ids, newest first: `older` than an id (the next page) or `newer` (the previous one). */
export type IdBound = { older: number } | { newer: number } | null;

/** The cursor kinds of one two-way list: each is refused where the other is expected, and by every other list. */
export interface TwoWayKinds {
  older: string;
  newer: string;
}

/** The bound a page position asks for; a cursor that is not one of ours is a 400 (before anything is looked up). */
export function twoWayBound(cursors: CursorCodec, position: PagePosition, kinds: TwoWayKinds): IdBound {
  if (position.next !== undefined && position.previous !== undefined) throw ValidationFailedError.field('cursor', 'give either the next or the previous cursor, not both');
  if (position.next !== undefined) return { older: cursors.decode(kinds.older, position.next, rowId) };
  if (position.previous !== undefined) return { newer: cursors.decode(kinds.newer, position.previous, rowId) };
  return null;
}

/**
 * A keyset page either way: one extra row says whether there is more in the direction walked;
 * the other side is known from where we came. `fetch` returns rows newest first, except when
 * walking back (`newer`), where the extra row is the newest, at the start.
 */
export async function twoWayPage<T>(cursors: CursorCodec, bound: IdBound, limit: number, fetch: (take: number) => Promise<T[]>, kinds: TwoWayKinds, idOf: (row: T) => number): Promise<TwoWayPage<T>> {
  const rows = await fetch(limit + 1);
  const backwards = bound !== null && 'newer' in bound;
  const more = rows.length > limit;
  const items = backwards ? rows.slice(rows.length - Math.min(rows.length, limit)) : rows.slice(0, limit);
  const olderExists = backwards ? true : more;
  const newerExists = backwards ? more : bound !== null;
  return {
    items,
    hasMore: olderExists && items.length > 0,
    nextCursor: olderExists && items.length > 0 ? cursors.encode(kinds.older, idOf(items.at(-1)!)) : null,
    previousCursor: newerExists && items.length > 0 ? cursors.encode(kinds.newer, idOf(items[0]!)) : null,
  };
}
