export const ENVIRONMENTS = ['development', 'sandbox', 'production'] as const;
/** `CHEESE_ENV`: decides `sk_test_` vs `sk_live_` keys and what production refuses to start without. */
export type CheeseEnv = (typeof ENVIRONMENTS)[number];
