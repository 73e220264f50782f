import type { FastifyReply, FastifyRequest } from 'fastify';
import { layoutOf, sessionOf, type DashboardContext } from './dashboard.context.js';

/** The confirmation page of an action: its question, where it posts, what it posts again. */
export interface Confirmation {
  title: string;
  question: string;
  action: string;
  cancel: string;
  /** The action's own fields, posted again with the password. */
  hidden?: { name: string; value: string }[];
}

/**
 * Sensitive actions (a live key made, rolled or revoked; a secret rotated; a webhook deleted; a
 * bulk replay) ask for the password again when it was last given over 10 minutes ago. Answers
 * `proceed`, or the reply it sent: the confirmation page asking for the password (again, with
 * an error, when a wrong one was given).
 */
export async function stepUp(context: DashboardContext, request: FastifyRequest, reply: FastifyReply, sensitive: boolean, page: Confirmation): Promise<'proceed' | FastifyReply> {
  const session = sessionOf(request);
  if (!sensitive || !context.sessions.needsStepUp(session)) return 'proceed';
  const password = (request.body as { password?: unknown } | undefined)?.password;
  if (typeof password === 'string' && password !== '') {
    if (await context.sessions.stepUp(session, password, request.ip)) return 'proceed';
    reply.code(401);
    return reply.view('confirm', { ...layoutOf(context, request, reply, page.title), ...page, hidden: page.hidden ?? [], stepUp: true, error: 'That is not your password.' });
  }
  return reply.view('confirm', { ...layoutOf(context, request, reply, page.title), ...page, hidden: page.hidden ?? [], stepUp: true });
}

/** Whether the confirmation page should ask for the password at once. */
export function stepUpDue(context: DashboardContext, request: FastifyRequest, sensitive: boolean): boolean {
  return sensitive && context.sessions.needsStepUp(sessionOf(request));
}
