import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { DashboardContext } from './dashboard.context.js';
import { stepUp, stepUpDue, type Confirmation } from './step-up.js';

/** An action that makes a credential, or something that can mint one: its route and its confirmation page. */
export interface CredentialAction {
  /** The route as Fastify registers it, prefix included. */
  url: string;
  title: string;
  question: string;
  /** Where Cancel goes; `:id` is the route's own. */
  cancel: string;
}

/**
 * Every dashboard action that creates a credential or something that can mint one: each asks
 * for the password again once the sign-in is over 10 minutes old, in every environment (a test
 * deployment's admin token opens that deployment). Enforced here, not by each page: the guard
 * is added to these routes as they are registered.
 */
export const CREDENTIAL_ACTIONS: readonly CredentialAction[] = [
  { url: '/dashboard/keys', title: 'Create key', question: 'Create this API key? It is shown once.', cancel: '/dashboard/keys' },
  { url: '/dashboard/keys/:id/roll', title: 'Roll key', question: 'Roll this key? Its replacement is shown once.', cancel: '/dashboard/keys' },
  {
    url: '/dashboard/oauth-clients',
    title: 'Register client',
    question: 'Register this OAuth client? A confidential client gets a secret, shown once, that obtains tokens with the scopes ticked.',
    cancel: '/dashboard/oauth-clients',
  },
  { url: '/dashboard/webhooks', title: 'Add webhook', question: 'Add this webhook? Its signing secret is shown once.', cancel: '/dashboard/webhooks' },
  {
    url: '/dashboard/webhooks/:id/rotate-secret',
    title: 'Rotate secret',
    question: 'Rotate the signing secret of this webhook? The new secret is shown once; the old one keeps signing deliveries for 24 hours.',
    cancel: '/dashboard/webhooks/:id',
  },
];

/**
 * Every other unsafe route of the dashboard, which makes no credential. A route in neither
 * list stops the app at start-up: whoever adds a form decides which list it belongs to.
 */
export const OTHER_ACTIONS: readonly string[] = [
  '/dashboard/login',
  '/dashboard/logout',
  '/dashboard/keys/:id/revoke',
  '/dashboard/oauth-clients/:id/delete',
  '/dashboard/apps/:clientId/revoke',
  '/dashboard/orders/:id/advance',
  '/dashboard/events/:id/resend',
  '/dashboard/orders/new',
  '/dashboard/webhooks/:id/edit',
  '/dashboard/webhooks/:id/enable',
  '/dashboard/webhooks/:id/disable',
  '/dashboard/webhooks/:id/test',
  '/dashboard/webhooks/:id/delete',
  '/dashboard/webhooks/:id/dead-letters/:deliveryId/replay',
  '/dashboard/webhooks/dead-letters/replay-selected',
  '/dashboard/webhooks/dead-letters/replay-all',
];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Fields the confirmation posts itself, never again as hidden ones. */
const OWN_FIELDS = new Set(['_csrf', 'password']);

/** The form as sent, posted again from the confirmation page with the password. */
function hiddenFieldsOf(body: unknown): { name: string; value: string }[] {
  if (typeof body !== 'object' || body === null) return [];
  return Object.entries(body).flatMap(([name, value]) =>
    OWN_FIELDS.has(name) ? [] : [value].flat().filter((v): v is string => typeof v === 'string').map((v) => ({ name, value: v })),
  );
}

function confirmationOf(action: CredentialAction, request: FastifyRequest): Confirmation {
  const params = request.params as Record<string, unknown>;
  const cancel = action.cancel.replace(/:([A-Za-z]+)/g, (_, name: string) => (Object.hasOwn(params, name) ? encodeURIComponent(String(params[name])) : ''));
  return { title: action.title, question: action.question, action: request.url, cancel, hidden: hiddenFieldsOf(request.body) };
}

function stepUpGuard(context: DashboardContext, action: CredentialAction): preHandlerAsyncHookHandler {
  return async function (request: FastifyRequest, reply: FastifyReply) {
    const gate = await stepUp(context, request, reply, true, confirmationOf(action, request));
    if (gate !== 'proceed') return gate;
  };
}

/** Whether a credential action's form should ask for the password at once. */
export function credentialStepUpDue(context: DashboardContext, request: FastifyRequest): boolean {
  return stepUpDue(context, request, true);
}

/**
 * Adds the step-up guard (a preHandler, after the CSRF check and the form's schema) to every
 * route of CREDENTIAL_ACTIONS registered in `scope` from now on, and refuses an unsafe route
 * in neither list. Answers the check to run once every page is registered: a listed action
 * that no route matched (renamed, say) protects nothing, and stops the app too.
 */
export function guardCredentialActions(
  scope: FastifyInstance,
  context: DashboardContext,
  lists: { actions: readonly CredentialAction[]; others: readonly string[] } = { actions: CREDENTIAL_ACTIONS, others: OTHER_ACTIONS },
): () => void {
  const actions = new Map(lists.actions.map((action) => [action.url, action]));
  const others = new Set(lists.others);
  const guarded = new Set<string>();
  scope.addHook('onRoute', (route) => {
    if ([route.method].flat().every((method) => SAFE_METHODS.has(method))) return;
    const action = actions.get(route.url);
    if (!action) {
      if (others.has(route.url)) return;
      throw new Error(`dashboard route ${String(route.method)} ${route.url} is in neither CREDENTIAL_ACTIONS nor OTHER_ACTIONS (src/modules/dashboard/credential-actions.ts)`);
    }
    route.preHandler = [...[route.preHandler ?? []].flat(), stepUpGuard(context, action)];
    guarded.add(action.url);
  });
  return () => {
    const unmatched = [...actions.keys()].filter((url) => !guarded.has(url));
    if (unmatched.length > 0) throw new Error(`credential actions with no route to guard: ${unmatched.join(', ')}`);
  };
}
