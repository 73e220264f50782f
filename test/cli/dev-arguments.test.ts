import { describe, expect, it } from 'vitest';
import { durationMs, forwardTarget } from '../../src/cli/dev/forward.js';
import { interpolate, loadFixtures } from '../../src/cli/dev/fixtures.js';
import { EVENT_TYPES } from '../../src/modules/outbox/outbox-envelope.module.js';

describe('the developer CLI: arguments and fixtures', () => {
  it('--forward-to takes a URL, a port (127.0.0.1) or a path (port 3000)', () => {
    expect(forwardTarget('4242').href).toBe('http://127.0.0.1:4242/');
    expect(forwardTarget('/webhooks').href).toBe('http://127.0.0.1:3000/webhooks');
    expect(forwardTarget('localhost:8000/hooks').href).toBe('http://localhost:8000/hooks');
    expect(forwardTarget('https://example.test/x').href).toBe('https://example.test/x');
    for (const bad of [undefined, 'ftp://x/', '99999', '0', 'http://']) expect(() => forwardTarget(bad), String(bad)).toThrow();
  });

  it('--timeout takes 10s, 500ms, 2m or seconds', () => {
    expect([durationMs('10s', 1, 't'), durationMs('500ms', 1, 't'), durationMs('2m', 1, 't'), durationMs('3', 1, 't'), durationMs(undefined, 7, 't')]).toEqual([10_000, 500, 120_000, 3000, 7]);
    for (const bad of ['0s', 'soon', '-1s']) expect(() => durationMs(bad, 1, 't'), bad).toThrow();
  });

  it('a fixture cites earlier answers, keeping a whole citation\'s type', () => {
    const answers = { order: { id: 12, items: [{ cheeseId: 'comte' }] }, random: 'ab12' };
    expect(interpolate({ path: '/orders/${order.id}/advance', id: '${order.id}', cheese: '${order.items[0].cheeseId}', name: 't.${random}' }, answers)).toEqual({
      path: '/orders/12/advance',
      id: 12,
      cheese: 'comte',
      name: 't.ab12',
    });
    expect(() => interpolate('${order.missing}', answers)).toThrow(/order.missing/);
  });

  it('has a fixture for every event kind, steps for each an API call causes', () => {
    const fixtures = loadFixtures();
    expect(fixtures.map((f) => f.kind).sort()).toEqual([...EVENT_TYPES].sort());
    for (const fixture of fixtures) {
      if (fixture.onlyBy) expect(fixture.steps, fixture.kind).toEqual([]);
      else expect(fixture.steps.some((step) => step.object), fixture.kind).toBe(true);
    }
    expect(fixtures.filter((f) => f.onlyBy).map((f) => f.kind)).toEqual(['api_key.expiring']);
  });
});
