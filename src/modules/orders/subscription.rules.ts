/** The hour (UTC) of the day a month's order is placed. */
export const ORDER_HOUR_UTC = 9;

/** The first `dayOfMonth` at 09:00 UTC strictly after `after`: when a subscription's next order is placed. */
export function nextMonthlyRun(after: Date, dayOfMonth: number): Date {
  const candidate = new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), dayOfMonth, ORDER_HOUR_UTC));
  if (candidate.getTime() > after.getTime()) return candidate;
  return new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth() + 1, dayOfMonth, ORDER_HOUR_UTC));
}
