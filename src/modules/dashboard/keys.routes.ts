import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { isScope, parseScopes, ROLE_SCOPES, SCOPE_DESCRIPTIONS, type Scope } from '../../kernel/scopes.js';
import { ValidationFailedError } from '../../kernel/errors.js';
import { MAX_ACTIVE_KEYS, type ApiKeyRecord } from '../identity/identity.module.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { formatTime, listOf } from './format.js';
import { revealOnce, takeReveal } from './reveal.js';
import { credentialStepUpDue } from './credential-actions.js';
import { stepUp, stepUpDue } from './step-up.js';
import { systemClock } from '../../kernel/clock.js';

const DAY_MS = 86_400_000;
const EXPIRIES: Record<string, number | null> = { never: null, 7: 7 * DAY_MS, 30: 30 * DAY_MS, 90: 90 * DAY_MS };
const GRACES = [0, 3600, 86400, 604800] as const;

function statusOf(key: ApiKeyRecord, now: number): { status: string; active: boolean; manageable: boolean } {
  const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= now;
  if (key.revokedAt) return { status: `Revoked ${formatTime(key.revokedAt)}`, active: false, manageable: false };
  if (expired) return { status: 'Expired', active: false, manageable: false };
  if (key.rolledAt) return { status: `Rolled: works until ${formatTime(key.expiresAt)}`, active: false, manageable: false };
  return { status: 'Active', active: true, manageable: true };
}

function shownAs(key: ApiKeyRecord): string {
  return `${key.keyPrefix}…${key.keyLast4 ?? ''}`;
}

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

/** The API keys page: list, create (shown once), roll, revoke (issue 19, page 2). */
export function keyRoutes(context: DashboardContext): FastifyPluginAsync {
  const { apiKeys } = context;
  const clock = context.clock ?? systemClock;
  // Revoking a live key asks for the password after 10 minutes (in a test environment every key
  // is a test key); creating and rolling one are credential actions, guarded in every environment.
  const sensitive = context.environment === 'production';
  return async (scope) => {
    const csrf = checkCsrf(scope);

    const keysOf = async (request: FastifyRequest) => {
      const now = clock.now();
      const records = await apiKeys.listAll(sessionOf(request).accountId);
      const keys = records.map((key) => ({
        id: key.id,
        name: key.name ?? '(unnamed)',
        shown: shownAs(key),
        scopes: parseScopes(key.scopes).join(' '),
        createdAt: key.createdAt,
        created: formatTime(key.createdAt),
        lastUsed: formatTime(key.lastUsedAt, 'Never'),
        expires: formatTime(key.expiresAt, 'Never'),
        ...statusOf(key, now),
      }));
      return { keys, active: keys.filter((key) => key.active).length, max: MAX_ACTIVE_KEYS };
    };

    scope.get('/keys', async (request, reply) => {
      const reveal = await takeReveal(context, request, reply);
      return reply.view('keys', { ...layoutOf(context, request, reply, 'API keys', 'keys'), ...(await keysOf(request)), ...reveal });
    });

    const newKeyPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}) => {
      const session = sessionOf(request);
      const scopes = ROLE_SCOPES[session.role].map((name) => ({ name, id: name.replace(':', '-'), description: SCOPE_DESCRIPTIONS[name] }));
      return reply.view('key-new', { ...layoutOf(context, request, reply, 'Create key', 'keys'), ...(await keysOf(request)), scopes, stepUp: credentialStepUpDue(context, request), ...extra });
    };
    scope.get('/keys/new', async (request, reply) => newKeyPage(request, reply));

    const CreateForm = Type.Object({ _csrf: Type.String(), name: Type.String({ maxLength: 100 }), scopes: Type.Optional(Type.Unknown()), expires: Type.String(), password: Type.Optional(Type.String()) });
    scope.post('/keys', { schema: { body: CreateForm }, preValidation: csrf }, async (request, reply) => {
      const body = request.body as { name: string; scopes?: unknown; expires: string };
      const scopes = listOf(body.scopes);
      if (!Object.hasOwn(EXPIRIES, body.expires)) throw ValidationFailedError.field('expires', 'must be one of: never, 7, 30, 90');
      if (scopes.length === 0) throw ValidationFailedError.field('scopes', 'needs at least one scope: tick the boxes of what the key may do');
      if (!scopes.every(isScope)) throw ValidationFailedError.field('scopes', 'holds an unknown scope');
      const session = sessionOf(request);
      const lifetime = EXPIRIES[body.expires];
      const created = await apiKeys.create(
        { accountId: session.accountId, role: session.role },
        { name: body.name.trim() || null, scopes: scopes as Scope[], expiresAt: lifetime ? new Date(clock.now() + lifetime).toISOString() : null },
        session.principal,
      );
      await revealOnce(context, request, reply, { label: `Your new key "${created.name ?? ''}"`, secret: created.key });
      return reply.redirect('/dashboard/keys', 303);
    });

    const keyOf = async (request: FastifyRequest) => {
      const { id } = request.params as { id: number };
      const key = await apiKeys.get(sessionOf(request).accountId, id);
      return { id: key.id, name: key.name ?? '(unnamed)', shown: shownAs(key) };
    };

    scope.get('/keys/:id/roll', { schema: { params: IdParams } }, async (request, reply) =>
      reply.view('key-roll', { ...layoutOf(context, request, reply, 'Roll key', 'keys'), key: await keyOf(request), stepUp: credentialStepUpDue(context, request) }),
    );
    const RollForm = Type.Object({ _csrf: Type.String(), oldKeyExpires: Type.String(), password: Type.Optional(Type.String()) });
    scope.post('/keys/:id/roll', { schema: { params: IdParams, body: RollForm }, preValidation: csrf }, async (request, reply) => {
      const key = await keyOf(request);
      const grace = Number((request.body as { oldKeyExpires: string }).oldKeyExpires);
      if (!GRACES.includes(grace as (typeof GRACES)[number])) throw ValidationFailedError.field('oldKeyExpires', 'must be one of: Now, In 1 hour, In 24 hours, In 7 days');
      const session = sessionOf(request);
      const { created, old } = await apiKeys.roll(session.accountId, key.id, { oldKeyExpiresInSeconds: grace as (typeof GRACES)[number] }, session.principal);
      await revealOnce(context, request, reply, { label: `The new key for "${created.name ?? ''}"`, secret: created.key, note: `The old key ${key.shown} works until ${formatTime(old.expiresAt)}.` });
      return reply.redirect('/dashboard/keys', 303);
    });

    const revokePage = (key: { id: number; shown: string }) => ({ title: 'Revoke key', question: `Revoke the key ${key.shown}? Every request made with it will be refused at once.`, action: `/dashboard/keys/${key.id}/revoke`, cancel: '/dashboard/keys' });
    scope.get('/keys/:id/revoke', { schema: { params: IdParams } }, async (request, reply) => {
      const key = await keyOf(request);
      return reply.view('confirm', { ...layoutOf(context, request, reply, 'Revoke key', 'keys'), ...revokePage(key), hidden: [], stepUp: stepUpDue(context, request, sensitive) });
    });
    scope.post('/keys/:id/revoke', { schema: { params: IdParams, body: Type.Object({ _csrf: Type.String(), password: Type.Optional(Type.String()) }) }, preValidation: csrf }, async (request, reply) => {
      const key = await keyOf(request);
      const gate = await stepUp(context, request, reply, sensitive, revokePage(key));
      if (gate !== 'proceed') return gate;
      const session = sessionOf(request);
      await apiKeys.revoke(session.accountId, key.id, session.principal);
      return reply.redirect('/dashboard/keys', 303);
    });
  };
}
