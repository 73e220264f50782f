import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/** Continues the pipeline, or ends it with an error (answered in the Error shape). */
export type Next = (error?: Error) => void;
/** A stage before the handler. Callback style: it runs on every request, and a promise per stage is measurable. */
export type RequestHook = (request: FastifyRequest, reply: FastifyReply, next: Next) => void;
/** A stage as the answer is sent: it may replace the payload. */
export type SendHook = (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: (error: Error | null, payload?: unknown) => void) => void;
/** Which routes a stage concerns, judged once per route at start-up. */
export type RouteFilter = (route: RouteOptions) => boolean;

/**
 * What a feature module adds to the request pipeline (src/http/pipeline.ts), at one of the
 * places the pipeline keeps for modules, so that src/http never names a module:
 * - `authenticated`: after authentication, before the body is read (rate limits);
 * - `refused`: a request the pipeline turned away before its route ran (401, 403, 404, 405),
 *   with the principal set when the credential was valid; calls `next` with an error of its
 *   own (429) or none, and the refusal stands;
 * - `handler`: last before the handler (Idempotency-Key replays);
 * - `sent`: last as the answer is sent (Idempotency-Key records);
 * - `answered`: every request's answer as it is sent, refused and unrouted ones too, before
 *   it is compressed (the request log keeps its body).
 */
export type ModuleStage =
  | { name: string; at: 'authenticated'; routes: RouteFilter; hook: RequestHook }
  | { name: string; at: 'handler'; routes: RouteFilter; hook: RequestHook }
  | { name: string; at: 'refused'; hook: RequestHook }
  | { name: string; at: 'sent'; routes: RouteFilter; hook: SendHook }
  | { name: string; at: 'answered'; hook: SendHook };

/** A callback-style stage from an async one: it resolves `'answered'` when it sent the reply itself. */
export function fromAsync(run: (request: FastifyRequest, reply: FastifyReply) => Promise<'answered' | void>): RequestHook {
  return (request, reply, next) => {
    run(request, reply).then((outcome) => {
      if (outcome !== 'answered') next();
    }, next);
  };
}
