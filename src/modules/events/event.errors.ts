import { AppError } from '../../kernel/errors.js';

/**
 * 410: the event existed (its id's time says so) but is older than EVENT_RETENTION_DAYS and
 * has been pruned. `type` stays in the closed list: `not_found`, with the status telling it apart.
 */
export class EventGoneError extends AppError {
  readonly status = 410;
  readonly type = 'not_found';
}
