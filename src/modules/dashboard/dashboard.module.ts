import type { FeatureModule } from '../../kernel/module.js';
import { SecretBox } from '../../kernel/secret-box.js';
import type { DashboardContext } from './dashboard.context.js';
import { dashboardRoutes } from './dashboard.routes.js';

/** The context the pages get, less what is derived here from the deployment's settings. */
export type DashboardOptions = Omit<DashboardContext, 'secureCookies' | 'cacheTemplates' | 'reveals'> & {
  /** PUBLIC_URL: its scheme decides whether cookies are Secure. */
  publicUrl: string;
};

export type DashboardModule = FeatureModule<Record<string, never>>;

/** The developer dashboard at /dashboard (issue 19): pages over the other modules' services; it offers nothing to them. */
export function createDashboardModule(options: DashboardOptions): DashboardModule {
  return {
    name: 'dashboard',
    rootRoutes: dashboardRoutes({
      ...options,
      secureCookies: options.publicUrl.startsWith('https:'),
      cacheTemplates: options.environment === 'production',
      reveals: new SecretBox(options.appSecret, 'dashboard-reveals'),
    }),
    jobs: [],
    provides: {},
  };
}
