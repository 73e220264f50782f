/**
 * How one instance shares its delivery slots (issue 16 §5). A slot is held for a whole
 * attempt, up to WEBHOOK_TIMEOUT_MS, and cannot be taken back: so caps, not priorities, are
 * what keep one account's hanging receivers from holding everyone's slots. Per webhook
 * (`endpointConcurrency`) alone was not enough: an account with ten webhooks held ten times
 * that. Within the caps, slots go round-robin between accounts (`pickFairly`).
 */
export interface SlotCaps {
  concurrency: number;
  endpointConcurrency: number;
  accountConcurrency: number;
}

/** What one claim may take, given what is in flight. */
export interface ClaimBounds {
  /** Free slots on the instance: the most this claim takes. */
  limit: number;
  /** The per-webhook cap; never above the per-account one, which would bound it anyway. */
  endpointCap: number;
  accountCap: number;
  /** Attempts in flight, so an account's n-th slot goes before anyone's (n+1)-th across claims too. */
  webhookLoad: ReadonlyMap<number, number>;
  accountLoad: ReadonlyMap<number, number>;
  /** At their cap: their deliveries need not even be read. */
  fullWebhooks: number[];
  fullAccounts: number[];
}

/** The default per-account cap: a quarter of the slots, so it takes four accounts with stuck receivers to fill an instance. */
export function defaultAccountConcurrency(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 4));
}

/** Attempts in flight on this instance: in all, per webhook and per account. */
export class Slots {
  readonly #webhooks = new Map<number, number>();
  readonly #accounts = new Map<number, number>();
  #total = 0;

  get total(): number {
    return this.#total;
  }

  take(webhookId: number, accountId: number): void {
    this.#total += 1;
    bump(this.#webhooks, webhookId, 1);
    bump(this.#accounts, accountId, 1);
  }

  release(webhookId: number, accountId: number): void {
    this.#total -= 1;
    bump(this.#webhooks, webhookId, -1);
    bump(this.#accounts, accountId, -1);
  }

  /** What a claim may take now; null when every slot is taken. */
  bounds(caps: SlotCaps): ClaimBounds | null {
    const limit = caps.concurrency - this.#total;
    if (limit <= 0) return null;
    const endpointCap = Math.min(caps.endpointConcurrency, caps.accountConcurrency);
    const full = (load: Map<number, number>, cap: number) => [...load].filter(([, count]) => count >= cap).map(([id]) => id);
    return {
      limit,
      endpointCap,
      accountCap: caps.accountConcurrency,
      webhookLoad: new Map(this.#webhooks),
      accountLoad: new Map(this.#accounts),
      fullWebhooks: full(this.#webhooks, endpointCap),
      fullAccounts: full(this.#accounts, caps.accountConcurrency),
    };
  }
}

function bump(counts: Map<number, number>, id: number, by: number): void {
  const count = (counts.get(id) ?? 0) + by;
  if (count <= 0) counts.delete(id);
  else counts.set(id, count);
}

/** A due delivery, as the claim's window sees it. */
export interface DueRow {
  id: number;
  webhookId: number;
  accountId: number;
  /** ISO time: the order within a turn. */
  dueAt: string;
}

/** Due deliveries of one webhook beyond the window, counted but not listed; all newer than the window's. */
export interface HiddenQueue {
  webhookId: number;
  accountId: number;
  count: number;
  oldest: string;
}

export interface FairPlan {
  /** Window rows to claim. */
  ids: number[];
  /** How many of each hidden webhook's oldest due deliveries to claim. */
  hidden: Map<number, number>;
  taken: number;
  /** The highest account turn given: 1 when every slot went to an account with nothing in flight. */
  topTurn: number;
}

/**
 * Round-robin between accounts: each slot goes to the account whose turn is lowest (what it
 * has in flight, plus one), its oldest delivery first, the older delivery winning a tie; a
 * webhook or account at its cap is passed over. So no account gets its n-th slot while another
 * with due work waits for an earlier one.
 */
export function pickFairly(window: readonly DueRow[], hidden: readonly HiddenQueue[], bounds: ClaimBounds): FairPlan {
  interface Entry { id: number | null; dueAt: string }
  const accounts = new Map<number, Map<number, Entry[]>>();
  const queueOf = (accountId: number, webhookId: number) => {
    const webhooks = accounts.get(accountId) ?? accounts.set(accountId, new Map()).get(accountId)!;
    return webhooks.get(webhookId) ?? webhooks.set(webhookId, []).get(webhookId)!;
  };
  for (const row of window) queueOf(row.accountId, row.webhookId).push({ id: row.id, dueAt: row.dueAt });
  // The window's rows are older than any hidden one, and come first in a tie (id null sorts last).
  for (const queue of hidden) queueOf(queue.accountId, queue.webhookId).push(...Array.from({ length: Math.min(queue.count, bounds.endpointCap) }, () => ({ id: null, dueAt: queue.oldest })));

  const plan: FairPlan = { ids: [], hidden: new Map(), taken: 0, topTurn: 0 };
  const byAccount = new Map<number, number>();
  const byWebhook = new Map<number, number>();
  const inFlight = (load: ReadonlyMap<number, number>, taken: Map<number, number>, id: number) => (load.get(id) ?? 0) + (taken.get(id) ?? 0);
  const earlier = (a: Entry, b: Entry) => a.dueAt < b.dueAt || (a.dueAt === b.dueAt && (a.id ?? Infinity) < (b.id ?? Infinity));
  while (plan.taken < bounds.limit) {
    let best: { turn: number; entry: Entry; accountId: number; webhookId: number; queue: Entry[] } | undefined;
    for (const [accountId, webhooks] of accounts) {
      const turn = inFlight(bounds.accountLoad, byAccount, accountId) + 1;
      if (turn > bounds.accountCap || (best && turn > best.turn)) continue;
      for (const [webhookId, queue] of webhooks) {
        const entry = queue[0];
        if (!entry || inFlight(bounds.webhookLoad, byWebhook, webhookId) >= bounds.endpointCap) continue;
        if (!best || turn < best.turn || earlier(entry, best.entry)) best = { turn, entry, accountId, webhookId, queue };
      }
    }
    if (!best) break;
    best.queue.shift();
    byAccount.set(best.accountId, (byAccount.get(best.accountId) ?? 0) + 1);
    byWebhook.set(best.webhookId, (byWebhook.get(best.webhookId) ?? 0) + 1);
    if (best.entry.id === null) plan.hidden.set(best.webhookId, (plan.hidden.get(best.webhookId) ?? 0) + 1);
    else plan.ids.push(best.entry.id);
    plan.taken += 1;
    plan.topTurn = Math.max(plan.topTurn, best.turn);
  }
  return plan;
}

/**
 * Whether the window may hide an account the plan wrongs, and then which accounts a look past
 * the window can leave out (besides those at their cap). Nobody is hidden when the window held
 * every due delivery. When the plan fills every slot with first turns, a hidden account would
 * only tie, and lose on age. Otherwise the accounts the window showed are known, and when the
 * slots are all given, so is any account whose next turn comes after the plan's highest.
 */
export function hiddenToFind(window: readonly DueRow[], windowSize: number, plan: FairPlan, bounds: ClaimBounds): number[] | null {
  if (window.length < windowSize) return null;
  const filled = plan.taken === bounds.limit;
  if (filled && plan.topTurn <= 1) return null;
  const known = new Set(window.map((row) => row.accountId));
  if (filled) for (const [accountId, load] of bounds.accountLoad) if (load >= plan.topTurn) known.add(accountId);
  return [...known];
}
