import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { bootstrap } from '../bootstrap.js';
import { createServices } from '../services.js';
import { AppError } from '../http/errors.js';
import { isScope, ROLE_SCOPES, type Scope } from '../modules/identity/scopes.js';

const USAGE = `Fromagerie operator CLI

Usage: npm run cli -- <command> [options]     (or: fromagerie <command> [options])

Commands:
  db:migrate                         apply pending migrations
  db:seed                            load the seed catalogue into an empty database
  api-keys create --user NAME --scopes "s1 s2" [--name LABEL] [--expires-at ISO-8601]
                                     create a key; the key alone is printed on the last line
  api-keys list --user NAME          list the account's active keys
  api-keys revoke --user NAME --id N revoke a key

Configuration comes from the same environment variables as the server (see README).`;

class UsageError extends Error {}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      id: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || command === '' || command === 'help') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  const database = openDatabase(config);
  try {
    switch (command) {
      case 'db:migrate': {
        const result = await migrateToLatest(database.db as never, database.schema);
        const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
        return;
      }
      case 'db:seed': {
        const result = await bootstrap(config, database, createServices(config, database), { seed: true });
        console.log(result.seededCheeses ? `seeded ${result.seededCheeses} cheeses` : 'catalogue not empty; nothing seeded');
        if (result.generatedAdminPassword) console.log(`created admin "${result.adminUsername}" with password: ${result.generatedAdminPassword}`);
        return;
      }
    }
    await migrateToLatest(database.db as never, database.schema);
    const services = createServices(config, database);
    const account = values.user ? await services.accounts.findByUsername(values.user) : undefined;
    if (!values.user) throw new UsageError('--user is required');
    if (!account) throw new UsageError(`no account named "${values.user}"`);
    switch (command) {
      case 'api-keys create': {
        const scopes = (values.scopes ?? '').split(/[\s,]+/).filter(Boolean);
        const unknown = scopes.filter((s) => !isScope(s));
        if (scopes.length === 0 || unknown.length) throw new UsageError(`--scopes must list scopes among: ${ROLE_SCOPES.admin.join(' ')}`);
        // An operator at the console may grant whatever the account's role allows.
        const created = await services.apiKeys.create(
          { accountId: account.id, role: account.role },
          { scopes: scopes as Scope[], name: values.name ?? null, expiresAt: values['expires-at'] ?? null },
          new Set(ROLE_SCOPES[account.role]),
        );
        console.log(`created key ${created.id} for ${account.username} (${created.environment}), scopes: ${created.scopes}${created.expiresAt ? `, expires ${created.expiresAt}` : ''}`);
        console.log('It is shown only now; store it safely:');
        console.log(created.key);
        return;
      }
      case 'api-keys list': {
        for (const key of await services.apiKeys.list(account.id)) {
          console.log(`${key.id}\t${key.keyPrefix}…\t${key.scopes}\t${key.expiresAt ?? 'no expiry'}\t${key.name ?? ''}`);
        }
        return;
      }
      case 'api-keys revoke': {
        if (!values.id || !/^[0-9]+$/.test(values.id)) throw new UsageError('--id must be a key id');
        await services.apiKeys.revoke(account.id, Number(values.id));
        console.log(`revoked key ${values.id}`);
        return;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof ConfigError || error instanceof AppError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
