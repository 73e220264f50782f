import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FeatureModule } from '../../kernel/module.js';
import type { Keys } from '../../kernel/key-ring.js';
import { SecretBox } from '../../kernel/secret-box.js';
import type { DashboardContext } from './dashboard.context.js';
import { dashboardRoutes } from './dashboard.routes.js';
import { RevealRepository } from './reveal.repository.js';
import { RevealLedger } from './reveal.service.js';

/** The context the pages get, less what is derived here from the deployment's settings. */
export type DashboardOptions = Omit<DashboardContext, 'secureCookies' | 'cacheTemplates' | 'reveals' | 'revealLedger'> & {
  /** PUBLIC_URL: its scheme decides whether cookies are Secure. */
  publicUrl: string;
  /** The key ring's 'dashboard-reveals' keys: secrets on their way to the page that shows them are sealed under them. */
  revealKeys: Keys;
  /** Its own table only: dashboard_reveals. */
  db: Kysely<DB>;
};

export type DashboardModule = FeatureModule<Record<string, never>>;

/** The developer dashboard at /dashboard (issue 19): pages over the other modules' services; it offers nothing to them. */
export function createDashboardModule({ db, revealKeys, ...options }: DashboardOptions): DashboardModule {
  const revealLedger = new RevealLedger(new RevealRepository(db), options.clock);
  return {
    name: 'dashboard',
    rootRoutes: dashboardRoutes({
      ...options,
      secureCookies: options.publicUrl.startsWith('https:'),
      cacheTemplates: options.environment === 'production',
      reveals: new SecretBox(revealKeys),
      revealLedger,
    }),
    jobs: [{ name: 'dashboard-reveal-pruning', everyMs: 3_600_000, run: (now) => revealLedger.prune(now) }],
    provides: {},
  };
}
