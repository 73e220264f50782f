import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionOf, type DashboardContext } from './dashboard.context.js';

/** A secret made by an action (a key, a webhook or client secret), shown on the next page once. */
export interface Reveal {
  label: string;
  secret: string;
  note?: string;
}

const cookieOf = (context: DashboardContext) => `${context.cookieName}_reveal`;
const cookieOptions = (context: DashboardContext) => ({ path: '/dashboard', httpOnly: true, sameSite: 'strict' as const, secure: context.secureCookies });

/**
 * Every action answers 303, so the page that shows a new secret is the next GET. The secret
 * travels there in a short-lived cookie sealed to this session (AES-GCM under APP_SECRET),
 * which that page clears as it reads it: a reload shows nothing, and no other session can open it.
 */
export function revealOnce(context: DashboardContext, request: FastifyRequest, reply: FastifyReply, reveal: Reveal): void {
  const sealed = context.reveals.seal(JSON.stringify(reveal), `session:${sessionOf(request).id}`);
  reply.setCookie(cookieOf(context), sealed, { ...cookieOptions(context), maxAge: 120 });
}

export function takeReveal(context: DashboardContext, request: FastifyRequest, reply: FastifyReply): Reveal | undefined {
  const sealed = request.cookies[cookieOf(context)];
  if (!sealed) return undefined;
  reply.clearCookie(cookieOf(context), cookieOptions(context));
  try {
    return JSON.parse(context.reveals.open(sealed, `session:${sessionOf(request).id}`)) as Reveal;
  } catch {
    return undefined;
  }
}
