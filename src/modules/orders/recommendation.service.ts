import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { Principal } from '../../kernel/principal.js';
import type { CheeseDirectory } from '../catalogue/catalogue.module.js';
import type { PreferencesService } from '../customers/customers.module.js';
import type { OrderRepository } from './order.repository.js';
import { recommend, type Recommendation } from './recommendation.rules.js';
import type { RecommendationListView } from './recommendation.schema.js';

/** Cheeses to suggest, from a customer's preference profile and order history (the rules in recommendation.rules.ts). */
export class RecommendationService {
  constructor(private readonly options: { db: Kysely<DB>; orders: OrderRepository; cheeses: CheeseDirectory; preferences: PreferencesService }) {}

  /** GET /customer/{username}/recommendations: the principal's own, or any customer's for staff. */
  async forCustomer(username: string, principal: Principal, limit: number): Promise<RecommendationListView> {
    const { db, orders, cheeses, preferences } = this.options;
    const { accountId, preferences: tastes } = await preferences.ofCustomer(username, principal);
    const [catalogue, bought] = await Promise.all([cheeses.profiles(db), orders.cheesesBoughtBy(db, accountId)]);
    const items = recommend(catalogue, tastes, bought, limit);
    return { items: items.map(({ cheese, score, reasons }) => ({ cheese: { id: cheese.id, slug: cheese.slug, name: cheese.name, milk: cheese.milk, texture: cheese.texture, origin: cheese.origin, pricePerKg: cheese.pricePerKg }, score, reasons })) };
  }

  /**
   * The one best cheese for an account now, read with `executor` (a subscription's month is
   * picked in the transaction that places its order); undefined when nothing suits.
   */
  async bestFor(executor: Kysely<DB>, accountId: number): Promise<Recommendation | undefined> {
    const { orders, cheeses, preferences } = this.options;
    // One after the other: a transaction has one connection.
    const tastes = await preferences.ofAccount(executor, accountId);
    const catalogue = await cheeses.profiles(executor);
    const bought = await orders.cheesesBoughtBy(executor, accountId);
    return recommend(catalogue, tastes, bought, 1)[0];
  }
}
