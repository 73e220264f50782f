import { describe, expect, it } from 'vitest';
import { ClosedHours, HOUR_MS, SETTLE_MS } from '../../src/kernel/closed-hours.js';

/** The overview's hourly summaries: a closed hour is read once, the open one every time (kernel/closed-hours.ts). */
describe('ClosedHours', () => {
  const from = Date.parse('2026-11-29T00:00:00.000Z');

  it('reads every hour the first time, then only the open hour and any hour that closed since', async () => {
    const hours = new ClosedHours<number>();
    const reads: [number, number][] = [];
    const read = async (a: number, b: number) => {
      reads.push([(a - from) / HOUR_MS, (b - from) / HOUR_MS]);
      const found = new Map<number, number>();
      for (let h = a; h < b; h += HOUR_MS) found.set(h, (h - from) / HOUR_MS + 1);
      return found;
    };
    const at = (h: number) => from + h * HOUR_MS;
    expect([...(await hours.hours('a', from, at(3.5), read, () => 0)).values()]).toEqual([1, 2, 3, 4]);
    expect(reads).toEqual([[0, 3.5]]);
    // Later in the same hour: only the open hour is read again.
    await hours.hours('a', from, at(3.9), read, () => 0);
    expect(reads.at(-1)).toEqual([3, 3.9]);
    // Within a minute of the hour's end it is still read (late entries); after it, kept.
    await hours.hours('a', from, at(4) + SETTLE_MS / 2, read, () => 0);
    expect(reads.at(-1)![0]).toBe(3);
    // Closed now, but never read closed: read once more, then kept.
    await hours.hours('a', from, at(4) + SETTLE_MS, read, () => 0);
    expect(reads.at(-1)![0]).toBe(3);
    await hours.hours('a', from, at(4) + 2 * SETTLE_MS, read, () => 0);
    expect(reads.at(-1)![0]).toBe(4);
    // Another scope is read on its own.
    await hours.hours('b', from, at(3.5), read, () => 0);
    expect(reads.at(-1)).toEqual([0, 3.5]);
  });

  it('answers an empty hour with the empty value, and keeps it too', async () => {
    const hours = new ClosedHours<string[]>();
    let calls = 0;
    const read = async () => {
      calls++;
      return new Map<number, string[]>();
    };
    const answer = await hours.hours('a', from, from + 2 * HOUR_MS + SETTLE_MS, read, () => []);
    expect([...answer.values()]).toEqual([[], [], []]);
    await hours.hours('a', from, from + 2 * HOUR_MS + SETTLE_MS, read, () => []);
    expect(calls).toBe(2);
  });
});
