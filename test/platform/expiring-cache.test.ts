import { describe, expect, it, vi } from 'vitest';
import { ResponseCache } from '../../src/http/read-cache.js';
import { ExpiringCache } from '../../src/kernel/expiring-cache.js';
import { MemoryBucketStore } from '../../src/modules/limits/bucket.store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ExpiringCache (the credential resolvers and the plan cache)', () => {
  it('serves an entry until its ttl, counted from when it was stored: hits do not extend it', async () => {
    const cache = new ExpiringCache<string, number>({ ttlMs: 80, max: 10 });
    cache.set('a', 1);
    await sleep(50);
    expect(cache.get('a')).toBe(1);
    await sleep(50);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps nothing with a ttl of 0', () => {
    const cache = new ExpiringCache<string, number>({ ttlMs: 0, max: 10 });
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.forgetWhere(() => true);
  });

  it('holds at most `max` entries, the least recently used going first', () => {
    const cache = new ExpiringCache<number, string>({ ttlMs: 60_000, max: 3 });
    for (const key of [1, 2, 3]) cache.set(key, `v${key}`);
    expect(cache.get(1)).toBe('v1');
    cache.set(4, 'v4');
    expect(cache.size).toBe(3);
    expect(cache.get(2)).toBeUndefined();
    expect([1, 3, 4].map((key) => cache.get(key))).toEqual(['v1', 'v3', 'v4']);
  });

  it('forgets what it is told to, and only that', () => {
    const cache = new ExpiringCache<string, { accountId: number }>({ ttlMs: 60_000, max: 100 });
    for (let i = 0; i < 20; i++) cache.set(`token-${i}`, { accountId: i % 3 });
    cache.forgetWhere((entry) => entry.accountId === 1);
    expect(cache.size).toBe(13);
    for (let i = 0; i < 20; i++) expect(cache.get(`token-${i}`) === undefined).toBe(i % 3 === 1);
    cache.delete('token-0');
    expect(cache.get('token-0')).toBeUndefined();
  });

  it('arms no timer however busy it is (expiry is lazy)', () => {
    const setTimeout = vi.spyOn(globalThis, 'setTimeout');
    try {
      const cache = new ExpiringCache<number, number>({ ttlMs: 5000, max: 100 });
      for (let i = 0; i < 1000; i++) {
        cache.set(i % 150, i);
        cache.get((i * 7) % 150);
      }
      cache.forgetWhere((value) => value % 2 === 0);
      expect(setTimeout).not.toHaveBeenCalled();
    } finally {
      setTimeout.mockRestore();
    }
  });
});

describe('ResponseCache (the read cache)', () => {
  const entry = (bytes: number) => ({ payload: Buffer.alloc(bytes), headers: { etag: '"x"' }, storedAt: Date.now() });

  it('counts bytes, stays within its budget and refuses an entry over an eighth of it', () => {
    const cache = new ResponseCache(60_000, 16_384);
    cache.set('big', entry(2048));
    expect(cache.get('big', Date.now())).toBeUndefined();
    for (let i = 0; i < 100; i++) cache.set(`page-${i}`, entry(1000));
    expect(cache.bytes).toBeLessThanOrEqual(16_384);
    expect(cache.bytes).toBeGreaterThan(16_384 - 1400);
    expect(cache.get('page-99', Date.now())?.payload.length).toBe(1000);
    expect(cache.get('page-0', Date.now())).toBeUndefined();
  });

  it('expires entries after its ttl, and invalidate empties it and moves the version on', async () => {
    const cache = new ResponseCache(60, 1_000_000);
    cache.set('a', entry(10));
    const version = cache.version;
    expect(cache.get('a', Date.now())).toBeDefined();
    await sleep(90);
    expect(cache.get('a', Date.now())).toBeUndefined();
    cache.set('b', entry(10));
    cache.invalidate();
    expect(cache.get('b', Date.now())).toBeUndefined();
    expect(cache.bytes).toBe(0);
    expect(cache.version).toBe(version + 1);
  });

  it('is built even when off (0 bytes or 0 ms), and then keeps nothing', () => {
    const off = new ResponseCache(2000, 0);
    off.set('a', entry(1));
    expect(off.get('a', Date.now())).toBeUndefined();
    expect(() => new ResponseCache(0, 1024)).not.toThrow();
  });
});

describe('MemoryBucketStore', () => {
  it('holds at most maxEntries buckets; one dropped comes back full', () => {
    const spec = { name: 'b', capacity: 2, refillPerSecond: 0.001, quota: 2, windowSeconds: 3600 };
    const store = new MemoryBucketStore(2);
    expect(store.take(['a'], [spec]).tokens).toEqual([1]);
    store.take(['b'], [spec]);
    store.take(['a'], [spec]);
    store.take(['c'], [spec]); // b, the least recently used, goes
    expect(store.take(['a'], [spec]).allowed).toBe(false);
    expect(store.take(['b'], [spec]).tokens).toEqual([1]);
  });
});
