import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { checkCsrf } from '../../http/pages.js';
import { parseScopes, ROLE_SCOPES, SCOPE_DESCRIPTIONS, type Scope } from '../../kernel/scopes.js';
import { ValidationFailedError } from '../../kernel/errors.js';
import { CreateApiKeyBody, keyState, MAX_ACTIVE_KEYS, ROLL_GRACE_SECONDS, type ApiKeyRecord, type RollGraceSeconds } from '../identity/identity.module.js';
import { keyStatusBadge } from './badges.js';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';
import { checkForm } from './form-check.js';
import { formatTime, listOf, when } from './format.js';
import { revealOnce, takeReveal } from './reveal.js';
import { credentialStepUpDue } from './credential-actions.js';
import { stepUp, stepUpDue } from './step-up.js';

const DAY_MS = 86_400_000;
const EXPIRIES: Record<string, number | null> = { never: null, 7: 7 * DAY_MS, 30: 30 * DAY_MS, 90: 90 * DAY_MS };

/** A key's status as the list shows it: identity's state as a badge, and when it changed or ends. */
function statusOf(key: ApiKeyRecord, now: number) {
  const state = keyState(key, now);
  const detail = state === 'revoked' ? { label: '', at: when(key.revokedAt, now) } : state === 'retiring' ? { label: 'works until', at: when(key.expiresAt, now) } : null;
  return { badge: keyStatusBadge(state), detail, active: state === 'active', manageable: state === 'active' };
}

function shownAs(key: ApiKeyRecord): string {
  return `${key.keyPrefix}…${key.keyLast4 ?? ''}`;
}

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

/** The API keys page: list, create (shown once), roll, revoke (issue 19, page 2). */
export function keyRoutes(context: DashboardContext): FastifyPluginAsyncTypebox {
  const { apiKeys, clock } = context;
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
        created: when(key.createdAt, now),
        lastUsed: when(key.lastUsedAt, now, 'Never'),
        expires: when(key.expiresAt, now, 'Never'),
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
      const { body } = request;
      const scopes = [...new Set(listOf(body.scopes))];
      // The form's own words for what only a form can get wrong (a choice outside its list, no box ticked); the rest is the API's schema.
      if (!Object.hasOwn(EXPIRIES, body.expires)) throw ValidationFailedError.field('expires', 'must be one of: never, 7, 30, 90');
      if (scopes.length === 0) throw ValidationFailedError.field('scopes', 'needs at least one scope: tick the boxes of what the key may do');
      const session = sessionOf(request);
      const lifetime = EXPIRIES[body.expires];
      const input = { name: body.name.trim() || null, scopes: scopes as Scope[], expiresAt: lifetime ? new Date(clock.now() + lifetime).toISOString() : null };
      checkForm(CreateApiKeyBody, input);
      const created = await apiKeys.create({ accountId: session.accountId, role: session.role }, input, session.principal);
      await revealOnce(context, request, reply, { label: `Your new key "${created.name ?? ''}"`, secret: created.key });
      return reply.redirect('/dashboard/keys', 303);
    });

    const keyOf = async (request: FastifyRequest, id: number) => {
      const key = await apiKeys.get(sessionOf(request).accountId, id);
      return { id: key.id, name: key.name ?? '(unnamed)', shown: shownAs(key) };
    };

    scope.get('/keys/:id/roll', { schema: { params: IdParams } }, async (request, reply) =>
      reply.view('key-roll', { ...layoutOf(context, request, reply, 'Roll key', 'keys'), key: await keyOf(request, request.params.id), stepUp: credentialStepUpDue(context, request) }),
    );
    const RollForm = Type.Object({ _csrf: Type.String(), oldKeyExpires: Type.String(), password: Type.Optional(Type.String()) });
    scope.post('/keys/:id/roll', { schema: { params: IdParams, body: RollForm }, preValidation: csrf }, async (request, reply) => {
      const key = await keyOf(request, request.params.id);
      const grace = Number(request.body.oldKeyExpires);
      if (!ROLL_GRACE_SECONDS.includes(grace as RollGraceSeconds)) throw ValidationFailedError.field('oldKeyExpires', 'must be one of: Now, In 1 hour, In 24 hours, In 7 days');
      const session = sessionOf(request);
      const { created, old } = await apiKeys.roll(session.accountId, key.id, { oldKeyExpiresInSeconds: grace as RollGraceSeconds }, session.principal);
      await revealOnce(context, request, reply, { label: `The new key for "${created.name ?? ''}"`, secret: created.key, note: `The old key ${key.shown} works until ${formatTime(old.expiresAt)}.` });
      return reply.redirect('/dashboard/keys', 303);
    });

    const revokePage = (key: { id: number; shown: string }) => ({ title: 'Revoke key', question: `Revoke the key ${key.shown}? Every request made with it will be refused at once.`, action: `/dashboard/keys/${key.id}/revoke`, cancel: '/dashboard/keys' });
    scope.get('/keys/:id/revoke', { schema: { params: IdParams } }, async (request, reply) => {
      const key = await keyOf(request, request.params.id);
      return reply.view('confirm', { ...layoutOf(context, request, reply, 'Revoke key', 'keys'), ...revokePage(key), hidden: [], stepUp: stepUpDue(context, request, sensitive) });
    });
    scope.post('/keys/:id/revoke', { schema: { params: IdParams, body: Type.Object({ _csrf: Type.String(), password: Type.Optional(Type.String()) }) }, preValidation: csrf }, async (request, reply) => {
      const key = await keyOf(request, request.params.id);
      const gate = await stepUp(context, request, reply, sensitive, revokePage(key));
      if (gate !== 'proceed') return gate;
      const session = sessionOf(request);
      await apiKeys.revoke(session.accountId, key.id, session.principal);
      return reply.redirect('/dashboard/keys', 303);
    });
  };
}
