import type { ObjectDelivery } from '../webhooks/webhooks.module.js';
import { nextStatus, type OrderDetail, type OrderService, type OrderStatus, type PaymentState } from '../orders/orders.module.js';
import { httpStatusBadge, orderStatusBadge, outcomeBadge, type Badge } from './badges.js';
import { when } from './format.js';

/** What the orders pages show of orders: rows, the detail, deliveries; words only, the rules are the orders module's. */

type OrderView = Awaited<ReturnType<OrderService['get']>>;

/** Status words; `approved` is Form B's `confirmed` (payment captured). */
export const STATUS_NAMES: Record<OrderStatus, string> = { placed: 'Placed', approved: 'Approved (payment captured)', shipped: 'Shipped', delivered: 'Delivered', cancelled: 'Cancelled' };
/** What each step of the timeline is called, with the event it fired. */
const STEP_NAMES: Record<OrderStatus, string> = { placed: 'Placed', approved: 'Confirmed: payment captured', shipped: 'Shipped', delivered: 'Delivered', cancelled: 'Cancelled' };
const PAYMENT_NAMES: Record<PaymentState, string> = { authorised: 'Authorised (not captured yet)', captured: 'Captured', voided: 'Voided' };
const SHIPPING_NAMES: Record<string, string> = { standard: 'Standard', temperature_controlled: 'Temperature controlled', express_chilled: 'Express chilled' };

const money = (amount: number, currency: string) => `${amount.toFixed(2)} ${currency}`;

/** The status as a badge in the module's words. */
export function statusBadge(status: OrderStatus): Badge {
  return orderStatusBadge(status, STATUS_NAMES[status] ?? status);
}

/** One row of the list (partials/order-row.eta). */
export function rowOf(order: OrderView, sandbox: boolean, now: number) {
  const next = sandbox ? nextStatus(order.status) : null;
  return {
    id: order.id,
    customer: order.customer ?? '(account closed)',
    status: STATUS_NAMES[order.status] ?? order.status,
    badge: statusBadge(order.status),
    items: order.items.map((item) => `${item.cheeseName} × ${item.quantityKg} kg`).join(', '),
    total: money(order.total, order.currency),
    placed: when(order.createdAt, now),
    advanceTo: next,
  };
}

/** A delivery's state now, as a badge: delivered, waiting for its next attempt, or dead-lettered. */
function deliveryBadge(delivery: ObjectDelivery): Badge {
  if (delivery.state === 'delivered') return outcomeBadge('Delivered', 'succeeded');
  if (delivery.state === 'dead') return outcomeBadge('Dead-lettered', 'dead');
  if (delivery.lastAttempt === null) return outcomeBadge('Pending: not sent yet', 'pending');
  return outcomeBadge('Pending: retrying', 'failed');
}

/** The order page's view (views/order.eta). */
export function detailOf(detail: OrderDetail, deliveries: readonly ObjectDelivery[], sandbox: boolean, now: number) {
  const { order } = detail;
  return {
    id: order.id,
    customer: order.customer ?? '(account closed)',
    badge: statusBadge(order.status),
    advanceTo: sandbox ? nextStatus(order.status) : null,
    placed: when(order.createdAt, now),
    timeline: detail.timeline.map((step) => ({ name: STEP_NAMES[step.status] ?? step.status, at: when(step.at, now), note: step.note })),
    items: order.items.map((item) => ({
      name: item.cheeseName,
      slug: item.cheeseSlug,
      kg: `${item.quantityKg} kg`,
      price: money(item.pricePerKg, order.currency),
      total: money(item.lineTotal, order.currency),
    })),
    subtotal: money(order.subtotal, order.currency),
    shipping: `${SHIPPING_NAMES[order.shipping.method] ?? order.shipping.method}: ${money(order.shipping.fee, order.currency)}`,
    total: money(order.total, order.currency),
    payment: { state: PAYMENT_NAMES[detail.payment.state], reference: detail.payment.reference },
    address: [order.shippingAddress.street, order.shippingAddress.zipCode, order.shippingAddress.city, order.shippingAddress.state, order.shippingAddress.country].filter(Boolean).join(', '),
    notes: order.notes,
    tracking: order.tracking && { carrier: order.tracking.carrier, number: order.tracking.trackingNumber, estimated: when(order.tracking.estimatedDelivery, now) },
    deliveries: deliveries.map((d) => ({
      webhookId: d.webhookId,
      webhookUrl: d.webhookUrl,
      eventType: d.eventType,
      eventId: d.eventId,
      attempts: d.attempts,
      badge: deliveryBadge(d),
      answer: d.lastAttempt ? httpStatusBadge(d.lastAttempt.statusCode) : null,
      last: d.lastAttempt && { id: d.lastAttempt.id, at: when(d.lastAttempt.createdAt, now), latency: `${Math.round(d.lastAttempt.latencyMs)} ms` },
    })),
  };
}
