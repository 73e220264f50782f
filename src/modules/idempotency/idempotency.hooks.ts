import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fromAsync, type ModuleStage, type RouteFilter } from '../../kernel/request-stage.js';
import type { DB } from '../../db/schema.js';
import { ConflictError, InvalidRequestError, ValidationFailedError } from '../../kernel/errors.js';
import type { IdempotencyRepository } from './idempotency.repository.js';
import type { HeldKeys } from './idempotency.leases.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A creating POST that honours `Idempotency-Key` (decisions.md §5). `'secret'`: its
     * successful reply holds a secret shown once, which is never stored nor replayed.
     */
    idempotent?: boolean | 'secret';
  }
  interface FastifyRequest {
    idempotencyRecord?: number;
    createdNoted?: boolean;
  }
}

/** 1 to 255 visible ASCII characters. */
const KEY = /^[\x21-\x7e]{1,255}$/;
/** What a replay repeats besides the body. */
const REPLAYED = ['content-type', 'location', 'etag', 'cache-control'];

export interface IdempotencyOptions {
  keys: IdempotencyRepository;
  /** How long a key is remembered (24 h by default). */
  ttlMs: number;
  /** The keys of this instance's running requests, renewed while they run (their lease: `leases.leaseMs`). */
  leases: HeldKeys;
  clock?: Clock;
}

/** JSON with every object's keys sorted: the same body with its keys reordered is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256').update(canonicalJson([request.method, request.routeOptions.url, request.params ?? null, request.body ?? null])).digest('hex');
}

/** The credential a stored reply is kept for: only the one that made the first request is answered with it. */
function credentialOf(request: FastifyRequest): string {
  const principal = request.principal;
  return principal ? `${principal.credential.kind}:${principal.credential.id}` : 'anonymous';
}

/**
 * `Idempotency-Key` on the routes that declare `config.idempotent`: the same key and request
 * within the TTL replays the first answer (`Idempotent-Replayed: true`) and runs nothing; the
 * same key with another request is 422; while the first is still running, 409. Keys belong to
 * the caller: the account, or the address for anonymous sign-ups. 2xx and 4xx answers are kept
 * (except 409 and 429, which a retry may see change); a 5xx releases the key, so the client
 * can retry. The record is written when the first request starts and completed when its
 * answer is sent. A service that creates a resource notes it on the record in its own
 * transaction (ChangeContext.created): a retry after a crash between that commit and the
 * answer is answered with the resource (recover), never creating it twice. Without such a
 * note, a key left running by a dead instance is taken over once its lease runs out (a short
 * lease its instance renews while the request runs, so seconds after a crash; see HeldKeys),
 * and the request runs again; a closing instance releases the keys it still holds.
 *
 * A replay is authorized like a new request (issue 16 §2): it runs after authentication and
 * the route's authorization, and only the credential that made the first request is answered
 * with its reply (another credential of the account gets 409). A reply that held a secret
 * (`config.idempotent: 'secret'`) is never stored: its retry is a 409 naming what was created.
 * A stored reply belongs to the account whose data it holds and is deleted with it.
 */
export function idempotencyStages(options: IdempotencyOptions): ModuleStage[] {
  const { keys, leases } = options;
  const clock = options.clock ?? systemClock;
  const { leaseMs } = leases;
  const routes: RouteFilter = (route) => Boolean(route.config?.idempotent);

  const holdsSecret = (request: FastifyRequest) => request.routeOptions.config.idempotent === 'secret';

  async function begin(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return undefined;
    if (typeof header !== 'string' || !KEY.test(header)) throw new InvalidRequestError('Idempotency-Key must be 1 to 255 visible ASCII characters, sent once.', [{ field: 'Idempotency-Key', message: 'is invalid' }]);
    const scope = request.principal ? `account:${request.principal.accountId}` : `address:${request.ip}`;
    const credential = credentialOf(request);
    const print = fingerprint(request);
    for (let attempt = 0; attempt < 4; attempt++) {
      const now = clock.now();
      const id = await keys.claim({ scope, key: header, fingerprint: print, credential, accountId: request.principal?.accountId ?? null, now: new Date(now).toISOString(), leaseMs, expiresAt: new Date(now + options.ttlMs).toISOString() });
      if (id !== undefined) {
        own(request, id);
        return undefined;
      }
      const existing = await keys.find(scope, header);
      if (!existing) continue; // released meanwhile: claim again
      if (existing.expiresAt <= now) {
        await keys.release(existing.id);
        continue;
      }
      if (existing.fingerprint !== print) {
        throw new ValidationFailedError('This Idempotency-Key was used for a different request: use a new key for a new request.', [{ field: 'Idempotency-Key', message: 'was used with another request' }]);
      }
      const location = existing.createdResource ?? existing.headers.location;
      if (existing.credential !== credential) {
        throw conflict('This Idempotency-Key was used by another credential of this account, and its answer is given only to that credential: use a new key.', location);
      }
      if (existing.replyWithheld || (existing.createdResource !== null && holdsSecret(request))) {
        throw conflict('The first request with this Idempotency-Key succeeded, and the secret it answered with was shown once and is not kept: use what it created, or revoke it and create another with a new key.', location);
      }
      if (existing.state === 'done') {
        return reply.code(existing.statusCode!).headers({ ...existing.headers, 'idempotent-replayed': 'true' }).send(existing.body ?? '');
      }
      // Committed, but its answer never recorded (its instance died, or it is being sent):
      // answer with what it created, never create it again.
      if (existing.createdResource !== null) return recover(request, reply, existing.id, existing.createdResource);
      if (!existing.leaseOver) {
        const error = new ConflictError('A request with this Idempotency-Key is still being processed: retry in a moment.');
        error.headers['retry-after'] = '1';
        throw error;
      }
      // Its instance is gone: the record goes, and the next round claims the key under a new id.
      await keys.releaseLapsed(existing.id);
    }
    throw new ConflictError('A request with this Idempotency-Key is still being processed: retry in a moment.');
  }

  function conflict(message: string, location: string | undefined): ConflictError {
    const error = new ConflictError(location ? `${message} It created ${location}.` : message);
    if (location) error.headers.location = location;
    return error;
  }

  function own(request: FastifyRequest, id: number): void {
    request.idempotencyRecord = id;
    leases.hold(id);
    request.noteCreated = (trx, resourcePath, ownerAccountId) => {
      request.createdNoted = true;
      return keys.markCreated(trx as Transaction<DB>, id, resourcePath, ownerAccountId);
    };
  }

  /** The first answer, rebuilt from the created resource as the caller reads it now: 201 with its Location. */
  async function recover(request: FastifyRequest, reply: FastifyReply, id: number, resourcePath: string): Promise<FastifyReply> {
    const credentials: Record<string, string> = {};
    for (const name of ['authorization', 'x-api-key']) {
      const value = request.headers[name];
      if (typeof value === 'string') credentials[name] = value;
    }
    const read = await request.server.inject({ method: 'GET', url: resourcePath, headers: { ...credentials, accept: 'application/json' } });
    if (read.statusCode !== 200) throw conflict('The first request with this Idempotency-Key succeeded; read what it created there.', resourcePath);
    const headers: Record<string, string> = { location: resourcePath };
    for (const name of REPLAYED) {
      const value = read.headers[name];
      if (name !== 'location' && typeof value === 'string') headers[name] = value;
    }
    await keys.completeIfRunning(id, { statusCode: 201, headers, body: read.body, withheld: false });
    return reply.code(201).headers({ ...headers, 'idempotent-replayed': 'true' }).send(read.body);
  }

  async function finish(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const id = request.idempotencyRecord;
    if (id === undefined) return payload;
    request.idempotencyRecord = undefined;
    try {
      return await record(request, reply, payload, id);
    } catch (err) {
      // The answer stands: it says what happened (a creation it reports is noted on the record
      // in its own transaction, so a retry recovers it). Failing it here would replace it with
      // Fastify's bare error body. The record stays running and comes free when its lease ends.
      request.log.warn({ err }, 'could not record the Idempotency-Key answer; the key comes free when its lease ends');
      return payload;
    } finally {
      // Completed, released, or (the database failing) left to its lease: no longer renewed.
      leases.drop(id);
    }
  }

  async function record(request: FastifyRequest, reply: FastifyReply, payload: unknown, id: number): Promise<unknown> {
    const status = reply.statusCode;
    if (status >= 500 || status === 409 || status === 429 || (typeof payload !== 'string' && payload !== null && payload !== undefined)) {
      // A failure after something was noted as created keeps the key: whether that creation
      // committed is the database's to say, and a retry reads it there (recover).
      if (!(status >= 500 && request.createdNoted)) await keys.release(id);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const withheld = status < 300 && holdsSecret(request);
    await keys.complete(id, { statusCode: status, headers, body: withheld || typeof payload !== 'string' ? '' : payload, withheld });
    return payload;
  }

  return [
    { name: 'Idempotency-Key replay', at: 'handler', routes, hook: fromAsync(async (request, reply) => ((await begin(request, reply)) ? 'answered' : undefined)) },
    { name: 'Idempotency-Key record', at: 'sent', routes, hook: (request, reply, payload, next) => void finish(request, reply, payload).then((kept) => next(null, kept), next) },
  ];
}
