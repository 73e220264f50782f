// A switch over every event kind with a `never` default compiles: adding a kind to the API
// without handling it here is a compile error, and each branch sees its own data.
import type { Fromagerie, WebhookEvent } from '@fromagerie/sdk';

function assertNever(value: never): never {
  throw new Error(`unhandled event ${JSON.stringify(value)}`);
}

export function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case 'order.placed':
    case 'order.confirmed':
    case 'order.delivered':
    case 'order.cancelled':
      return `order ${event.data.order_id}`;
    case 'order.shipped':
      return `order ${event.data.order_id} by ${event.data.carrier}, tracking ${event.data.tracking_number}`;
    case 'cheese.back_in_stock':
    case 'cheese.low_stock':
    case 'cheese.out_of_stock':
    case 'cheese.new_arrival':
      return `cheese ${event.data.slug}`;
    case 'customer.created':
    case 'customer.updated':
    case 'customer.subscription_changed':
      return `customer ${event.type}`;
    case 'webhook.test':
      return 'a test';
    case 'api_key.expiring':
      return `key ${event.data.prefix} expires ${event.data.expires_at}`;
    default:
      return assertNever(event);
  }
}

export function narrowing(event: WebhookEvent): void {
  if (event.type === 'order.shipped') {
    const carrier: string = event.data.carrier;
    void carrier;
  }
  if (event.type === 'cheese.low_stock') {
    // @ts-expect-error a cheese event has no order_id
    void event.data.order_id;
  }
}

export async function pollTheLog(sdk: Fromagerie, signal: AbortSignal): Promise<void> {
  const page = await sdk.events.list({ type: ['order.*'], limit: 10 });
  for (const event of page.items) void event.pending_webhooks;
  for await (const event of sdk.events.tail({ types: ['order.*', 'cheese.low_stock'], signal })) {
    if (event.type === 'order.shipped') void event.data.tracking_number;
    // @ts-expect-error the log's events are typed as the union too: an order's data has no slug
    if (event.type === 'order.placed') void event.data.slug;
  }
  const one = await sdk.events.get('evt_0');
  // @ts-expect-error not a kind of event
  if (one.type === 'order.eaten') void one;
  const fromHook: WebhookEvent = sdk.webhooks.verify('{}', {}, 'whsec_x');
  void fromHook;
  // @ts-expect-error not a kind of event
  void sdk.events.tail({ types: ['cheese'] });
}
