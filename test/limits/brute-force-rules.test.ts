import { describe, expect, it } from 'vitest';
import { takeAll, type BucketSpec } from '../../src/modules/limits/bucket.rules.js';
import { MemoryBucketStore } from '../../src/modules/limits/bucket.store.js';
import { attemptBuckets, guessesPerHourBound, isKnown, KNOWN_FOR_MS, KNOWN_PER_NAME, knownKey } from '../../src/modules/limits/brute-force.rules.js';

const spec: BucketSpec = { name: 'b', capacity: 3, refillPerSecond: 1, quota: 3, windowSeconds: 3 };

describe('takeAll with a cost', () => {
  it('gives a token back (cost -1) however empty, never past capacity', () => {
    const now = 1_000_000;
    expect(takeAll([{ tokens: 0.5, at: now }, { tokens: 3, at: now }], [spec, spec], now, -1)).toEqual({ allowed: true, tokens: [1.5, 3] });
    expect(takeAll([{ tokens: 0.5, at: now }], [spec], now)).toEqual({ allowed: false, tokens: [0.5] });
    expect(takeAll([undefined], [spec], now)).toEqual({ allowed: true, tokens: [2] });
  });
});

describe('the buckets of a login attempt', () => {
  const names = (known: boolean, name: string | undefined = 'Marie', kind: 'login' | 'signup' | 'token' = 'login') => {
    const { keys, specs } = attemptBuckets(kind, '10.0.0.1', name, known, 1);
    return { keys, specs: specs.map((s) => [s.name, s.capacity, Math.round(s.refillPerSecond * 3600)]) };
  };

  it('a stranger draws from its address, its address with that name, and the name', () => {
    expect(names(false)).toEqual({
      keys: ['login:ip:10.0.0.1', 'login:pair:10.0.0.1 marie', 'login:name:marie'],
      specs: [['login-per-address', 30, 120], ['login-per-address-and-username', 5, 12], ['login-per-username', 10, 20]],
    });
  });

  it('a known address skips the name\'s bucket only', () => {
    expect(names(true).keys).toEqual(['login:ip:10.0.0.1', 'login:pair:10.0.0.1 marie']);
  });

  it('sign-ups count per address; the token endpoint per address and per client', () => {
    expect(names(false, undefined, 'signup')).toEqual({ keys: ['signup:ip:10.0.0.1'], specs: [['signup-per-address', 10, 30]] });
    expect(names(false, 'cl_ABC', 'token').keys).toEqual(['token:ip:10.0.0.1', 'token:name:cl_abc']);
    expect(names(true, 'cl_ABC', 'token').keys).toEqual(['token:ip:10.0.0.1']);
  });

  it('sandbox multiplies the figures', () => {
    expect(attemptBuckets('login', '::1', 'x', false, 10).specs.map((s) => s.capacity)).toEqual([300, 50, 100]);
  });

  it('bounds the guesses an hour against one name: strangers together, plus each known address', () => {
    expect(guessesPerHourBound('login')).toBe(20 + KNOWN_PER_NAME * 12);
    expect(guessesPerHourBound('token')).toBe(1200 + KNOWN_PER_NAME * 1200);
  });
});

describe('known addresses', () => {
  it('are known for 30 days after a success', () => {
    expect(isKnown(undefined, 0)).toBe(false);
    expect(isKnown(0, KNOWN_FOR_MS)).toBe(true);
    expect(isKnown(0, KNOWN_FOR_MS + 1)).toBe(false);
  });

  it('a name keeps its most recent ten; the key ignores case', () => {
    const store = new MemoryBucketStore();
    const key = knownKey('login', 'Marie');
    expect(key).toBe(knownKey('login', 'marie'));
    for (let i = 0; i <= KNOWN_PER_NAME; i++) store.remember(key, `10.0.0.${i}`);
    expect(store.knows(key, '10.0.0.0')).toBe(false);
    expect(store.knows(key, '10.0.0.1')).toBe(true);
    expect(store.knows(key, `10.0.0.${KNOWN_PER_NAME}`)).toBe(true);
    expect(store.knows(knownKey('token', 'marie'), '10.0.0.1')).toBe(false);
  });
});
