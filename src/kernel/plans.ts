/** Rate-limit plans (decisions.md §7): new customers are on Free, staff on Enterprise. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
