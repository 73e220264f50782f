import type { Database } from '../../db/database.js';
import { pendingMigrations } from '../../db/migrate.js';
import { withinDeadline } from '../../kernel/deadline.js';

/** The database must answer the readiness check within this, or the instance is not ready. */
export const READY_TIMEOUT_MS = 200;
/**
 * Until the schema has been seen current, a check also reads the migrations table, on a pool
 * that may still be opening its first connection: that one is given longer, so a loaded
 * machine's first connection is not taken for a database that is gone.
 */
export const SCHEMA_CHECK_TIMEOUT_MS = 2000;

export type NotReadyReason = 'draining' | 'database unreachable' | 'schema behind';

/**
 * Whether this instance should get traffic (`GET /v2/health/ready`): not while it drains
 * (SIGTERM), nor when the database does not answer within 200 ms, nor when the schema is
 * behind the code's migrations (checked until seen current, within 2 s). Redis is not
 * asked: without it limits count per instance.
 */
export class Readiness {
  #draining = false;
  /** Once the schema was seen current it stays so: migrations only move it forward. */
  #schemaCurrent = false;

  constructor(private readonly database: Database) {}

  get draining(): boolean {
    return this.#draining;
  }

  /** From now on every readiness check fails: the load balancer stops sending requests here. */
  drain(): void {
    this.#draining = true;
  }

  /** `undefined` when ready, otherwise why not. */
  async check(): Promise<NotReadyReason | undefined> {
    if (this.#draining) return 'draining';
    const budget = this.#schemaCurrent ? READY_TIMEOUT_MS : SCHEMA_CHECK_TIMEOUT_MS;
    const probe = (async (): Promise<NotReadyReason | undefined> => {
      try {
        if (this.#schemaCurrent) {
          await this.database.ping();
          return undefined;
        }
        const pending = await pendingMigrations(this.database.db as never, this.database.schema);
        if (pending.length > 0) return 'schema behind';
        this.#schemaCurrent = true;
        return undefined;
      } catch {
        return 'database unreachable';
      }
    })();
    // The probe never throws: only the deadline can reject.
    return withinDeadline(probe, budget).catch((): NotReadyReason => 'database unreachable');
  }
}
