import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionOf, type DashboardContext } from './dashboard.context.js';
import { REVEAL_SECONDS } from './reveal.service.js';

/** A secret made by an action (a key, a webhook or client secret), shown on the next page once. */
export interface Reveal {
  label: string;
  secret: string;
  note?: string;
}

/** What a page shows of a reveal: the secret, or (a cookie sent again, or too late) that it is gone. */
export interface RevealView {
  reveal: Reveal | undefined;
  revealGone: boolean;
}

const cookieOf = (context: DashboardContext) => `${context.cookieName}_reveal`;
const cookieOptions = (context: DashboardContext) => ({ path: '/dashboard', httpOnly: true, sameSite: 'strict' as const, secure: context.secureCookies });

/**
 * Every action answers 303, so the page that shows a new secret is the next GET. The secret
 * travels there in a short-lived cookie sealed to this session (AES-GCM under APP_SECRET), with
 * a reveal id the server records (dashboard_reveals, its hash only): the first page that opens
 * it consumes it, so a reload, a replayed cookie or one kept past its time shows nothing.
 */
export async function revealOnce(context: DashboardContext, request: FastifyRequest, reply: FastifyReply, reveal: Reveal): Promise<void> {
  const session = sessionOf(request);
  const id = await context.revealLedger.open(session.id);
  const sealed = context.reveals.seal(JSON.stringify({ id, reveal }), `session:${session.id}`);
  reply.setCookie(cookieOf(context), sealed, { ...cookieOptions(context), maxAge: REVEAL_SECONDS });
}

export async function takeReveal(context: DashboardContext, request: FastifyRequest, reply: FastifyReply): Promise<RevealView> {
  const sealed = request.cookies[cookieOf(context)];
  if (!sealed) return { reveal: undefined, revealGone: false };
  reply.clearCookie(cookieOf(context), cookieOptions(context));
  const session = sessionOf(request);
  let opened: { id: string; reveal: Reveal };
  try {
    opened = JSON.parse(context.reveals.open(sealed, `session:${session.id}`)) as { id: string; reveal: Reveal };
  } catch {
    // Another session's, or altered: nothing of it is this page's business.
    return { reveal: undefined, revealGone: false };
  }
  if (typeof opened.id !== 'string' || !(await context.revealLedger.consume(opened.id, session.id))) return { reveal: undefined, revealGone: true };
  return { reveal: opened.reveal, revealGone: false };
}
