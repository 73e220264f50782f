import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holdsStock, kilogramsToGrams, nextStep, orderTotals, transition, TRANSITIONS, triggerFor, triggersTo, type OrderTrigger } from '../../src/modules/orders/order.rules.js';
import { ORDER_STATUSES, type OrderStatus } from '../../src/modules/orders/order.table.js';
import { recommend } from '../../src/modules/orders/recommendation.rules.js';

const TRIGGERS = Object.keys(TRANSITIONS) as OrderTrigger[];

describe('the order state machine', () => {
  it('no sequence of triggers reaches an illegal state or loses stock: available + held + shipped is conserved', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.array(fc.constantFrom(...TRIGGERS), { maxLength: 30 }), (grams, triggers) => {
        const initial = 200_000;
        // Placement took `grams` out of the available stock and holds it.
        let status: OrderStatus = 'placed';
        let available = initial - grams;
        let shipped = 0;
        const seen: OrderStatus[] = [status];
        for (const trigger of triggers) {
          const verdict = transition(status, trigger);
          if ('refused' in verdict) {
            expect(verdict.refused).toContain(status);
            continue;
          }
          if (trigger === 'cancel') available += grams;
          if (trigger === 'ship') shipped += grams;
          status = verdict.to;
          seen.push(status);
          const held = holdsStock(status) ? grams : 0;
          expect(available + held + shipped).toBe(initial);
        }
        // Statuses only ever move forward, and nothing follows delivered or cancelled.
        const order = ['placed', 'approved', 'shipped', 'delivered'];
        const forward = seen.filter((s) => s !== 'cancelled').map((s) => order.indexOf(s));
        expect(forward).toEqual([...forward].sort((a, b) => a - b));
        expect(seen.indexOf('cancelled') === -1 || seen.indexOf('cancelled') === seen.length - 1).toBe(true);
        expect(ORDER_STATUSES).toContain(status);
      }),
    );
  });

  it('the worker\'s next step and staff targets go through the same table', () => {
    for (const status of ORDER_STATUSES) {
      const step = nextStep(status);
      if (step) expect('to' in transition(status, step)).toBe(true);
    }
    expect(triggerFor('approved')).toBe('capture');
    expect(triggerFor('placed')).toBeNull();
    expect(transition('shipped', 'cancel')).toEqual({ refused: expect.stringContaining('shipped') });
  });

  it('the way from placed to each status is the table\'s steps, each allowed in turn', () => {
    expect(triggersTo('placed')).toEqual([]);
    expect(triggersTo('approved')).toEqual(['capture']);
    expect(triggersTo('delivered')).toEqual(['capture', 'ship', 'deliver']);
    expect(triggersTo('cancelled')).toEqual(['cancel']);
    for (const target of ORDER_STATUSES) {
      let status: OrderStatus = 'placed';
      for (const trigger of triggersTo(target)) {
        const verdict = transition(status, trigger);
        if (!('to' in verdict)) throw new Error(verdict.refused);
        status = verdict.to;
      }
      expect(status).toBe(target);
    }
  });
});

describe('money and quantities', () => {
  it('totals: exact cents, rounded once, half up, plus the fee', () => {
    expect(orderTotals([{ grams: 350, priceCents: 2490 }, { grams: 1250, priceCents: 1335 }], 'temperature_controlled')).toEqual({ itemsCents: 2540, feeCents: 1200, totalCents: 3740 });
    expect(orderTotals([{ grams: 50, priceCents: 10 }], 'standard').itemsCents).toBe(1); // 0.5 cent rounds up
    expect(orderTotals([{ grams: 100_000, priceCents: 999_999_999 }], 'express_chilled').totalCents).toBe(99_999_999_900 + 2500);
  });

  it('Form B kilograms: 0.1 to 100 in steps of 0.05, judged on the decimal value', () => {
    expect(kilogramsToGrams(0.15)).toEqual({ grams: 150 });
    expect(kilogramsToGrams(0.35)).toEqual({ grams: 350 });
    expect(kilogramsToGrams(100)).toEqual({ grams: 100_000 });
    for (const bad of [0.05, 0.33, 100.05, 0.123, Number.NaN]) expect('problem' in kilogramsToGrams(bad)).toBe(true);
  });
});

describe('recommendations', () => {
  it('never suggest an allergen, a cheese over the stinkiness limit, or one that cannot be ordered', () => {
    const milk = fc.constantFrom('cow', 'goat', 'sheep', 'buffalo', null);
    const cheese = fc.record({
      id: fc.integer({ min: 1, max: 1000 }),
      slug: fc.string(),
      name: fc.string(),
      milk,
      texture: fc.constantFrom('soft', 'hard', 'blue', null),
      origin: fc.constantFrom('France', 'Italy', null),
      stinkiness: fc.option(fc.integer({ min: 1, max: 10 }), { nil: null }),
      organic: fc.boolean(),
      orderable: fc.boolean(),
      pricePerKg: fc.constant(10),
    });
    fc.assert(
      fc.property(fc.uniqueArray(cheese, { selector: (c) => c.id, maxLength: 40 }), fc.subarray(['cow', 'goat', 'sheep', 'buffalo']), fc.option(fc.integer({ min: 1, max: 10 }), { nil: null }), fc.boolean(), (catalogue, allergies, maxStinkiness, organicOnly) => {
        const tastes = { milkAllergies: allergies, favouriteMilks: ['sheep'], favouriteTextures: [], favouriteCountries: [], maxStinkiness, organicOnly };
        const bought = new Set(catalogue.slice(0, 3).map((c) => c.id));
        for (const { cheese: c } of recommend(catalogue, tastes, bought, 20)) {
          expect(c.orderable).toBe(true);
          if (allergies.length > 0) expect(c.milk === null || allergies.includes(c.milk)).toBe(false);
          if (maxStinkiness !== null) expect((c.stinkiness ?? 0) <= maxStinkiness).toBe(true);
          if (organicOnly) expect(c.organic).toBe(true);
        }
      }),
    );
  });
});
