import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { systemClock } from '../../kernel/clock.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { localPath } from './local-path.js';
import { detailOf, rowOf } from './order-views.js';
import { testOrderRoutes } from './test-order.routes.js';

const PAGE_SIZE = 20;

const ListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  customer: Type.Optional(Type.String({ maxLength: 100 })),
});
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const AdvanceForm = Type.Object({ _csrf: Type.String(), back: Type.Optional(Type.String({ maxLength: 2000 })) });

/** Where an Advance form sends the browser back to: the list (with its filter and page) or an order's page; nowhere else. */
function backTo(value: unknown): string {
  return localPath(value, '/dashboard/orders', '/dashboard/orders');
}

function listUrl(query: { customer?: string | undefined; cursor?: string | undefined }): string {
  const params = new URLSearchParams();
  if (query.customer) params.set('customer', query.customer);
  if (query.cursor) params.set('cursor', query.cursor);
  const text = params.toString();
  return text ? `/dashboard/orders?${text}` : '/dashboard/orders';
}

/**
 * The orders pages (issue 19 page 7, issue 31 page 3): the caller's orders (staff: every
 * account's, with a filter by account), newest first, keyset-paginated; an order's page with
 * its timeline, items, payment, tracking and the webhook deliveries of its events. In a test
 * environment an order with a next state (the orders module's rule) has an Advance button,
 * and "Create test order" places one; in production neither exists (404).
 */
export function orderRoutes(context: DashboardContext): FastifyPluginAsync {
  const { orders } = context;
  const clock = context.clock ?? systemClock;
  const sandbox = context.environment !== 'production';
  return async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.get('/orders', { schema: { querystring: ListQuery } }, async (request, reply) => {
      const session = sessionOf(request);
      const staff = session.role === 'admin';
      const { query } = request;
      const customer = staff && query.customer?.trim() ? query.customer.trim() : undefined;
      const page = await orders.list(session.principal, { limit: PAGE_SIZE, cursor: query.cursor || undefined, customer });
      const now = clock.now();
      return reply.view('orders', {
        ...layoutOf(context, request, reply, 'Orders', 'orders'),
        staff,
        sandbox,
        customer: customer ?? '',
        paged: Boolean(query.cursor),
        here: listUrl({ customer, cursor: query.cursor || undefined }),
        first: listUrl({ customer }),
        next: page.nextCursor ? listUrl({ customer, cursor: page.nextCursor }) : null,
        orders: page.items.map((order) => rowOf(order, sandbox, now)),
      });
    });

    if (sandbox) await scope.register(testOrderRoutes(context));

    // Digits only: any other word after /orders/ (`new` in production) is no page (404), not a bad id (400).
    scope.get('/orders/:id(^\\d+$)', { schema: { params: IdParams } }, async (request, reply) => {
      const session = sessionOf(request);
      const { id } = request.params;
      // Another account's order is a 404 (the service's rule), as on /v2.
      const detail = await orders.detail(id, session.principal);
      const deliveries = await context.deliveryInsights.deliveriesOf(session.principal, { type: 'order', id: String(id) });
      return reply.view('order', {
        ...layoutOf(context, request, reply, `Order #${id}`, 'orders'),
        staff: session.role === 'admin',
        sandbox,
        order: detailOf(detail, deliveries, sandbox, clock.now()),
        here: `/dashboard/orders/${id}`,
      });
    });

    // Test environments only: in production the route does not exist (404), as /v2's sandbox advance.
    if (sandbox) {
      scope.post('/orders/:id/advance', { schema: { params: IdParams, body: AdvanceForm }, preValidation: checkCsrf(plain) }, async (request, reply) => {
        const session = sessionOf(request);
        const { id } = request.params;
        // The service gets what the /v2 route gives it: who acts, under which request (its events carry the request id).
        const advanced = await orders.advance(id, session.principal, { requestId: request.id, principal: session.principal });
        const back = backTo(request.body.back);
        // htmx (JavaScript on) swaps the order's row in place; a plain form goes back to the page it came from.
        if (request.headers['hx-request'] === 'true') {
          return reply.view('partials/order-row', { order: rowOf(advanced, sandbox, clock.now()), staff: session.role === 'admin', sandbox, csrf: reply.csrfToken(), here: back });
        }
        return reply.redirect(back, 303);
      });
    }
  };
}
