import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postgresDriver } from '../db/postgres-driver.js';
import { Refusal } from './cli.errors.js';

/** The schema a PostgreSQL store lives in: DATABASE_SCHEMA, else `public` (the usual search_path). */
export const schemaOf = (databaseSchema: string | undefined) => databaseSchema ?? 'public';

/** The pg_dump command line, with the connection left as `"$DATABASE_URL"` so no password is printed or put in `ps`. */
export const pgDumpCommand = (schema: string, file: string) => `pg_dump --format=custom --no-owner --schema=${schema} --file=${quoted(file)} "$DATABASE_URL"`;

const quoted = (text: string) => (/^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/** Whether a program is on PATH (as spawn will look for it). */
function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, program)));
}

/**
 * libpq's environment for the URL: the password travels in PGPASSWORD, never on a command line
 * (`ps` shows arguments to every user). node-postgres's URL parameters that libpq also knows are kept.
 */
function libpqEnvironment(url: string): NodeJS.ProcessEnv {
  const parsed = new URL(url);
  const env: NodeJS.ProcessEnv = { ...process.env, PGHOST: decodeURIComponent(parsed.hostname), PGPORT: parsed.port || '5432', PGDATABASE: decodeURIComponent(parsed.pathname.slice(1)) };
  if (parsed.username) env.PGUSER = decodeURIComponent(parsed.username);
  if (parsed.password) env.PGPASSWORD = decodeURIComponent(parsed.password);
  const sslmode = parsed.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode === 'no-verify' ? 'require' : sslmode;
  return env;
}

/** Runs a PostgreSQL client tool; rejects with its own error output (one line per message) when it fails. */
function runTool(program: string, args: string[], url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: libpqEnvironment(url), stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Refusal(`${program} failed (exit ${code}): ${errors.trim().split('\n').join(' | ') || 'no message'}`))));
  });
}

export async function backupPostgres(url: string, databaseSchema: string | undefined, target: string): Promise<void> {
  const schema = schemaOf(databaseSchema);
  if (!onPath('pg_dump')) {
    throw new Refusal(`pg_dump is not installed (PostgreSQL's client tools, e.g. apt-get install postgresql-client); install it, or run: ${pgDumpCommand(schema, target)}`);
  }
  await runTool('pg_dump', ['--format=custom', '--no-owner', `--schema=${schema}`, `--file=${target}`], url);
  // Read back once (its table of contents): an archive pg_restore cannot read is found now, not on the day it is needed.
  if (!tableOfContents(target).some((line) => / TABLE (?!DATA )/.test(line))) throw new Refusal(`pg_dump wrote no table of schema ${schema}: is DATABASE_SCHEMA right? The file was removed`);
}

/** Relations (tables, views, sequences) in `schema` of the target database: a restore goes only where there are none. */
async function relationsIn(url: string, schema: string): Promise<{ relations: number; schemaExists: boolean }> {
  const client = new (postgresDriver().Client)({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ relations: number; exists: boolean }>(
      `select (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'S')) as relations,
              exists (select 1 from pg_namespace where nspname = $1) as exists`,
      [schema],
    );
    return { relations: rows[0]!.relations, schemaExists: rows[0]!.exists };
  } finally {
    await client.end();
  }
}

/** pg_restore's table of contents for the archive (throws a Refusal when it is not one). */
function tableOfContents(backup: string): string[] {
  const listed = spawnSync('pg_restore', ['--list', backup], { encoding: 'utf8' });
  if (listed.error || listed.status !== 0) {
    throw new Refusal(`${backup} is not a pg_dump archive pg_restore can read (${(listed.stderr || listed.error?.message || '').trim().split('\n')[0]}); nothing changed`);
  }
  return listed.stdout.split('\n');
}

/**
 * pg_restore into the target, in one transaction (all or nothing), only when DATABASE_SCHEMA (or
 * public) holds no relation there. The archive's tables must be in that same schema: pg_restore
 * cannot rename one. When the (empty) schema already exists, its CREATE SCHEMA entry is left out
 * of the list pg_restore follows, which would otherwise fail on it.
 */
export async function restorePostgres(backup: string, url: string, databaseSchema: string | undefined): Promise<void> {
  const schema = schemaOf(databaseSchema);
  if (!onPath('pg_restore')) throw new Refusal(`pg_restore is not installed (PostgreSQL's client tools, e.g. apt-get install postgresql-client); nothing changed`);
  const entries = tableOfContents(backup);
  const schemas = new Set(entries.map((line) => /^\d+; \d+ \d+ TABLE (?!DATA )(\S+) /.exec(line)?.[1]).filter((name): name is string => name !== undefined));
  if (!schemas.has(schema)) {
    throw new Refusal(`${backup} holds no table in schema ${schema} (it has: ${[...schemas].join(', ') || 'none'}); set DATABASE_SCHEMA to the backed-up schema. Nothing changed`);
  }
  const { relations, schemaExists } = await relationsIn(url, schema);
  if (relations > 0) throw new Refusal(`refused: schema ${schema} of the target database already holds ${relations} relation(s); restore only into an empty store (a new database or schema). Nothing changed`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-restore-'));
  try {
    const list = path.join(work, 'restore.list');
    const creatingSchema = new RegExp(`^\\d+; \\d+ \\d+ SCHEMA - ${schema} `);
    fs.writeFileSync(list, entries.map((line) => (schemaExists && creatingSchema.test(line) ? `;${line}` : line)).join('\n'));
    await runTool('pg_restore', ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', `--use-list=${list}`, `--dbname=${libpqEnvironment(url).PGDATABASE}`, backup], url);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
