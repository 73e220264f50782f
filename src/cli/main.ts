import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type AppConfig } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { bootstrap } from '../bootstrap.js';
import { createModules, type Modules } from '../modules.js';
import { AppError, ConflictError, NotFoundError } from '../kernel/errors.js';
import { PLANS, type Plan } from '../kernel/plans.js';
import { isScope, ROLE_SCOPES, type Scope } from '../kernel/scopes.js';
import { GRANTS, type Grant } from '../modules/identity/identity.module.js';

const OPTIONS = {
  user: { type: 'string' },
  scopes: { type: 'string' },
  name: { type: 'string' },
  'expires-at': { type: 'string' },
  id: { type: 'string' },
  type: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  grants: { type: 'string' },
  plan: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

interface Context {
  config: AppConfig;
  database: Database;
  /** Built on first use, after migrating: commands that only migrate never build them. */
  modules(): Promise<Modules>;
  values: Values;
}

interface Command {
  usage: string;
  help: string;
  run(context: Context): Promise<void>;
}

class UsageError extends Error {}

async function accountOf(context: Context) {
  if (!context.values.user) throw new UsageError('--user is required');
  const account = await (await context.modules()).identity.provides.accounts.findByUsername(context.values.user);
  if (!account) throw new UsageError(`no account named "${context.values.user}"`);
  return account;
}

function applied(result: Awaited<ReturnType<typeof migrateToLatest>>): string[] {
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Every command, in the order `help` lists them. */
const COMMANDS: Record<string, Command> = {
  'db:migrate': {
    usage: 'db:migrate',
    help: 'apply pending migrations',
    async run({ database }) {
      const names = applied(await migrateToLatest(database.db as never, database.schema));
      console.log(names.length ? `applied: ${names.join(', ')}` : 'already up to date');
    },
  },
  'db:seed': {
    usage: 'db:seed',
    help: 'load the seed catalogue into an empty database; outside production also the sandbox test customer and its orders (refused, seeding nothing, on a database a production deployment has used)',
    async run(context) {
      const result = await bootstrap(context.config, context.database, await context.modules(), { seed: true });
      console.log(result.seededCheeses ? `seeded ${result.seededCheeses} cheeses` : 'catalogue not empty; nothing seeded');
      if (result.generatedAdminPassword) console.log(`created admin "${result.adminUsername}" with password: ${result.generatedAdminPassword}`);
    },
  },
  'api-keys create': {
    usage: 'api-keys create --user NAME --scopes "s1 s2" [--name LABEL] [--expires-at ISO-8601] [--quiet]',
    help: 'create a key; the key alone is printed on the last line (with --quiet, alone on stdout)',
    async run(context) {
      const account = await accountOf(context);
      const { values } = context;
      const scopes = (values.scopes ?? '').split(/[\s,]+/).filter(Boolean);
      const unknown = scopes.filter((s) => !isScope(s));
      if (scopes.length === 0 || unknown.length) throw new UsageError(`--scopes must list scopes among: ${ROLE_SCOPES.admin.join(' ')}`);
      // The operator at the console (no calling credential) may grant whatever the account's role allows.
      const created = await (await context.modules()).identity.provides.apiKeys
        .create({ accountId: account.id, role: account.role }, { scopes: scopes as Scope[], name: values.name ?? null, expiresAt: values['expires-at'] ?? null }, null)
        .catch((error: unknown) => {
          // Nothing reaches stdout, so `KEY=$(…)` stays empty and the shell sees the failure.
          if (error instanceof ConflictError) {
            throw new ConflictError(
              `${error.message.replace(/ \(DELETE .*\)\.$/, '.')}\n  List them:    npm run cli -- api-keys list --user ${account.username}\n  Revoke one:   npm run cli -- api-keys revoke --user ${account.username} --id <id>`,
            );
          }
          throw error;
        });
      if (!values.quiet) {
        console.log(`created key ${created.id} for ${account.username} (${created.environment}), scopes: ${created.scopes}${created.expiresAt ? `, expires ${created.expiresAt}` : ''}`);
        console.log('It is shown only now; store it safely:');
      }
      console.log(created.key);
    },
  },
  'api-keys list': {
    usage: 'api-keys list --user NAME',
    help: "list the account's active keys",
    async run(context) {
      const account = await accountOf(context);
      for (const key of await (await context.modules()).identity.provides.apiKeys.list(account.id)) {
        console.log(`${key.id}\t${key.keyPrefix}…\t${key.scopes}\t${key.expiresAt ?? 'no expiry'}\t${key.name ?? ''}`);
      }
    },
  },
  'api-keys revoke': {
    usage: 'api-keys revoke --user NAME --id N',
    help: 'revoke a key',
    async run(context) {
      const account = await accountOf(context);
      const id = context.values.id;
      if (!id || !/^[0-9]+$/.test(id)) throw new UsageError('--id must be a key id');
      await (await context.modules()).identity.provides.apiKeys.revoke(account.id, Number(id), null);
      console.log(`revoked key ${id}`);
    },
  },
  'accounts set-plan': {
    usage: 'accounts set-plan --user NAME --plan free|pro|enterprise',
    help: 'put an account on a rate-limit plan (applies on every instance within 5 s)',
    async run(context) {
      const plan = context.values.plan;
      if (!plan || !(PLANS as readonly string[]).includes(plan)) throw new UsageError(`--plan must be one of: ${PLANS.join(', ')}`);
      if (!context.values.user) throw new UsageError('--user is required');
      const updated = await (await context.modules()).identity.provides.accounts.setPlan(context.values.user, plan as Plan).catch((error: unknown) => {
        if (error instanceof NotFoundError) throw new UsageError(`no account named "${context.values.user}"`);
        throw error;
      });
      console.log(`${updated.username} is on the ${updated.plan} plan`);
    },
  },
  'oauth-clients create': {
    usage: 'oauth-clients create --name NAME --type confidential|public --grants "g1 g2" --scopes "s1 s2" [--redirect-uri URI]… [--user OWNER]',
    help: 'register an OAuth client owned by --user (default: the admin); its client id, then (confidential) its secret, alone on the last lines',
    async run(context) {
      const { values } = context;
      const words = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter(Boolean);
      if (!values.name || (values.type !== 'confidential' && values.type !== 'public')) throw new UsageError('--name and --type confidential|public are required');
      const scopes = words(values.scopes);
      if (scopes.length === 0 || scopes.some((s) => !isScope(s))) throw new UsageError(`--scopes must list scopes among: ${ROLE_SCOPES.admin.join(' ')}`);
      const grants = words(values.grants);
      if (grants.length === 0 || grants.some((g) => !(GRANTS as readonly string[]).includes(g))) throw new UsageError(`--grants must list grants among: ${GRANTS.join(' ')}`);
      // The owner (the admin unless --user names another): client-credentials tokens act as it.
      const owner = await accountOf({ ...context, values: { ...values, user: values.user ?? context.config.adminUsername } });
      const client = await (await context.modules()).identity.provides.oauthClients.register(
        { name: values.name, type: values.type, redirectUris: values['redirect-uri'] ?? [], grants: grants as Grant[], scopes: scopes as Scope[] },
        owner.id,
      );
      console.log(`registered ${client.type} OAuth client ${client.id} "${client.name}": grants ${client.grants.join(' ')}, scopes ${client.scopes.join(' ')}`);
      if (client.clientSecret) console.log('The secret is shown only now; store it safely. Client id, then secret:');
      console.log(client.clientId);
      if (client.clientSecret) console.log(client.clientSecret);
    },
  },
  'oauth-clients list': {
    usage: 'oauth-clients list',
    help: 'list the registered OAuth clients (never their secrets)',
    async run(context) {
      for (const c of await (await context.modules()).identity.provides.oauthClients.list()) {
        console.log(`${c.id}\t${c.clientId}\t${c.type}\t${c.grants.join(' ')}\t${c.scopes.join(' ')}\t${c.name}`);
      }
    },
  },
  'oauth-clients delete': {
    usage: 'oauth-clients delete --id N',
    help: 'remove an OAuth client',
    async run(context) {
      const id = context.values.id;
      if (!id || !/^[0-9]+$/.test(id)) throw new UsageError('--id must be a client id (the number)');
      await (await context.modules()).identity.provides.oauthClients.delete(Number(id));
      console.log(`removed OAuth client ${id}`);
    },
  },
};

const USAGE = `Fromagerie operator CLI

Usage: npm run cli -- <command> [options]     (or: fromagerie <command> [options])

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.help}`)
  .join('\n')}

Configuration comes from the same environment variables as the server (see README).`;

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const name = positionals.join(' ');
  if (values.help || name === '' || name === 'help') {
    console.log(USAGE);
    return;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"`);
  const config = loadConfig();
  const database = openDatabase(config);
  let modules: Modules | undefined;
  try {
    await command.run({
      config,
      database,
      values,
      modules: async () => {
        if (!modules) {
          await migrateToLatest(database.db as never, database.schema);
          modules = createModules(config, database);
        }
        return modules;
      },
    });
  } finally {
    await (modules as Modules | undefined)?.limits.provides.close();
    await database.close();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof ConfigError || error instanceof AppError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
