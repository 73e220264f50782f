import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import { HeadWatcher } from '../../kernel/head-watcher.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { answerBody, captureOf, isLogRead, keepsBodies, type BodyPolicy, type Capture } from './request-log.capture.js';
import { eventLoopWriter, ThreadWriter } from './request-log.writer.js';
import type { DatabaseLocation } from '../../db/database.js';
import { RequestLogRecorder, type RecorderCounts } from './request-log.recorder.js';
import { RequestLogRepository } from './request-log.repository.js';
import { requestLogRoutes } from './request-log.routes.js';
import { RequestLogService, type LogMark } from './request-log.service.js';
import { noTracing, type Tracing } from '../../kernel/tracing.js';

export type { BodyPolicy } from './request-log.capture.js';
export type { RecorderCounts } from './request-log.recorder.js';
export type { RequestLogService, RequestLogFilters, RequestLogPage } from './request-log.service.js';
export type { RequestLogRow } from './request-log.repository.js';
export { curlOf, API_KEY_PLACEHOLDER } from './request-log.codec.js';
export type { HourlyCount } from './request-log.repository.js';

export interface RequestLogOptions {
  db: Kysely<DB>;
  cursors: CursorCodec;
  /** REQUEST_LOG: off records nothing (the routes still answer, from what is kept). */
  enabled: boolean;
  /** REQUEST_LOG_BODIES. */
  bodies: BodyPolicy;
  /** REQUEST_LOG_RETENTION_DAYS. */
  retentionDays: number;
  /** EVENTS_MAX_HELD_PER_ACCOUNT: tails of one account held at once on this instance. */
  maxHeldPerAccount: number;
  /** Entries waiting to be written at most (10,000); past it, dropped and counted. */
  queueCapacity?: number;
  flushMs?: number;
  watchIntervalMs?: number;
  /** Commits that added entries, on any instance: wakes held tails. */
  afterCommit?: (listener: () => void) => () => void;
  warn?: (message: string) => void;
  clock?: Clock;
  /** Spans (docs/operations.md, "Traces"): each batch written is a trace of its own; none when absent. */
  tracer?: Tracing | undefined;
  /**
   * Batches written on a worker thread of their own, with a connection to this location
   * (request-log.writer.ts); `committed` tells the app's listeners of each. Absent: on the event
   * loop, with `db` (AppConfig.requestLogWriter).
   */
  thread?: { location: DatabaseLocation; committed: () => void };
}

export type RequestLogModule = FeatureModule<{
  /** The log as its readers see it (GET /v2/request-logs, the dashboard's Logs page). */
  logs: RequestLogService;
  /** Root `onResponse` hook (app.ts registers it): records each answered /v2 request of an account. */
  onResponse: (request: FastifyRequest, reply: FastifyReply) => void;
  counts: Readonly<RecorderCounts>;
  /** Writes what is queued (tests; the server's shutdown). */
  flush: () => Promise<void>;
  /** SIGTERM: held tails answer now. */
  drain: () => void;
  close: () => Promise<void>;
}>;

const BATCH = 500;
const WARN_EVERY_MS = 60_000;

/** The request log (issue 30): records every /v2 request an account makes, and serves it. */
export function createRequestLogModule(options: RequestLogOptions): RequestLogModule {
  const clock = options.clock ?? systemClock;
  const repository = new RequestLogRepository(options.db);
  let lastWarning = -Infinity;
  const warn = (message: string) => {
    // One line a minute at most: a full queue under load would otherwise log per request.
    if (clock.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = clock.now();
    options.warn?.(message);
  };
  const watcher = new HeadWatcher<LogMark, number>({
    log: { head: () => repository.head(), beyond: (from, limit) => repository.beyond(from ?? 0, limit), positionOf: (mark) => mark.id },
    afterCommit: options.afterCommit,
    maxHeldPerAccount: options.maxHeldPerAccount,
    instead: 'Poll without wait, or end another held request.',
    intervalMs: options.watchIntervalMs,
    onError: (error) => warn(`request log watcher: ${error instanceof Error ? error.message : String(error)}`),
  });
  const writer = options.thread ? new ThreadWriter(options.thread.location, options.thread.committed) : eventLoopWriter(repository);
  const recorder = new RequestLogRecorder<Capture>({
    // Not the child of whichever request's answer queued the first entry: a batch serves many.
    write: (captures) => (options.tracer ?? noTracing).inRootSpan('request-log.write', { 'fromagerie.entries': captures.length }, () => writer.write(captures)),
    capacity: options.queueCapacity ?? 10_000,
    batchSize: BATCH,
    flushMs: options.flushMs ?? 100,
    warn,
  });
  const service = new RequestLogService({ repository, cursors: options.cursors, watcher });
  // The answer's body as sent, for the entry made once the answer is done.
  const answers = new WeakMap<FastifyRequest, string | null>();
  // Fastify makes a new routeOptions object at each read: the route is read once per check.
  const recordedRoute = (request: FastifyRequest): { route: string | undefined } | undefined => {
    if (!options.enabled || request.principal === null || !request.url.startsWith('/v2/')) return undefined;
    const route = request.routeOptions.url;
    return isLogRead(route) ? undefined : { route };
  };

  return {
    name: 'requestLog',
    routes: async (app) => {
      app.addHook('preClose', async () => watcher.close());
      await app.register(requestLogRoutes, { logs: service });
    },
    stages: [
      // A request no route takes (404, 405) is identified only when some module asks to see refusals.
      ...(options.enabled ? [{ name: 'request log: unrouted requests identified', at: 'refused' as const, hook: (_request: FastifyRequest, _reply: FastifyReply, next: () => void) => next() }] : []),
      {
        name: 'request log: the answer kept',
        at: 'answered',
        hook: (request, reply, payload, next) => {
          if (keepsBodies(options.bodies, reply.statusCode) && recordedRoute(request)) answers.set(request, answerBody(payload, String(reply.getHeader('content-type') ?? '')));
          next(null, payload);
        },
      },
    ],
    jobs: [
      {
        name: 'request-log-pruning',
        everyMs: 3_600_000,
        run: (now = clock.date()) => repository.prune(new Date(now.getTime() - options.retentionDays * 86_400_000).toISOString()),
      },
    ],
    provides: {
      logs: service,
      onResponse(request, reply) {
        const recorded = recordedRoute(request);
        if (!recorded) return;
        try {
          recorder.record(captureOf(request, reply, recorded.route, request.principal!, options.bodies, answers.get(request), clock));
        } catch (error) {
          // The answer is sent already; an entry that cannot be made is lost and counted like a dropped one.
          recorder.lost(`request log: an entry could not be made (${error instanceof Error ? error.message : String(error)})`);
        }
      },
      counts: recorder.counts,
      flush: () => recorder.flush(),
      drain: () => watcher.close(),
      close: async () => {
        watcher.close();
        await recorder.close();
        await writer.close();
      },
    },
  };
}
