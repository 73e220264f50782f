import type { FieldError } from '../../kernel/errors.js';
import { SANDBOX_CITY, SHIPPING_METHODS, type OrderInputBody, type ShippingMethod } from '../orders/orders.module.js';

/** Lines the "Create test order" form offers (empty ones are left out); its schema (test-order.routes.ts) names each. */
export const TEST_ORDER_LINES = 3;

/** The form as posted: line n's `cheese<n>` and `kg<n>` (n from 1), and a shipping method. */
export type TestOrderFields = { method?: string | undefined } & Partial<Record<`cheese${number}` | `kg${number}`, string | undefined>>;

/** What the form's lines hold, for showing the form again as it was sent. */
export interface TestOrderLine {
  cheese: string;
  kg: string;
}

export function linesOf(fields: TestOrderFields): TestOrderLine[] {
  return Array.from({ length: TEST_ORDER_LINES }, (_, i) => ({ cheese: (fields[`cheese${i + 1}`] ?? '').trim(), kg: (fields[`kg${i + 1}`] ?? '').trim() }));
}

/**
 * The form as the body `POST /v2/orders` takes (Form B), so the orders module judges it as it
 * judges the API's: its input rules (orderPlacement) and its service. What only a form can get
 * wrong (a line with a weight but no cheese, a weight that is no number) is named here, per line.
 * Test orders ship to the sandbox's address, so removing development fixtures finds them.
 */
export function testOrderBody(fields: TestOrderFields): { body: OrderInputBody } | { problems: FieldError[] } {
  const problems: FieldError[] = [];
  const items: OrderInputBody['items'] = [];
  linesOf(fields).forEach((line, i) => {
    if (line.cheese === '' && line.kg === '') return;
    if (line.cheese === '') return problems.push({ field: `line ${i + 1}`, message: 'has a weight but no cheese' });
    // Decimal commas are how half of Europe writes 0,5 kg.
    const kg = Number(line.kg.replace(',', '.'));
    if (line.kg === '' || !Number.isFinite(kg)) return problems.push({ field: `line ${i + 1}`, message: 'needs a weight in kilograms (0.1 to 100, in steps of 0.05)' });
    items.push({ cheeseId: /^\d+$/.test(line.cheese) ? Number(line.cheese) : line.cheese, quantity_kg: kg });
  });
  if (problems.length > 0) return { problems };
  if (items.length === 0) return { problems: [{ field: 'items', message: 'pick at least one cheese and its weight' }] };
  const method = (SHIPPING_METHODS as readonly string[]).includes(fields.method ?? '') ? (fields.method as ShippingMethod) : 'standard';
  return { body: { items, shipping: { method, address: { line1: '1 Test Street', city: SANDBOX_CITY, postalCode: '00000', country: 'FR' } }, notes: 'Test order from the dashboard' } };
}

/** A module's field path (`items.1.quantity_kg`) as the form's words ("line 2's weight"), given which form line each item came from. */
export function fieldWords(field: string, lineOfItem: readonly number[]): string {
  const match = /^items\.(\d+)(?:\.(quantity_kg|cheeseId))?$/.exec(field);
  if (!match) return field;
  const line = (lineOfItem[Number(match[1])] ?? Number(match[1])) + 1;
  return match[2] === 'quantity_kg' ? `Line ${line}'s weight` : `Line ${line}`;
}

/** Which form line each item of the body came from (empty lines are skipped). */
export function itemLines(fields: TestOrderFields): number[] {
  return linesOf(fields).flatMap((line, i) => (line.cheese === '' && line.kg === '' ? [] : [i]));
}
