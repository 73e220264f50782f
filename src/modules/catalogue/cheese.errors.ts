import { NotFoundError } from '../../kernel/errors.js';

export class CheeseNotFoundError extends NotFoundError {
  constructor(idOrSlug: string | number) {
    // Slugs come from the URL: echo a bounded part of what was asked for.
    super(`Cheese ${String(idOrSlug).slice(0, 120)} not found.`);
  }
}
