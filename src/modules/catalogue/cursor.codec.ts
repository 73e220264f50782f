import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '../../kernel/errors.js';
import type { KeysetPosition } from './cheese.repository.js';

/**
 * Opaque keyset cursors: base64url(JSON of the last sort key, its id and the walk's total)
 * plus an HMAC that also binds the query (sort, direction, filters), so an edited cursor, or
 * one reused with other filters, is a 400 instead of a silently wrong page. Carrying the
 * total means only a walk's first page counts the catalogue.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(position: KeysetPosition, total: number, queryBinding: string): string {
    const payload = Buffer.from(JSON.stringify([position.value, position.id, total])).toString('base64url');
    return `${payload}.${this.#sign(payload, queryBinding)}`;
  }

  decode(cursor: string, queryBinding: string): { position: KeysetPosition; total: number } {
    const invalid = () => new InvalidRequestError('cursor is invalid: pass nextCursor from the previous page unchanged, with the same filters and sort.', [{ field: 'cursor', message: 'is invalid' }]);
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw invalid();
    const expected = Buffer.from(this.#sign(payload, queryBinding));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(decoded) || decoded.length !== 3) throw invalid();
    const [value, id, total] = decoded as unknown[];
    if ((typeof value !== 'string' && typeof value !== 'number') || !Number.isSafeInteger(id) || !Number.isSafeInteger(total)) throw invalid();
    return { position: { value, id: id as number }, total: total as number };
  }

  #sign(payload: string, binding: string): string {
    return createHmac('sha256', this.secret).update(`cursor\n${binding}\n${payload}`).digest('base64url').slice(0, 22);
  }
}
