import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * One id per test run, inherited by every worker. Schemas are dropped here, once all files
 * are done: Kysely's migrator introspects every schema of the database, and a schema dropped
 * by one worker mid-introspection fails another worker's migration.
 */
export function setup(): () => Promise<void> {
  const run = randomBytes(4).toString('hex');
  process.env.FROMAGERIE_TEST_RUN = run;
  return async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ nspname: string }>('select nspname from pg_namespace where nspname like $1', [`test\\_${run}\\_%`]);
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
    await client.end();
  };
}
