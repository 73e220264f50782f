import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import { isCountryCode } from '../../kernel/countries.js';
import { ConflictError, ValidationFailedError, type FieldError } from '../../kernel/errors.js';
import type { CheeseDirectory, StockService } from '../catalogue/catalogue.module.js';
import type { PaymentGateway } from './order.adapters.js';
import type { OrderLifecycle } from './order.lifecycle.js';
import type { ItemRecord, OrderRecord, OrderRepository } from './order.repository.js';
import { orderTotals } from './order.rules.js';
import type { OrderActor, ShippingMethod } from './order.table.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

/** One requested line, with the body paths to name in errors. */
export interface PlacementLine {
  cheese: string | number;
  grams: number;
  field: string;
  quantityField: string;
}

/** An order as both forms (and subscriptions) request it, normalised. */
export interface Placement {
  lines: PlacementLine[];
  address: { street: string; city: string; state: string | null; zip: string | null; country: string };
  /** Where the address's country sits in the body, for errors. */
  countryField: string;
  method: ShippingMethod;
  notes: string | null;
}

/** A payment authorised, outside any transaction, for the total the order was quoted at. */
export interface Authorization {
  reference: string;
  totalCents: number;
}

/**
 * The order's total under lock is not the one authorised (a price changed since the quote, or
 * no quote could be made): the transaction rolls back, and `authorised` voids, authorises this
 * total and places again. Never reaches a client.
 */
export class RepriceNeeded extends Error {
  constructor(readonly totalCents: number) {
    super(`the order must be authorised for ${totalCents} cents`);
  }
}

/** Quote, authorise, place: a price that keeps changing under the order gives up after this many rounds (409). */
const MAX_AUTHORIZATION_ROUNDS = 3;

/** Who the order is for, and who placed it (a subscription's order is placed by the system). */
export interface OrderOwner {
  accountId: number;
  actor: OrderActor;
  /** The account's username when the caller knows it (the principal placing it): the order's `customer` without asking identity. */
  username?: string;
}

/**
 * Placing an order inside the caller's transaction: the request checked, stock reserved, the
 * order, its items, its first status and `order.placed` written, or an error and (the caller's
 * transaction rolled back) nothing at all (decisions.md §5). The payment is authorised before
 * that transaction, never inside it (`authorised`): a provider's network call must not hold
 * the stock rows' locks, and so every other order of those cheeses, for its duration.
 */
export class OrderPlacement {
  constructor(
    private readonly options: { orders: OrderRepository; lifecycle: OrderLifecycle; stock: StockService; cheeses: CheeseDirectory; payments: PaymentGateway; clock?: Clock },
  ) {}

  get #clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  /**
   * Runs `place` (a transaction that calls placeIn with the authorisation it is given) with the
   * payment authorised first, outside any transaction, for the total quoted from prices read
   * without locks. placeIn confirms the total under lock; when it differs (RepriceNeeded), or
   * whenever `place` fails, the authorisation is voided (the transaction rolled back: it pays
   * for nothing), and a new total is authorised and placed again.
   */
  async authorised<T>(executor: Kysely<DB>, placement: Placement, owner: OrderOwner, place: (authorization: Authorization | undefined) => Promise<T>): Promise<T> {
    const { payments } = this.options;
    const orderKey = `${owner.accountId}:${this.#clock.now()}`;
    let total = await this.#quote(executor, placement);
    for (let round = 1; ; round++) {
      const authorization = total === undefined ? undefined : { reference: (await payments.authorize({ orderKey, totalCents: total })).reference, totalCents: total };
      try {
        return await place(authorization);
      } catch (error) {
        // A void that fails leaves the authorisation to lapse at the provider; the order does not exist.
        if (authorization) await payments.void(authorization.reference).catch(() => undefined);
        if (!(error instanceof RepriceNeeded)) throw error;
        if (round >= MAX_AUTHORIZATION_ROUNDS) throw new ConflictError('Prices changed while the order was being placed; nothing was reserved or charged. Try again.');
        total = error.totalCents;
      }
    }
  }

  /** The total from prices read without locks; undefined when a line cannot be priced (placeIn then says why). */
  async #quote(executor: Kysely<DB>, placement: Placement): Promise<number | undefined> {
    const found = await this.options.cheeses.pricesOf(executor, placement.lines.map((line) => line.cheese));
    const priced: { grams: number; priceCents: number }[] = [];
    for (const [i, cheese] of found.entries()) {
      if (cheese?.priceCents == null) return undefined;
      priced.push({ grams: placement.lines[i]!.grams, priceCents: cheese.priceCents });
    }
    return orderTotals(priced, placement.method).totalCents;
  }

  async placeIn(trx: Transaction<DB>, placement: Placement, owner: OrderOwner, ctx: ChangeContext, authorization: Authorization | undefined): Promise<{ order: OrderRecord; items: ItemRecord[] }> {
    const { orders, lifecycle, stock } = this.options;
    const problems: FieldError[] = [];
    if (!isCountryCode(placement.address.country.toUpperCase())) problems.push({ field: placement.countryField, message: 'is not an ISO 3166-1 alpha-2 country code' });
    // Lines naming each cheese once by id need no lookup first (one round trip fewer): the
    // stock lock finds the unknown ones, reported exactly as the lookup would have.
    const direct = problems.length === 0 ? directLines(placement.lines) : undefined;
    const lines = direct ?? (await this.#resolve(trx, placement.lines, problems));
    if (problems.length > 0) throw invalid(problems);
    const reservation = await stock.reserve(trx, lines, ctx);
    if (direct && reservation.problems.some((p) => p.kind === 'unknown')) {
      const unknown = new Set(reservation.problems.flatMap((p) => (p.kind === 'unknown' ? [p.cheeseId] : [])));
      throw invalid(placement.lines.flatMap((line, i) => (unknown.has(direct[i]!.cheeseId) ? [{ field: `${line.field}.cheeseId`, message: 'no such cheese' }] : [])));
    }
    const field = (cheeseId: number) => placement.lines[lines.findIndex((l) => l.cheeseId === cheeseId)]!;
    const unavailable = reservation.problems.flatMap((p) => (p.kind === 'short' ? [] : [{ field: `${field(p.cheeseId).field}.cheeseId`, message: p.kind === 'unknown' ? 'no such cheese' : `${p.name} is ${p.status === 'unpriced' ? 'not for sale (no price)' : p.status}, not available` }]));
    if (unavailable.length > 0) throw new ValidationFailedError(`Some cheeses cannot be ordered: ${unavailable.map((p) => p.message).join('; ')}.`, unavailable);
    const short = reservation.problems.flatMap((p) => (p.kind === 'short' ? [{ field: field(p.cheeseId).quantityField, message: `${p.name}: ${p.availableGrams / 1000} kg in stock, ${p.requestedGrams / 1000} kg asked` }] : []));
    if (short.length > 0) throw new ConflictError(`Not enough stock: ${short.map((p) => p.message).join('; ')}. Nothing was reserved.`, short);

    const priced = lines.map((line, i) => ({ ...line, ...reservation.snapshots[i]! }));
    const totals = orderTotals(priced, placement.method);
    if (authorization?.totalCents !== totals.totalCents) throw new RepriceNeeded(totals.totalCents);
    const now = this.#clock.date();
    const placed = await orders.insertPlaced(
      trx,
      {
        account_id: owner.accountId,
        status: 'placed',
        shipping_method: placement.method,
        shipping_fee_cents: totals.feeCents,
        items_cents: totals.itemsCents,
        total_cents: totals.totalCents,
        ship_street: placement.address.street,
        ship_city: placement.address.city,
        ship_state: placement.address.state,
        ship_zip: placement.address.zip,
        ship_country: placement.address.country.toUpperCase(),
        notes: placement.notes,
        payment_reference: authorization.reference,
        next_step_at: lifecycle.dueAfter('placed', now),
        event_sequence: 1,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      },
      priced.map((line, position) => ({ position, cheese_id: line.cheeseId, cheese_slug: line.slug, cheese_name: line.name, grams: line.grams, price_cents: line.priceCents })),
      { status: 'placed', actor: owner.actor, note: 'payment authorised', at: now.toISOString() },
      owner.username,
    );
    await lifecycle.recordEvent(trx, placed.order, ctx, placed.items);
    return placed;
  }

  /** Lines with their cheese ids (one query for all); unknown cheeses and a cheese given twice are problems. */
  async #resolve(trx: Transaction<DB>, lines: readonly PlacementLine[], problems: FieldError[]): Promise<{ cheeseId: number; grams: number }[]> {
    const ids = await this.options.cheeses.idsOf(trx, lines.map((line) => line.cheese));
    const resolved: { cheeseId: number; grams: number }[] = [];
    const seen = new Map<number, string>();
    for (const [i, line] of lines.entries()) {
      const cheeseId = ids[i];
      if (cheeseId === undefined) {
        problems.push({ field: `${line.field}.cheeseId`, message: 'no such cheese' });
        continue;
      }
      const first = seen.get(cheeseId);
      if (first !== undefined) problems.push({ field: `${line.field}.cheeseId`, message: `the same cheese as ${first}: give each cheese one line` });
      seen.set(cheeseId, line.field);
      resolved.push({ cheeseId, grams: line.grams });
    }
    return resolved;
  }

}

const CHEESE_ID = /^[0-9]{1,15}$/;

/** The lines as ids when every one names its cheese by id and no cheese twice; otherwise undefined (the lookup decides). */
function directLines(lines: readonly PlacementLine[]): { cheeseId: number; grams: number }[] | undefined {
  if (!lines.every((line) => CHEESE_ID.test(String(line.cheese)))) return undefined;
  const resolved = lines.map((line) => ({ cheeseId: Number(line.cheese), grams: line.grams }));
  return new Set(resolved.map((line) => line.cheeseId)).size === resolved.length ? resolved : undefined;
}

function invalid(problems: readonly FieldError[]): ValidationFailedError {
  return new ValidationFailedError(`The order is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}.`, [...problems]);
}
