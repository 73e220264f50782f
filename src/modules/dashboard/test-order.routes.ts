import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { AppError, type FieldError } from '../../kernel/errors.js';
import { orderPlacement, SHIPPING_METHODS } from '../orders/orders.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { fieldWords, itemLines, linesOf, testOrderBody, type TestOrderFields, type TestOrderLine } from './test-order.js';

const Field = Type.Optional(Type.String({ maxLength: 200 }));
/** Line n's cheese (an id) and weight as `cheese<n>` and `kg<n>`: one name per control, as HTML forms are best validated. */
const TestOrderForm = Type.Object({
  _csrf: Type.String(),
  // As many as TEST_ORDER_LINES.
  cheese1: Field,
  kg1: Field,
  cheese2: Field,
  kg2: Field,
  cheese3: Field,
  kg3: Field,
  method: Type.Optional(Type.String({ maxLength: 40 })),
});

const METHOD_NAMES: Record<string, string> = { standard: 'Standard (free)', temperature_controlled: 'Temperature controlled (12.00 USD)', express_chilled: 'Express chilled (25.00 USD)' };

/**
 * "Create test order" (issue 31, test environments only; the caller registers it only there):
 * pick cheeses and weights, and the order is placed through the orders service as
 * `POST /v2/orders` places it (the same input rules, stock reserved, `order.placed`), then the
 * browser goes to its page. Bad input shows the form again, as sent, saying what is wrong.
 */
export function testOrderRoutes(context: DashboardContext): FastifyPluginAsync {
  const form = async (request: FastifyRequest, reply: FastifyReply, lines: TestOrderLine[], method: string, problems: FieldError[] = [], message?: string) => {
    const cheeses = (await context.orderableCheeses()).sort((a, b) => a.name.localeCompare(b.name));
    return reply.view('order-new', {
      ...layoutOf(context, request, reply, 'Create test order', 'orders'),
      lines: lines.map((line, i) => ({
        n: i + 1,
        kg: line.kg,
        options: cheeses.map((cheese) => ({ value: String(cheese.id), text: cheese.pricePerKg === null ? cheese.name : `${cheese.name} (${cheese.pricePerKg.toFixed(2)} USD/kg)`, selected: line.cheese === String(cheese.id) })),
      })),
      methods: SHIPPING_METHODS.map((value) => ({ value, text: METHOD_NAMES[value] ?? value, selected: value === method })),
      noCheeses: cheeses.length === 0,
      message,
      problems: problems.map((p) => `${p.field.charAt(0).toUpperCase()}${p.field.slice(1)} ${p.message}.`),
    });
  };

  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.get('/orders/new', async (request, reply) => form(request, reply, linesOf({}), 'standard'));

    scope.post('/orders/new', { schema: { body: TestOrderForm }, preValidation: checkCsrf(plain) }, async (request, reply) => {
      const session = sessionOf(request);
      const fields: TestOrderFields = request.body;
      const method = fields.method ?? 'standard';
      const again = (status: number, problems: FieldError[], message: string) => {
        reply.code(status);
        return form(request, reply, linesOf(fields), method, problems, message);
      };
      const built = testOrderBody(fields);
      if ('problems' in built) return again(422, built.problems, 'The order was not placed: fix the lines below.');
      const lines = itemLines(fields);
      try {
        // The orders module's own input rules (weights in steps of 0.05 kg, 0.1 to 100 kg), then its service: as POST /v2/orders.
        const order = await context.orders.place(orderPlacement(built.body), session.principal, { requestId: request.id, principal: session.principal });
        return reply.redirect(`/dashboard/orders/${order.id}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        const problems = (error.errors ?? []).map((e) => ({ field: fieldWords(e.field, lines), message: e.message }));
        return again(error.status, problems, `The order was not placed: ${problems.length > 0 ? 'fix the lines below.' : error.message}`);
      }
    });
  };
}
