import { FromagerieError } from './errors.js';
import type { Page } from './types.js';

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a 2xx answer; any other status is thrown as a FromagerieError carrying the API's error body. */
export async function unwrap<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw new FromagerieError(response, error);
  return data as T;
}

/** Walks a list page by page along `nextCursor`, yielding each item once, fetching the next page only when the caller asks for it. */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, startCursor?: string): AsyncGenerator<T, void, undefined> {
  let cursor = startCursor;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.hasMore || !page.nextCursor) return;
    cursor = page.nextCursor;
  }
}
