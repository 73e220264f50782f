import { randomUUID } from 'node:crypto';

/** Random hex from Node's buffered UUIDs: randomBytes makes a system call each time (~20 µs here, per order). */
const randomHex = (length: number) => randomUUID().replaceAll('-', '').slice(0, length);
import type { ShippingMethod } from './order.table.js';
import { DELIVERY_DAYS } from './order.rules.js';

/**
 * The payment provider, behind this interface so a real one can replace the simulation. Calls
 * carry the order id so a real provider can deduplicate retries (its idempotency key).
 */
export interface PaymentGateway {
  authorize(order: { orderKey: string; totalCents: number }): Promise<{ reference: string }>;
  capture(reference: string, totalCents: number): Promise<void>;
  void(reference: string): Promise<void>;
}

/** The courier: hands over a parcel and says how to follow it. */
export interface Courier {
  dispatch(order: { orderId: number; method: ShippingMethod; country: string }, now: Date): Promise<{ carrier: string; trackingNumber: string; estimatedDelivery: Date }>;
}

/** The default outside a real integration: every authorisation and capture succeeds. */
export const simulatedPayments: PaymentGateway = {
  authorize: async () => ({ reference: `pay_sim_${randomHex(16)}` }),
  capture: async () => undefined,
  void: async () => undefined,
};

export const SIMULATED_CARRIER = 'Fromagerie Express (simulated)';

export const simulatedCourier: Courier = {
  dispatch: async (order, now) => ({
    carrier: SIMULATED_CARRIER,
    trackingNumber: `FRX-${randomHex(10).toUpperCase()}`,
    estimatedDelivery: new Date(now.getTime() + DELIVERY_DAYS[order.method] * 86_400_000),
  }),
};
