import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CheeseEnv } from '../../kernel/environment.js';
import type { Plan } from '../../kernel/plans.js';
import type { SecretBox } from '../../kernel/secret-box.js';
import type { Keys } from '../../kernel/key-ring.js';
import type { RevealLedger } from './reveal.service.js';
import type { AccountService, ApiKeyService, BrowserSession, BrowserSessionService, OAuthClientService } from '../identity/identity.module.js';
import type { OrderService } from '../orders/orders.module.js';
import type { OAuthGrantService } from '../oauth/oauth.module.js';
import type { BucketUsage } from '../limits/limits.module.js';
import type { DeliveryInsightsService, EventDeliveryService, WebhookService } from '../webhooks/webhooks.module.js';
import type { EventService } from '../events/events.module.js';
import type { RequestLogService } from '../request-log/request-log.module.js';
import { type Clock } from '../../kernel/clock.js';

/** What the dashboard's pages are built from: other modules' services, reached through their entries. */
export interface DashboardContext {
  environment: CheeseEnv;
  /** The key ring's 'page-csrf' keys (src/http/pages.ts). */
  csrfKeys: Keys;
  secureCookies: boolean;
  cookieName: string;
  cacheTemplates: boolean;
  /** The app's clock (src/kernel/clock.ts): every "3 min ago" is measured from it, so tests move it. */
  clock: Clock;
  sessions: BrowserSessionService;
  apiKeys: ApiKeyService;
  accounts: AccountService;
  /** What is left of an account's rate-limit buckets now (nothing spent). */
  usage: (accountId: number, plan: Plan) => Promise<BucketUsage[]>;
  webhooks: WebhookService;
  /** The event log (GET /v2/events), and one event across the webhooks (its deliveries, Resend). */
  events: EventService;
  eventDeliveries: EventDeliveryService;
  /** The request log (GET /v2/request-logs; the overview's requests per hour). */
  requestLogs: RequestLogService;
  orders: OrderService;
  /** Deliveries summed: of an order's events, and over the overview's window (webhooks module). */
  deliveryInsights: DeliveryInsightsService;
  /** Cheeses a test order may pick (available, priced, in stock), by name (the catalogue). */
  orderableCheeses: () => Promise<{ id: number; name: string; pricePerKg: number | null }[]>;
  oauthClients: OAuthClientService;
  /** The OAuth applications an account authorized (the oauth module). */
  grants: OAuthGrantService;
  /** Seals a secret on its way to the one page that shows it. */
  reveals: SecretBox;
  /** Records each reveal, so the first page that shows it consumes it. */
  revealLedger: RevealLedger;
}

export interface NavLink {
  href: string;
  label: string;
  current: boolean;
}

/** The sections, in the order of the navigation; some only for customers or only for staff. */
const SECTIONS: { key: string; href: string; label: string; for: 'all' | 'customer' | 'admin' }[] = [
  { key: 'overview', href: '/dashboard', label: 'Overview', for: 'all' },
  { key: 'keys', href: '/dashboard/keys', label: 'API keys', for: 'all' },
  { key: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks', for: 'all' },
  { key: 'events', href: '/dashboard/events', label: 'Events', for: 'all' },
  { key: 'logs', href: '/dashboard/logs', label: 'Logs', for: 'all' },
  { key: 'orders', href: '/dashboard/orders', label: 'Orders', for: 'all' },
  { key: 'apps', href: '/dashboard/apps', label: 'Authorized apps', for: 'customer' },
  { key: 'oauth-clients', href: '/dashboard/oauth-clients', label: 'OAuth clients', for: 'admin' },
];

/** The session of a page behind the sign-in (the preHandler sent everyone else away). */
export function sessionOf(request: FastifyRequest): BrowserSession {
  const session = request.browserSession;
  if (!session) throw new Error('dashboard page reached without a session');
  return session;
}

/** What every page's layout shows: title, environment banner, who is signed in, navigation, the CSRF token. */
export function layoutOf(context: DashboardContext, request: FastifyRequest, reply: FastifyReply, title: string, section?: string) {
  const session = request.browserSession;
  const live = context.environment === 'production';
  return {
    title,
    live,
    banner: live ? 'Live' : 'Test environment',
    session: session && { username: session.username, staff: session.role === 'admin' },
    nav: session ? SECTIONS.filter((s) => s.for === 'all' || s.for === session.role).map((s) => ({ href: s.href, label: s.label, current: s.key === section })) : [],
    csrf: reply.csrfToken(),
  };
}
