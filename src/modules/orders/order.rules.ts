import type { EventType } from '../outbox/outbox.module.js';
import type { OrderStatus, ShippingMethod } from './order.table.js';

/** What moves an order on. */
export type OrderTrigger = 'capture' | 'ship' | 'deliver' | 'cancel';

/**
 * The lifecycle (decisions.md §5), the one table every path consults: the worker, staff PATCH,
 * cancellation, the sandbox advance and cheese deletion. `approved` is Form B's `confirmed`.
 */
export const TRANSITIONS: Readonly<Record<OrderTrigger, { from: readonly OrderStatus[]; to: OrderStatus }>> = {
  capture: { from: ['placed'], to: 'approved' },
  ship: { from: ['approved'], to: 'shipped' },
  deliver: { from: ['shipped'], to: 'delivered' },
  cancel: { from: ['placed', 'approved'], to: 'cancelled' },
};

export const EVENT_OF_STATUS: Readonly<Record<OrderStatus, EventType>> = {
  placed: 'order.placed',
  approved: 'order.confirmed',
  shipped: 'order.shipped',
  delivered: 'order.delivered',
  cancelled: 'order.cancelled',
};

/** The status a trigger leads to from `current`, or why it cannot apply (the answer is a 409). */
export function transition(current: OrderStatus, trigger: OrderTrigger): { to: OrderStatus } | { refused: string } {
  const rule = TRANSITIONS[trigger];
  if (rule.from.includes(current)) return { to: rule.to };
  return { refused: `The order is ${current}: it cannot be ${PAST[trigger]} (only from ${rule.from.join(' or ')}).` };
}

const PAST: Record<OrderTrigger, string> = { capture: 'approved', ship: 'shipped', deliver: 'delivered', cancel: 'cancelled' };

/** The step the lifecycle worker takes next from a status, if any. */
export function nextStep(status: OrderStatus): Exclude<OrderTrigger, 'cancel'> | null {
  switch (status) {
    case 'placed':
      return 'capture';
    case 'approved':
      return 'ship';
    case 'shipped':
      return 'deliver';
    default:
      return null;
  }
}

/** The triggers that take a just-placed order to `target`: the automatic steps in turn, or a cancellation. */
export function triggersTo(target: OrderStatus): OrderTrigger[] {
  if (target === 'cancelled') return ['cancel'];
  const path: OrderTrigger[] = [];
  for (let status: OrderStatus = 'placed'; status !== target; ) {
    const step = nextStep(status);
    if (step === null) throw new Error(`No order reaches ${target} from placed.`);
    path.push(step);
    status = TRANSITIONS[step].to;
  }
  return path;
}

/** The trigger that takes an order to `target` (staff PATCH of `status`), or null when none does. */
export function triggerFor(target: OrderStatus): OrderTrigger | null {
  const found = (Object.entries(TRANSITIONS) as [OrderTrigger, { to: OrderStatus }][]).find(([, rule]) => rule.to === target);
  return found ? found[0] : null;
}

/** Orders stock is held for: given back on cancellation; gone with the parcel once shipped. */
export function holdsStock(status: OrderStatus): boolean {
  return status === 'placed' || status === 'approved';
}

export const SHIPPING_FEE_CENTS: Readonly<Record<ShippingMethod, number>> = {
  standard: 0,
  temperature_controlled: 1200,
  express_chilled: 2500,
};

/** Carrier days to delivery by method, for the estimated delivery date (interface §2.8). */
export const DELIVERY_DAYS: Readonly<Record<ShippingMethod, number>> = { standard: 5, temperature_controlled: 2, express_chilled: 1 };

/**
 * decisions.md §5: total = Σ(kg × price per kg at placement) + shipping fee, rounded to cents.
 * Computed in integers (grams × cents is exact), rounded once, half up.
 */
export function orderTotals(lines: readonly { grams: number; priceCents: number }[], method: ShippingMethod): { itemsCents: number; feeCents: number; totalCents: number } {
  const milliCents = lines.reduce((sum, line) => sum + line.grams * line.priceCents, 0);
  const itemsCents = Math.floor((milliCents + 500) / 1000);
  const feeCents = SHIPPING_FEE_CENTS[method];
  return { itemsCents, feeCents, totalCents: itemsCents + feeCents };
}

/** One line's amount, for display; the order's total is rounded once over all lines. */
export function lineCents(grams: number, priceCents: number): number {
  return Math.floor((grams * priceCents + 500) / 1000);
}

/**
 * Form B `quantity_kg`: 0.1 to 100 kg in steps of 0.05 kg, as grams; or why not. Judged on the
 * decimal value (0.15 is 150 g, whatever binary floating point makes of it).
 */
export function kilogramsToGrams(kg: number): { grams: number } | { problem: string } {
  if (!Number.isFinite(kg)) return { problem: 'must be a number of kilograms' };
  const grams = Math.round(kg * 1000);
  if (Math.abs(kg * 1000 - grams) > 1e-6 || grams % 50 !== 0) return { problem: 'must be a multiple of 0.05 kg' };
  if (grams < 100 || grams > 100_000) return { problem: 'must be between 0.1 and 100 kg' };
  return { grams };
}

/** The status the next automatic step leads to (what the sandbox advance does), or null when none. */
export function nextStatus(status: OrderStatus): OrderStatus | null {
  const step = nextStep(status);
  return step === null ? null : TRANSITIONS[step].to;
}

/** Where the order's payment stands: authorised at placement, captured on approval, voided on cancellation. */
export type PaymentState = 'authorised' | 'captured' | 'voided';

export function paymentState(status: OrderStatus): PaymentState {
  if (status === 'placed') return 'authorised';
  if (status === 'cancelled') return 'voided';
  return 'captured';
}
