import fs from 'node:fs';
import path from 'node:path';
import { Refusal, UsageError } from './cli.errors.js';

/**
 * `fromagerie backup --to FILE` and `fromagerie restore --from FILE` (issue 32 §3,
 * docs/operations.md "Backups"). Both read only DATA_DIR, DATABASE_URL and DATABASE_SCHEMA, not
 * the whole configuration: the rest (secrets included) is not needed, and loading it outside
 * production would write a generated DATA_DIR/.app-secret into the store a restore must leave
 * untouched when it refuses.
 */
interface Store {
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
}

async function storeOf(env: NodeJS.ProcessEnv): Promise<Store> {
  const { SETTINGS } = await import('../config/variables.js');
  const { settle } = await import('../config/variable.js');
  const given = Object.fromEntries(['DATA_DIR', 'DATABASE_URL', 'DATABASE_SCHEMA'].filter((name) => env[name]).map((name) => [name, env[name]!]));
  const store = settle({ dataDir: SETTINGS.dataDir, databaseUrl: SETTINGS.databaseUrl, databaseSchema: SETTINGS.databaseSchema }, given);
  // Checked as the server checks them: the schema goes to pg_dump's command line and into SQL.
  if (store.databaseUrl && !/^postgres(ql)?:\/\//.test(store.databaseUrl)) throw new Refusal('DATABASE_URL must start with postgres:// (unset means SQLite)');
  if (store.databaseSchema && !/^[a-z_][a-z0-9_]{0,62}$/.test(store.databaseSchema)) throw new Refusal('DATABASE_SCHEMA must be a lower-case name of letters, digits and underscores');
  return store;
}

function size(bytes: number): string {
  return bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} kB`;
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(2)} s`;

/** What every backup leaves out, said each time it is made. */
const NOT_INCLUDED = 'not included: uploaded images (DATA_DIR/images: copy that directory too) and APP_SECRET (keep it with the backup: without it the stored webhook secrets do not decrypt)';

/** The shape of operator-commands.ts's Command, restated: importing it from there would make an import cycle. */
interface BackupCommand {
  usage: string;
  help: string;
  noDatabase: true;
  run(context: { values: { to?: string | undefined; from?: string | undefined } }): Promise<void>;
}

export const BACKUP_COMMANDS: Record<'backup' | 'restore', BackupCommand> = {
  backup: {
    usage: 'backup --to FILE',
    help: 'write a consistent copy of the database to FILE (created 0600; an existing file is refused), safe while the server runs: SQLite through its online backup API, PostgreSQL through pg_dump (custom format, --no-owner, the schema DATABASE_SCHEMA or public; when pg_dump is absent the exact command is printed). Prints the size and the time taken. Uploaded images and APP_SECRET are not in it (docs/operations.md#backups)',
    noDatabase: true,
    async run({ values }) {
      if (!values.to) throw new UsageError('--to FILE is required');
      const store = await storeOf(process.env);
      const target = path.resolve(values.to);
      const started = performance.now();
      // Exclusive, owner-only from the first byte: the copy holds password hashes and personal data.
      let descriptor: number;
      try {
        descriptor = fs.openSync(target, 'wx', 0o600);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') throw new Refusal(`${values.to} exists: kept unchanged; choose a new file name (a backup never overwrites one)`);
        throw new Refusal(`cannot create ${values.to} (${code ?? (error as Error).message})`);
      }
      fs.closeSync(descriptor);
      try {
        if (store.databaseUrl) {
          const { backupPostgres } = await import('./backup-postgres.js');
          await backupPostgres(store.databaseUrl, store.databaseSchema, target);
        } else {
          const { backupSqlite } = await import('./backup-sqlite.js');
          await backupSqlite(store.dataDir, target);
        }
      } catch (error) {
        fs.rmSync(target, { force: true });
        throw error;
      }
      const kind = store.databaseUrl ? 'PostgreSQL (pg_dump custom format)' : 'SQLite (online backup)';
      console.log(`wrote ${values.to}: ${size(fs.statSync(target).size)}, ${kind}, in ${seconds(started)}`);
      console.log(NOT_INCLUDED);
    },
  },
  restore: {
    usage: 'restore --from FILE',
    help: 'put a backup made by `backup --to` in place, into an empty store only (SQLite: DATA_DIR holds no database yet; PostgreSQL: DATABASE_SCHEMA, or public, holds no table): refused otherwise (exit 1, nothing changed). Start the instance afterwards: it applies any migration the backup predates (with MIGRATE_ON_BOOT=false run `fromagerie migrate` first)',
    noDatabase: true,
    async run({ values }) {
      if (!values.from) throw new UsageError('--from FILE is required');
      const backup = path.resolve(values.from);
      if (!fs.existsSync(backup) || !fs.statSync(backup).isFile()) throw new Refusal(`${values.from} is not a file; nothing changed`);
      const store = await storeOf(process.env);
      const started = performance.now();
      if (store.databaseUrl) {
        const { restorePostgres, schemaOf } = await import('./backup-postgres.js');
        await restorePostgres(backup, store.databaseUrl, store.databaseSchema);
        console.log(`restored ${values.from} into schema ${schemaOf(store.databaseSchema)} of ${new URL(store.databaseUrl).host}${new URL(store.databaseUrl).pathname} in ${seconds(started)}`);
      } else {
        const { restoreSqlite, sqliteFileOf } = await import('./backup-sqlite.js');
        restoreSqlite(backup, store.dataDir);
        console.log(`restored ${values.from} to ${sqliteFileOf(store.dataDir)} (mode 0600) in ${seconds(started)}`);
      }
      console.log('start the instance with the APP_SECRET of the backed-up deployment: it applies any pending migration (with MIGRATE_ON_BOOT=false, run `fromagerie migrate` first); copy the uploaded images back into DATA_DIR/images');
    },
  },
};
