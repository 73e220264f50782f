import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import { systemClock, type Clock } from '../kernel/clock.js';

const PRODUCTION_SINCE = 'production_since';

/**
 * Whether a production deployment has used this database. CHEESE_ENV describes the process,
 * not the data: an operator who forgets it must not get development behaviour (the sandbox's
 * sample accounts, with their published passwords) on production data.
 */
export class DeploymentRepository {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Keeps the first production start's time: later starts change nothing. */
  async markProduction(): Promise<void> {
    await this.db
      .insertInto('deployment')
      .values({ key: PRODUCTION_SINCE, value: this.clock.iso() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }

  /** When a production deployment first started on this database; null when none has. */
  async productionSince(): Promise<string | null> {
    const row = await this.db.selectFrom('deployment').select('value').where('key', '=', PRODUCTION_SINCE).executeTakeFirst();
    return row?.value ?? null;
  }
}
