import { describe, expect, it } from 'vitest';
import { requestIdsFrom, uuidV7 } from '../../src/http/request-id.js';
import { ManualClock } from '../../src/kernel/clock.js';
import type { IncomingMessage } from 'node:http';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const request = (headers: Record<string, string> = {}) => ({ headers }) as unknown as IncomingMessage;

describe('request ids', () => {
  it('are UUIDv7 carrying the clock\'s milliseconds, so later ids sort later', () => {
    const clock = new ManualClock('2026-11-29T04:30:00.000Z');
    const idFor = requestIdsFrom(clock);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(idFor(request()));
      clock.advance(1);
    }
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect([...ids].sort()).toEqual(ids);
    expect(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse('2026-11-29T04:30:00.000Z'));
  });

  it('differ within one millisecond (74 random bits)', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => uuidV7(1_800_000_000_000)));
    expect(ids.size).toBe(2000);
  });

  it('keep a safe X-Request-Id from the caller and replace an unsafe one', () => {
    const idFor = requestIdsFrom(new ManualClock(0));
    expect(idFor(request({ 'x-request-id': 'pos-42:till.3' }))).toBe('pos-42:till.3');
    expect(idFor(request({ 'x-request-id': 'bad id\n' }))).toMatch(UUID_V7);
  });
});
