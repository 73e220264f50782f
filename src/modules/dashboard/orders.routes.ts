import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import type { OrderService } from '../orders/orders.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { formatTime } from './format.js';
import { localPath } from './local-path.js';

type OrderView = Awaited<ReturnType<OrderService['get']>>;

const PAGE_SIZE = 20;
/** The statuses the sandbox advance moves on (placed → approved → shipped → delivered); the others have no next state. */
const ADVANCEABLE = new Set(['placed', 'approved', 'shipped']);
const STATUS_NAMES: Record<string, string> = { placed: 'Placed', approved: 'Approved (payment captured)', shipped: 'Shipped', delivered: 'Delivered', cancelled: 'Cancelled' };
const NEXT_STATUS: Record<string, string> = { placed: 'approved', approved: 'shipped', shipped: 'delivered' };

const ListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  customer: Type.Optional(Type.String({ maxLength: 100 })),
});
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

/** Where an Advance form sends the browser back to: this list, with its filter and page (same page only). */
function backTo(value: unknown): string {
  return localPath(value, '/dashboard/orders', '/dashboard/orders');
}

function listUrl(query: { customer?: string; cursor?: string }): string {
  const params = new URLSearchParams();
  if (query.customer) params.set('customer', query.customer);
  if (query.cursor) params.set('cursor', query.cursor);
  const text = params.toString();
  return text ? `/dashboard/orders?${text}` : '/dashboard/orders';
}

function rowOf(order: OrderView, sandbox: boolean) {
  return {
    id: order.id,
    customer: order.customer ?? '(account closed)',
    status: STATUS_NAMES[order.status] ?? order.status,
    items: order.items.map((item) => `${item.cheeseName} × ${item.quantityKg} kg`).join(', '),
    total: `${order.total.toFixed(2)} ${order.currency}`,
    createdAt: order.createdAt,
    created: formatTime(order.createdAt),
    advanceTo: sandbox && ADVANCEABLE.has(order.status) ? NEXT_STATUS[order.status] : null,
  };
}

/**
 * The orders page (issue 19, page 7): the caller's orders (staff: every account's, with a
 * filter by account), newest first, keyset-paginated. In a test environment each order with a
 * next state has an Advance button that runs the sandbox advance, so webhooks can be watched
 * firing; in production there is no button and the action does not exist (404).
 */
export function orderRoutes(context: DashboardContext): FastifyPluginAsync {
  const { orders } = context;
  const sandbox = context.environment !== 'production';
  return async (scope) => {
    scope.get('/orders', { schema: { querystring: ListQuery } }, async (request, reply) => {
      const session = sessionOf(request);
      const staff = session.role === 'admin';
      const query = request.query as { cursor?: string; customer?: string };
      const customer = staff && query.customer?.trim() ? query.customer.trim() : undefined;
      const page = await orders.list(session.principal, { limit: PAGE_SIZE, cursor: query.cursor || undefined, customer });
      return reply.view('orders', {
        ...layoutOf(context, request, reply, 'Orders', 'orders'),
        staff,
        sandbox,
        customer: customer ?? '',
        paged: Boolean(query.cursor),
        here: listUrl({ customer, cursor: query.cursor || undefined }),
        first: listUrl({ customer }),
        next: page.nextCursor ? listUrl({ customer, cursor: page.nextCursor }) : null,
        orders: page.items.map((order) => rowOf(order, sandbox)),
      });
    });

    // Test environments only: in production the route does not exist (404), as /v2's sandbox advance.
    if (sandbox) {
      const AdvanceForm = Type.Object({ _csrf: Type.String(), back: Type.Optional(Type.String({ maxLength: 2000 })) });
      scope.post('/orders/:id/advance', { schema: { params: IdParams, body: AdvanceForm }, preValidation: checkCsrf(scope) }, async (request, reply) => {
        const session = sessionOf(request);
        const { id } = request.params as { id: number };
        // The service gets what the /v2 route gives it: who acts, under which request (its events carry the request id).
        const advanced = await orders.advance(id, session.principal, { requestId: request.id, principal: session.principal });
        const back = backTo((request.body as { back?: string }).back);
        // htmx (JavaScript on) swaps the order's row in place; a plain form goes back to the list.
        if (request.headers['hx-request'] === 'true') {
          return reply.view('partials/order-row', { order: rowOf(advanced, sandbox), staff: session.role === 'admin', sandbox, csrf: reply.csrfToken(), here: back });
        }
        return reply.redirect(back, 303);
      });
    }
  };
}
