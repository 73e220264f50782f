import { Client, type Answer, type Exchange } from './client.js';
import type { World } from './world.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { METERED_OP } from './limit-check.js';


/** An order the load asked for, under one Idempotency-Key (also written into its notes). */
export interface OrderIntent {
  key: string;
  customer: string;
  lines: { cheeseId: number; grams: number }[];
  /** The order's id once a 2xx answered it. */
  acknowledged?: number;
  /** The last answer's status (0: none) and the start of its body. */
  lastStatus: number;
  lastAnswer?: string;
  /** When the first attempt was sent and the last settled. */
  firstAt?: number;
  lastAt?: number;
}

/** A rename the load sent: acknowledged or not. */
export interface Rename {
  cheeseId: number;
  name: string;
  acknowledged: boolean;
  t0: number;
}

/**
 * A client retries a POST for this long: longer than a crashed instance's Idempotency-Key lease
 * (10 s, src/modules/idempotency/idempotency.leases.ts), so a key cut off by a crash is taken
 * over before the client gives up.
 */
const RETRY_FOR_MS = 15_000;
const THINK_MS = 15;
const METER_GAP_MS = 120;
const STOCK_SHORT = /Not enough stock/;

/**
 * The seeded load: workers that read the catalogue and their orders, revalidate with
 * If-None-Match, place orders with Idempotency-Keys (retrying with the same key after a network
 * error, a 5xx or a 409 "still being processed"), cancel some, and rename cheeses; every
 * request and answer goes into `record`.
 */
export class Load {
  readonly record: Exchange[] = [];
  readonly orders: OrderIntent[] = [];
  readonly renames: Rename[] = [];
  readonly #client: Client;
  readonly #etags = new Map<string, string>();
  #stopping = false;
  #running: Promise<void>[] = [];

  constructor(
    readonly base: string,
    readonly world: World,
    readonly seed: number,
    readonly workers = 6,
  ) {
    this.#client = new Client(base, this.record);
  }

  start(): void {
    for (let w = 0; w < this.workers; w++) this.#running.push(this.#worker(w));
    this.#running.push(this.#meter());
  }

  /** Stops starting new operations and waits for those in flight (their retries included). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#running);
    this.#client.close();
  }

  async #worker(w: number): Promise<void> {
    const rng = seededRandom(this.seed * 1000 + w);
    const customer = this.world.customers[w % this.world.customers.length]!;
    const mine: OrderIntent[] = [];
    let n = 0;
    while (!this.#stopping) {
      n++;
      const r = rng();
      if (r < 0.25) await this.#read(rng, customer, mine);
      else if (r < 0.4) await this.#revalidate(rng, customer);
      else if (r < 0.75) await this.#order(rng, w, n, customer, mine);
      else if (r < 0.87) await this.#cancel(rng, customer, mine);
      else await this.#rename(w, n);
      await sleep(THINK_MS);
    }
  }

  /**
   * The metered client: one request at a time, about 8 a second (faster than its Free plan
   * refills, 2.8 a second at the development multiplier), through HAProxy's round robin; its
   * answers' RateLimit fields are checked by limit-check.ts.
   */
  async #meter(): Promise<void> {
    const auth = { 'x-api-key': this.world.metered.key };
    while (!this.#stopping) {
      await this.#client.send(METERED_OP, 'GET', `/v2/cheeses/${this.world.scarce.id}`, { headers: auth });
      await sleep(METER_GAP_MS);
    }
  }

  async #read(rng: () => number, customer: World['customers'][number], mine: OrderIntent[]): Promise<void> {
    const auth = { 'x-api-key': customer.key };
    const acked = mine.filter((o) => o.acknowledged);
    if (acked.length > 0 && rng() < 0.4) {
      await this.#client.send('read-order', 'GET', `/v2/orders/${pick(rng, acked).acknowledged}`, { headers: auth });
      return;
    }
    const path = pick(rng, this.world.catalogueUrls);
    const answer = await this.#client.send('read', 'GET', path, { headers: auth });
    const etag = answer?.headers.etag;
    if (answer?.status === 200 && typeof etag === 'string') this.#etags.set(path, etag);
  }

  async #revalidate(rng: () => number, customer: World['customers'][number]): Promise<void> {
    const known = [...this.#etags.entries()];
    if (known.length === 0) return;
    const [path, etag] = pick(rng, known);
    const answer = await this.#client.send('revalidate', 'GET', path, { headers: { 'x-api-key': customer.key, 'if-none-match': etag } });
    const fresh = answer?.headers.etag;
    if (answer?.status === 200 && typeof fresh === 'string') this.#etags.set(path, fresh);
  }

  async #order(rng: () => number, w: number, n: number, customer: World['customers'][number], mine: OrderIntent[]): Promise<void> {
    const { intent, body } = this.#newOrder(rng, `${w}-${n}`, customer);
    await this.#retrying(intent, (attempt) => this.#client.send('order', 'POST', '/v2/orders', { headers: { 'x-api-key': customer.key }, body, idempotencyKey: intent.key, attempt }));
    if (intent.acknowledged) mine.push(intent);
  }

  #newOrder(rng: () => number, id: string, customer: World['customers'][number]): { intent: OrderIntent; body: unknown } {
    const lines: OrderIntent['lines'] = [];
    // Multiples of 50 g: 0.5 to 1.5 kg of the scarce cheese, 0.1 to 2 kg of a plentiful one.
    if (rng() < 0.25) lines.push({ cheeseId: this.world.scarce.id, grams: 500 + 50 * Math.floor(rng() * 21) });
    if (lines.length === 0 || rng() < 0.5) lines.push({ cheeseId: pick(rng, this.world.plenty).id, grams: 100 + 50 * Math.floor(rng() * 39) });
    const key = `chaos-${this.seed}-${id}`;
    const intent: OrderIntent = { key, customer: customer.username, lines, lastStatus: 0 };
    this.orders.push(intent);
    const body = {
      items: lines.map((l) => ({ cheeseId: l.cheeseId, quantity_kg: l.grams / 1000 })),
      shipping: { method: 'standard', address: { line1: '1 Chaos Lane', city: 'Lyon', country: 'FR' } },
      notes: key,
    };
    return { intent, body };
  }

  /**
   * `count` orders whose first attempt goes straight to one instance (`directBase`), retried
   * through HAProxy like any other: requests a fault there catches in flight. Resolves once
   * they are sent; `stop()` waits for their retries.
   */
  burst(directBase: string, count: number): void {
    const direct = new Client(directBase, this.record);
    const rng = seededRandom(this.seed * 1000 + 999);
    const sent = Array.from({ length: count }, (_, i) => {
      const customer = this.world.customers[i % this.world.customers.length]!;
      const { intent, body } = this.#newOrder(rng, `burst-${i}`, customer);
      return this.#retrying(intent, (attempt) =>
        (attempt === 1 ? direct : this.#client).send(attempt === 1 ? 'order-direct' : 'order', 'POST', '/v2/orders', { headers: { 'x-api-key': customer.key }, body, idempotencyKey: intent.key, attempt }),
      );
    });
    this.#running.push(Promise.all(sent).then(() => direct.close()));
  }

  /** The client's side of idempotency: the same key until an answer that is final. */
  async #retrying(intent: OrderIntent, send: (attempt: number) => Promise<Answer | undefined>): Promise<void> {
    const firstAt = Date.now();
    for (let attempt = 1; ; attempt++) {
      intent.firstAt ??= firstAt;
      const answer = await send(attempt);
      intent.lastAt = Date.now();
      intent.lastStatus = answer?.status ?? 0;
      intent.lastAnswer = answer?.text.slice(0, 200);
      if (answer && answer.status >= 200 && answer.status < 300) {
        intent.acknowledged = Number((answer.json as { id: number }).id);
        return;
      }
      const retryable = !answer || answer.status >= 500 || (answer.status === 409 && !STOCK_SHORT.test(answer.text));
      if (!retryable || Date.now() - firstAt > RETRY_FOR_MS) return;
      await sleep(Math.min(250 * attempt, 2_000));
    }
  }

  async #cancel(rng: () => number, customer: World['customers'][number], mine: OrderIntent[]): Promise<void> {
    const open = mine.filter((o) => o.acknowledged);
    if (open.length === 0) return;
    const order = open.splice(rng() * open.length, 1)[0]!;
    mine.splice(mine.indexOf(order), 1);
    // DELETE of a cancelled order is 204 again: safe to repeat after a network error or a 5xx.
    for (let attempt = 1; attempt <= 4; attempt++) {
      const answer = await this.#client.send('cancel', 'DELETE', `/v2/store/order/${order.acknowledged}`, { headers: { 'x-api-key': customer.key }, attempt });
      if (answer && answer.status < 500) return;
      await sleep(250 * attempt);
    }
  }

  async #rename(w: number, n: number): Promise<void> {
    const cheeseId = this.world.editable[w % this.world.editable.length]!;
    const name = `Chaos Editable ${w} v${n}`;
    const rename: Rename = { cheeseId, name, acknowledged: false, t0: Date.now() };
    this.renames.push(rename);
    const path = `/v2/cheeses/${cheeseId}?name=${encodeURIComponent(name)}`;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const answer = await this.#client.send('rename', 'POST', path, { headers: { authorization: `Bearer ${this.world.adminToken}` }, attempt });
      if (answer && answer.status === 200) {
        rename.acknowledged = true;
        return;
      }
      if (answer && answer.status < 500) return;
      await sleep(250 * attempt);
    }
  }
}

function pick<T>(rng: () => number, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)]!;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
