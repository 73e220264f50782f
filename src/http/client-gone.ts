import type { ServerResponse } from 'node:http';

/**
 * Aborts when the connection ends before the answer (a held request stops waiting for a client
 * that left). The response's 'close', not the request's: that one fires once a body is read.
 */
export function clientGone(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort());
  return controller.signal;
}
