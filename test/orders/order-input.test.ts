import { describe, expect, it } from 'vitest';
import { ValidationFailedError } from '../../src/kernel/errors.js';
import { addressFromFormB, gramsOf, orderPlacement, ownerPatchChanges, storeOrderPlacement } from '../../src/modules/orders/order.input.js';
import { orderQueryOf } from '../../src/modules/orders/order.query.js';

function refusal(run: () => unknown): ValidationFailedError {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationFailedError) return error;
    throw error;
  }
  throw new Error('expected a ValidationFailedError');
}

describe('Form A (POST /store/order) as a placement', () => {
  it('whole kilograms become grams, Form A\'s address names map, standard shipping, errors named by Form A\'s paths', () => {
    const placement = storeOrderPlacement({ items: [{ cheeseId: 7, quantity: 2 }, { cheeseId: 9, quantity: 1 }], shippingAddress: { street: '1 Main St', city: 'Springfield', state: 'IL', zipCode: '62701', country: 'us' }, notes: 'Ring' });
    expect(placement).toEqual({
      lines: [
        { cheese: 7, grams: 2000, field: 'items.0', quantityField: 'items.0.quantity' },
        { cheese: 9, grams: 1000, field: 'items.1', quantityField: 'items.1.quantity' },
      ],
      address: { street: '1 Main St', city: 'Springfield', state: 'IL', zip: '62701', country: 'us' },
      countryField: 'shippingAddress.country',
      method: 'standard',
      notes: 'Ring',
    });
  });

  it('what is left out is null', () => {
    const placement = storeOrderPlacement({ items: [{ cheeseId: 1, quantity: 1 }], shippingAddress: { street: 'S', city: 'C', country: 'FR' } });
    expect([placement.address.state, placement.address.zip, placement.notes]).toEqual([null, null, null]);
  });
});

describe('Form B (POST /orders) as a placement', () => {
  it('kilograms in 0.05 steps become grams (decimally: 0.15 is 150 g), ids or slugs, the method and Form B\'s address', () => {
    const placement = orderPlacement({ items: [{ cheeseId: 'comte-24-mois', quantity_kg: 0.15 }, { cheeseId: 3, quantity_kg: 2.5 }], shipping: { method: 'express_chilled', address: { line1: '12 rue', city: 'Lyon', region: 'ARA', postalCode: '69002', country: 'FR' } } });
    expect(placement).toEqual({
      lines: [
        { cheese: 'comte-24-mois', grams: 150, field: 'items.0', quantityField: 'items.0.quantity_kg' },
        { cheese: 3, grams: 2500, field: 'items.1', quantityField: 'items.1.quantity_kg' },
      ],
      address: { street: '12 rue', city: 'Lyon', state: 'ARA', zip: '69002', country: 'FR' },
      countryField: 'shipping.address.country',
      method: 'express_chilled',
      notes: null,
    });
  });

  it('every line with a quantity off the 0.05 kg steps is named in one 422', () => {
    const error = refusal(() => orderPlacement({ items: [{ cheeseId: 1, quantity_kg: 0.12 }, { cheeseId: 2, quantity_kg: 1 }, { cheeseId: 3, quantity_kg: 0.33 }], shipping: { method: 'standard', address: { line1: 'L', city: 'C', country: 'FR' } } }));
    expect(error.errors).toEqual([
      { field: 'items.0.quantity_kg', message: 'must be a multiple of 0.05 kg' },
      { field: 'items.2.quantity_kg', message: 'must be a multiple of 0.05 kg' },
    ]);
    expect(error.message).toBe('The order is invalid: items.0.quantity_kg must be a multiple of 0.05 kg; items.2.quantity_kg must be a multiple of 0.05 kg.');
  });

  it('Form B\'s address alone: absent region and postal code are null', () => {
    expect(addressFromFormB({ line1: 'L', city: 'C', country: 'de' })).toEqual({ street: 'L', city: 'C', state: null, zip: null, country: 'de' });
  });
});

describe('a quantity in kilograms', () => {
  it('is grams, or a 422 naming the field', () => {
    expect(gramsOf(0.5, 'quantity_kg')).toBe(500);
    expect(refusal(() => gramsOf(0.07, 'quantity_kg')).errors).toEqual([{ field: 'quantity_kg', message: 'must be a multiple of 0.05 kg' }]);
  });
});

describe('the owner\'s part of an order merge patch', () => {
  it('changes only what was sent; null clears; the country is stored upper case', () => {
    expect(ownerPatchChanges({ notes: null })).toEqual({ notes: null });
    expect(ownerPatchChanges({ shippingAddress: { city: 'Nantes', state: null, country: 'fr' } })).toEqual({ ship_city: 'Nantes', ship_state: null, ship_country: 'FR' });
    expect(ownerPatchChanges({ notes: 'n', shippingAddress: { street: 's', zipCode: '44000' } })).toEqual({ notes: 'n', ship_street: 's', ship_zip: '44000' });
    expect(ownerPatchChanges({})).toEqual({});
  });

  it('refuses a country that does not exist', () => {
    expect(refusal(() => ownerPatchChanges({ shippingAddress: { country: 'XX' } })).errors).toEqual([{ field: 'shippingAddress.country', message: 'is not an ISO 3166-1 alpha-2 country code' }]);
  });
});

describe('the order history\'s query parameters', () => {
  it('default to 20, split the statuses, and compare times as UTC', () => {
    expect(orderQueryOf({})).toEqual({ limit: 20, cursor: undefined, statuses: undefined, from: undefined, to: undefined, customer: undefined });
    expect(orderQueryOf({ limit: 5, cursor: 'c', status: 'placed,shipped', from: '2025-01-01T01:00:00+01:00', to: '2025-02-01T00:00:00Z', customer: 'marie' })).toEqual({
      limit: 5,
      cursor: 'c',
      statuses: ['placed', 'shipped'],
      from: '2025-01-01T00:00:00.000Z',
      to: '2025-02-01T00:00:00.000Z',
      customer: 'marie',
    });
  });
});
