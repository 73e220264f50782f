import { InvalidRequestError } from '../../kernel/errors.js';
import { SORT_FIELDS, type CheeseFilter, type Direction, type SortField } from './cheese.repository.js';
import { searchTerms } from '../../kernel/text.js';
import { CHEESE_FIELDS, type CheeseView } from './cheese.schema.js';
import type { CheeseStatus } from './catalogue.table.js';

/** Response fields selectable with `fields=`, by either spelling. */
export const FIELD_NAMES: readonly (keyof CheeseView)[] = CHEESE_FIELDS;
const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const FIELD_BY_NAME = new Map<string, keyof CheeseView>(FIELD_NAMES.map((f) => [f.toLowerCase(), f]));

export function parseFields(fields: string | undefined): (keyof CheeseView)[] | null {
  if (fields === undefined || fields.trim() === '') return null;
  const selected = new Set<keyof CheeseView>(['id']);
  for (const raw of fields.split(',')) {
    const name = raw.trim();
    if (!name) continue;
    const field = FIELD_BY_NAME.get(camelCase(name).toLowerCase());
    if (!field) throw new InvalidRequestError(`fields: unknown field "${name.slice(0, 50)}".`, [{ field: 'fields', message: `unknown field ${name.slice(0, 50)}` }]);
    selected.add(field);
  }
  return [...selected];
}

export function project(view: CheeseView, fields: (keyof CheeseView)[] | null): Partial<CheeseView> {
  if (!fields) return view;
  return Object.fromEntries(fields.map((f) => [f, view[f]]));
}

/** `sort=-name` and `sort=name&order=desc` mean the same; snake_case names are accepted. */
export function parseSort(sort: string | undefined, order: Direction | undefined): { sort: SortField; direction: Direction } {
  const raw = (sort ?? 'name').trim();
  const descending = raw.startsWith('-');
  const name = camelCase(descending ? raw.slice(1) : raw);
  const field = SORT_FIELDS.find((f) => f.toLowerCase() === name.toLowerCase());
  if (!field) {
    throw new InvalidRequestError(`sort: must be one of ${SORT_FIELDS.join(', ')}, optionally prefixed with "-".`, [{ field: 'sort', message: 'is not a sortable field' }]);
  }
  if (descending && order === 'asc') {
    throw new InvalidRequestError('sort and order disagree: "-" already means descending.', [{ field: 'order', message: 'contradicts sort' }]);
  }
  return { sort: field, direction: descending ? 'desc' : (order ?? 'asc') };
}

export function parseList<T extends string>(value: string | string[] | undefined, allowed?: readonly T[]): T[] | undefined {
  if (value === undefined) return undefined;
  const items = [...new Set((Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean))];
  if (allowed) {
    const bad = items.find((i) => !(allowed as readonly string[]).includes(i));
    if (bad !== undefined) throw new InvalidRequestError(`"${bad.slice(0, 50)}" is not one of ${allowed.join(', ')}.`);
  }
  return items as T[];
}

export interface ListQueryInput {
  status?: string | string[];
  country?: string;
  texture?: string;
  milk?: string;
  aged_weeks_min?: number;
  agedWeeksMin?: number;
  organic?: boolean;
  seasonal?: boolean;
  in_stock?: boolean;
  inStock?: boolean;
  category?: string;
  tags?: string | string[];
  q?: string;
}

/** Form B's snake_case name and its camelCase alias are one parameter: sending both is a 400, as in bodies. */
function eitherSpelling<K extends keyof ListQueryInput>(query: ListQueryInput, snake: K, camel: K): ListQueryInput[K] {
  if (query[snake] !== undefined && query[camel] !== undefined) {
    throw new InvalidRequestError(`${snake} and ${camel} are the same parameter; send only one.`, [{ field: snake, message: `is the same parameter as ${camel}; send only one` }]);
  }
  return query[camel] ?? query[snake];
}

export function buildFilter(query: ListQueryInput, statuses: readonly CheeseStatus[], tagPattern: RegExp): CheeseFilter {
  const filter: CheeseFilter = {};
  const chosen = parseList(query.status, statuses);
  if (chosen) filter.statuses = chosen;
  if (query.country) filter.country = query.country;
  if (query.texture) filter.texture = query.texture;
  if (query.milk) filter.milk = query.milk;
  const agedMin = eitherSpelling(query, 'aged_weeks_min', 'agedWeeksMin');
  if (agedMin !== undefined) filter.agedWeeksMin = agedMin;
  if (query.organic !== undefined) filter.organic = query.organic;
  if (query.seasonal !== undefined) filter.seasonal = query.seasonal;
  const inStock = eitherSpelling(query, 'in_stock', 'inStock');
  if (inStock !== undefined) filter.inStock = inStock;
  if (query.category) filter.category = query.category;
  const tags = parseList(query.tags);
  if (tags?.length) {
    const bad = tags.find((t) => !tagPattern.test(t));
    if (bad !== undefined) throw new InvalidRequestError(`tags: "${bad.slice(0, 50)}" is not a valid tag (lower-case kebab-case).`, [{ field: 'tags', message: 'invalid tag' }]);
    filter.tags = tags;
  }
  if (query.q !== undefined) {
    const terms = searchTerms(query.q);
    // A query with nothing to search for must not answer with the whole catalogue.
    if (terms.length === 0) throw new InvalidRequestError('q: has no searchable word (letters or digits of any script).', [{ field: 'q', message: 'has no searchable word' }]);
    filter.terms = terms;
  }
  return filter;
}
