import type { Compilable, CompiledQuery, InferResult, Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from './schema.js';

/** Stands for one value (or one element of an array value) while the query is compiled. */
class Slot {
  constructor(
    readonly key: string,
    readonly index: number | undefined,
  ) {}
}

type Values = Record<string, unknown>;

/** Shapes kept per query and database: array lengths come from requests, so clients would choose how many. */
const MAX_SHAPES = 256;

/**
 * A query whose SQL depends only on the shape of its values (which keys, how long each array),
 * built and compiled by Kysely once per shape and database, then run with each call's values.
 * Kysely builds and compiles every query from scratch: on the order path (an insert of 17
 * columns returning 20, a select of 30) that cost more than SQLite took to run them
 * (docs/performance.md). The builder sees placeholders, not values: it may branch on the shape
 * (whether a value is undefined, an array's length), never on a value itself.
 */
export function prepared<V extends Values, Q extends Compilable<unknown>>(build: (db: Kysely<DB>, values: V) => Q): (executor: Kysely<DB>, values: V) => Promise<InferResult<Q>> {
  // Per adapter (one per database): SQLite and PostgreSQL compile the same query differently.
  const compiled = new WeakMap<object, LRUCache<string, CompiledQuery>>();
  return async (executor, values) => {
    const adapter = executor.getExecutor().adapter;
    let shapes = compiled.get(adapter);
    if (!shapes) compiled.set(adapter, (shapes = new LRUCache<string, CompiledQuery>({ max: MAX_SHAPES })));
    // An undefined value leaves its column out of an insert or update, as with Kysely itself.
    const shape = Object.entries(values)
      .map(([key, value]) => (Array.isArray(value) ? `${key}[${value.length}]` : value === undefined ? `${key}?` : key))
      .join(',');
    let query = shapes.get(shape);
    if (!query) {
      const slots = Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Array.isArray(value) ? value.map((_, i) => new Slot(key, i)) : value === undefined ? undefined : new Slot(key, undefined)])) as V;
      query = build(executor, slots).compile();
      // A value Kysely writes into the SQL text instead of binding cannot be a placeholder.
      if (query.sql.includes('[object Object]')) throw new Error(`prepared: a value is inlined, not bound, in: ${query.sql}`);
      shapes.set(shape, query);
    }
    const parameters = query.parameters.map((parameter) => {
      if (!(parameter instanceof Slot)) return parameter;
      const value = values[parameter.key];
      return parameter.index === undefined ? value : (value as unknown[])[parameter.index];
    });
    const result = await executor.executeQuery({ ...query, parameters });
    return result.rows as InferResult<Q>;
  };
}
