import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { changeContextOf, principalOf, type AuthRequirement } from '../../http/auth.js';
import { errorResponses } from '../../http/common.schema.js';
import { orderPlacement, storeOrderPlacement } from './order.input.js';
import { orderQueryOf } from './order.query.js';
import { Order, OrderInput, OrderList, OrderPatch, StoreOrderInput, Tracking } from './order.schema.js';
import type { OrderService } from './order.service.js';
import { ORDER_STATUSES } from './order.table.js';

const READ: AuthRequirement = { schemes: ['api_key', 'any_bearer'], scope: 'read:orders' };
const WRITE: AuthRequirement = { schemes: ['api_key', 'any_bearer'], scope: 'write:orders' };
const OrderId = Type.Object({ orderId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const Id = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const orderPath = (id: string | number) => `/v2/orders/${id}`;
const OWNERSHIP = 'Customers see and change only their own orders (another\'s is a 404); staff see all.';

/** Form A (`/store/order`) and Form B (`/orders`): one Order, either spelling. */
export const orderRoutes: FastifyPluginAsyncTypebox<{ orders: OrderService; sandbox: boolean }> = async (app, { orders, sandbox }) => {
  app.post('/store/order', {
    config: { auth: { schemes: ['any_bearer'], scope: 'write:orders' }, idempotent: true },
    schema: {
      tags: ['store'],
      operationId: 'placeOrder',
      summary: 'Place an order (Form A: whole kilograms, ships standard)',
      description: `Reserves the stock, authorises the payment and answers 201 with the order, \`placed\`; payment capture, shipping and delivery follow asynchronously. Not enough stock is a 409 naming each short item, and nothing is reserved; a cheese that is not \`available\` is a 422 naming the item. A cheese given twice is a 422. ${OWNERSHIP}`,
      body: StoreOrderInput,
      response: { 201: Order, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (request, reply) => {
    const order = await orders.place(storeOrderPlacement(request.body), principalOf(request), changeContextOf(request, orderPath));
    return reply.code(201).header('location', orderPath(order.id)).send(order);
  });

  // The interface lists api_key alone here; Form B's GET /orders/{id} takes OAuth as well.
  app.get('/store/order/:orderId', {
    config: { auth: { schemes: ['api_key'], scope: 'read:orders' } },
    schema: { tags: ['store'], operationId: 'getOrderById', summary: 'An order (Form A)', description: `Orders 1 to 10 exist in sandbox and development for testing, owned by the documented test customer. ${OWNERSHIP}`, params: OrderId, response: { 200: Order, ...errorResponses(401, 403, 404) } },
  }, async (request) => orders.get(request.params.orderId, principalOf(request)));

  app.delete('/store/order/:orderId', {
    config: { auth: WRITE },
    schema: {
      tags: ['store'],
      operationId: 'deleteOrder',
      summary: 'Cancel an order that has not shipped',
      description: `\`placed\` or \`approved\` becomes \`cancelled\`: the stock comes back, the payment authorisation is voided and \`order.cancelled\` fires. Already cancelled: 204 again. Shipped or delivered: 409. ${OWNERSHIP}`,
      params: OrderId,
      response: { 204: Type.Null({ description: 'Cancelled.' }), ...errorResponses(401, 403, 404, 409) },
    },
  }, async (request, reply) => {
    await orders.cancel(request.params.orderId, principalOf(request), changeContextOf(request));
    return reply.code(204).send(null);
  });

  app.post('/orders', {
    config: { auth: WRITE, idempotent: true },
    schema: {
      tags: ['orders'],
      operationId: 'createOrder',
      summary: 'Place an order (Form B: kilograms in steps of 0.05, a shipping method)',
      description: `Cheeses by id or slug. Total = Σ quantity_kg × price per kg + the shipping fee (standard 0, temperature_controlled 12.00, express_chilled 25.00), in USD. Reserves stock and authorises payment in one step: 409 naming each short item when stock is short (nothing reserved), 422 naming the item for a cheese that is not \`available\`. ${OWNERSHIP}`,
      body: OrderInput,
      response: { 201: Order, ...errorResponses(401, 403, 409, 422) },
    },
  }, async (request, reply) => {
    const order = await orders.place(orderPlacement(request.body), principalOf(request), changeContextOf(request, orderPath));
    return reply.code(201).header('location', orderPath(order.id)).send(order);
  });

  app.get('/orders', {
    config: { auth: READ },
    schema: {
      tags: ['orders'],
      operationId: 'listOrders',
      summary: 'Your order history, newest first',
      description: `Keyset-paginated (\`cursor\` from \`nextCursor\`). Filters: \`status\` (comma-separated), \`from\` and \`to\` (creation time, \`from\` inclusive, \`to\` exclusive); staff see every order and may filter by \`customer\` (a username). ${OWNERSHIP}`,
      querystring: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
          status: Type.Optional(Type.String({ pattern: `^(?:${ORDER_STATUSES.join('|')})(?:,(?:${ORDER_STATUSES.join('|')}))*$`, description: 'One or more of placed, approved, shipped, delivered, cancelled, comma-separated.' })),
          from: Type.Optional(Type.String({ format: 'date-time' })),
          to: Type.Optional(Type.String({ format: 'date-time' })),
          customer: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Staff only: that customer\'s orders.' })),
        },
        { additionalProperties: false },
      ),
      response: { 200: OrderList, ...errorResponses(400, 401, 403) },
    },
  }, async (request) => orders.list(principalOf(request), orderQueryOf(request.query)));

  app.get('/orders/:id', {
    config: { auth: READ },
    schema: { tags: ['orders'], operationId: 'getOrder', summary: 'An order (Form B)', description: OWNERSHIP, params: Id, response: { 200: Order, ...errorResponses(401, 403, 404) } },
  }, async (request) => orders.get(request.params.id, principalOf(request)));

  app.patch('/orders/:id', {
    config: { auth: WRITE },
    schema: {
      tags: ['orders'],
      operationId: 'updateOrder',
      summary: 'Change an order (JSON merge patch)',
      description: `\`application/merge-patch+json\` or \`application/json\`. The owner changes \`notes\` and \`shippingAddress\` while the order is \`placed\` (409 after). Staff (\`admin\`) also set \`status\`: \`approved\`, \`shipped\` (with \`carrier\` and \`trackingNumber\`, or the courier books one), \`delivered\`, \`cancelled\`; an illegal transition is 409 naming the current status. ${OWNERSHIP}`,
      consumes: ['application/merge-patch+json', 'application/json'],
      params: Id,
      body: OrderPatch,
      response: { 200: Order, ...errorResponses(401, 403, 404, 409, 422) },
    },
  }, async (request) => orders.patch(request.params.id, request.body, principalOf(request), changeContextOf(request)));

  app.get('/orders/:id/tracking', {
    config: { auth: READ },
    schema: { tags: ['orders'], operationId: 'getOrderTracking', summary: 'Carrier, tracking number, estimated delivery and the status timeline', description: `409 before the order has shipped. ${OWNERSHIP}`, params: Id, response: { 200: Tracking, ...errorResponses(401, 403, 404, 409) } },
  }, async (request) => orders.tracking(request.params.id, principalOf(request)));

  // Sandbox and development only: in production the route does not exist (404).
  if (sandbox) {
    app.post('/sandbox/orders/:id/advance', {
      config: { auth: WRITE },
      schema: { tags: ['orders'], operationId: 'advanceSandboxOrder', summary: 'Sandbox: move an order to its next state now', description: `placed → approved → shipped → delivered, each with its event, so every webhook can be tried without waiting. 409 when the order has no next state. Not available in production. ${OWNERSHIP}`, params: Id, response: { 200: Order, ...errorResponses(401, 403, 404, 409) } },
    }, async (request) => orders.advance(request.params.id, principalOf(request), changeContextOf(request)));
  }
};
