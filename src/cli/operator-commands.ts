import type { parseArgs } from 'node:util';
// The operator commands, which work on the database. Only light modules load at the top: each
// command imports what it needs (the app's module graph, the drivers) when it runs. Under tsx
// every imported file is transpiled on load, so this is most of a call's time.
import type { AppConfig } from '../config.js';
import type { Database } from '../db/database.js';
import type { Modules } from '../modules.js';
import { ConflictError, NotFoundError } from '../kernel/errors.js';
import { PLANS, type Plan } from '../kernel/plans.js';
import { isOAuthScope, isScope, OAUTH_SCOPES, ROLE_SCOPES, type OAuthScope, type Scope } from '../kernel/scopes.js';
import { Refusal, UsageError } from './cli.errors.js';
import { passwordFromStdin } from './password-input.js';
import { BACKUP_COMMANDS } from './backup.js';

export const OPTIONS = {
  user: { type: 'string' },
  scopes: { type: 'string' },
  name: { type: 'string' },
  'expires-at': { type: 'string' },
  id: { type: 'string' },
  type: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  grants: { type: 'string' },
  plan: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  /** Refused with a message: a password in the arguments lands in shell history and `ps`. */
  password: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  file: { type: 'string' },
  to: { type: 'string' },
  from: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export interface Context {
  config: AppConfig;
  database: Database;
  /** Built on first use, after migrating: commands that only migrate never build them. */
  modules(): Promise<Modules>;
  values: Values;
}

export interface Command {
  usage: string;
  help: string;
  /** Runs without the configuration or the database (its context's are unset). */
  noDatabase?: boolean;
  run(context: Context): Promise<void>;
}

const HEALTHCHECK_TIMEOUT_MS = 2000;

async function accountOf(context: Context) {
  if (!context.values.user) throw new UsageError('--user is required');
  const account = await (await context.modules()).identity.provides.accounts.findByUsername(context.values.user);
  // The command was right, the name was not: its message alone, one line (no usage after it).
  if (!account) throw new Refusal(`no account named "${context.values.user}"`);
  return account;
}

/**
 * The listing commands' output: a header row, then one row per item, fields separated by tabs
 * (for `cut -f` and `column -t -s $'\t'`).
 */
function printTable(header: string[], rows: (string | number)[][]): void {
  for (const row of [header, ...rows]) console.log(row.join('\t'));
}

/** Every command, in the order `help` lists them. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  'db:migrate': {
    usage: 'db:migrate',
    help: 'apply pending migrations',
    async run({ database }) {
      const { migrateToLatest } = await import('../db/migrate.js');
      const result = await migrateToLatest(database.db as never, database.schema);
      const names = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      console.log(names.length ? `applied: ${names.join(', ')}` : 'already up to date');
    },
  },
  migrate: {
    usage: 'migrate',
    help: 'apply pending migrations and exit, printing each one applied (on PostgreSQL, instances starting meanwhile wait for it); for a one-shot step before starting instances with MIGRATE_ON_BOOT=false',
    async run({ database }) {
      const [{ migrateToLatest }, { withBootstrapLock }] = await Promise.all([import('../db/migrate.js'), import('../bootstrap.js')]);
      const result = await withBootstrapLock(database, () => migrateToLatest(database.db as never, database.schema));
      const names = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      for (const name of names) console.log(`applied ${name}`);
      console.log(names.length ? `${names.length} migration(s) applied; the schema is current` : 'already up to date: nothing to apply');
    },
  },
  healthcheck: {
    usage: 'healthcheck',
    help: 'ask the server on this machine whether it is ready (GET http://$HOST:$PORT/v2/health/ready, 127.0.0.1 when HOST is unset or binds every interface; 2 s timeout): exit 0 on 200, 1 otherwise. This instance, never PUBLIC_URL (behind a proxy that is the proxy). Opens no database: for a container\'s HEALTHCHECK',
    noDatabase: true,
    async run() {
      // This instance, as it listens: PUBLIC_URL may name the proxy in front of every instance.
      const bound = process.env.HOST;
      const host = !bound || bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound.includes(':') ? `[${bound}]` : bound;
      const base = `http://${host}:${process.env.PORT || '8080'}`;
      const url = `${base.replace(/\/+$/, '')}/v2/health/ready`;
      let status: number;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS), headers: { accept: 'application/json' } });
        status = response.status;
        await response.body?.cancel();
      } catch (error) {
        throw new Refusal(`not ready: ${url} did not answer (${(error as Error).name === 'TimeoutError' ? `no answer within ${HEALTHCHECK_TIMEOUT_MS} ms` : (error as Error).message})`);
      }
      if (status !== 200) throw new Refusal(`not ready: ${url} answered ${status}`);
      console.log(`ready: ${url} answered 200`);
    },
  },
  'db:seed': {
    usage: 'db:seed',
    help: 'load the seed catalogue into an empty database; outside production also the sandbox test customer and its orders (refused, seeding nothing, on a database a production deployment has used)',
    async run(context) {
      const { bootstrap } = await import('../bootstrap.js');
      const result = await bootstrap(context.config, context.database, await context.modules(), { seed: true });
      console.log(result.seededCheeses ? `seeded ${result.seededCheeses} cheeses` : 'catalogue not empty; nothing seeded');
      if (result.generatedAdminPassword) console.log(`created admin "${result.adminUsername}" with password: ${result.generatedAdminPassword}`);
    },
  },
  'fixtures remove': {
    usage: 'fixtures remove',
    help: "remove the development fixtures seeding made outside production, which a production start refuses to run beside: the sandbox test customer (published password) with its keys, sessions, grants and webhooks, and the sandbox orders (unshipped ones cancelled first, their stock back). Never another account's data; prints what it removed; running it again removes nothing. Safe beside a running server",
    async run(context) {
      const { removeFixtures, describeFixtures, hasFixtures } = await import('../fixtures.js');
      const removed = await removeFixtures(context.database, await context.modules(), context.config.env);
      console.log(hasFixtures(removed) ? `removed ${describeFixtures(removed)}` : 'no development fixtures found: nothing removed');
    },
  },
  'secrets init': {
    usage: 'secrets init [--file deploy/secrets.env]',
    help: 'write the deployment\'s secrets file once (APP_SECRET, ADMIN_PASSWORD, POSTGRES_PASSWORD; mode 0600) for `docker compose --env-file`: an existing file is kept as it is, so running it again changes nothing. Prints the path, never a secret. Needs no configuration or database',
    noDatabase: true,
    async run(context) {
      const { DEFAULT_SECRETS_FILE, initSecrets } = await import('./secrets-init.js');
      const outcome = initSecrets(context.values.file ?? DEFAULT_SECRETS_FILE, process.env.ADMIN_USERNAME || 'admin');
      console.log('written' in outcome ? `wrote ${outcome.written} (mode 0600): APP_SECRET, ADMIN_PASSWORD, POSTGRES_PASSWORD; keep it and back it up` : `${outcome.kept} exists: kept unchanged (no secret was made)`);
    },
  },
  'secrets re-encrypt': {
    usage: 'secrets re-encrypt',
    help: 're-seal every stored webhook secret under the current APP_SECRET (after a rotation, with the old one as APP_SECRET_PREVIOUS): prints how many were re-encrypted, already current, and unreadable (opened by neither secret: reported by webhook id, never deleted; exit 1). Each row is compare-and-set, so it is safe beside running instances and running it again changes nothing',
    async run(context) {
      const counts = await (await context.modules()).webhooks.provides.storedSecrets.reseal();
      console.log(`re-encrypted ${counts.reencrypted}, already current ${counts.alreadyCurrent}, unreadable ${counts.unreadable}`);
      if (counts.changedMeanwhile > 0) console.log(`${counts.changedMeanwhile} changed at every try (rolled meanwhile): run it again`);
      if (counts.unreadable > 0) {
        throw new Refusal(`unreadable: the secrets of webhook(s) ${counts.unreadableWebhookIds.join(', ')} open under neither APP_SECRET nor APP_SECRET_PREVIOUS; they were left as they are (roll each one's secret to replace it)`);
      }
    },
  },
  ...BACKUP_COMMANDS,
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
    help: "list the account's active keys (neither revoked nor expired), under a header row",
    async run(context) {
      const account = await accountOf(context);
      const keys = await (await context.modules()).identity.provides.apiKeys.list(account.id);
      printTable(
        ['id', 'prefix', 'scopes', 'expires', 'name'],
        keys.map((key) => [key.id, `${key.keyPrefix}…`, key.scopes, key.expiresAt ?? 'no expiry', key.name ?? '']),
      );
    },
  },
  'api-keys revoke': {
    usage: 'api-keys revoke --user NAME --id N',
    help: 'revoke a key (a key already revoked is left as it is, and said so)',
    async run(context) {
      const id = context.values.id;
      if (!id || !/^[0-9]+$/.test(id)) throw new UsageError('--id must be a key id');
      const account = await accountOf(context);
      const { alreadyRevokedAt } = await (await context.modules()).identity.provides.apiKeys.revoke(account.id, Number(id), null);
      if (alreadyRevokedAt) {
        console.log(`key ${id} was already revoked (at ${alreadyRevokedAt}); nothing changed`);
        return;
      }
      console.log(`revoked key ${id}`);
    },
  },
  'admin reset-password': {
    usage: 'admin reset-password [--user NAME] [--password-stdin] [--quiet]',
    help: 'set a new password for the admin (or --user NAME): with --password-stdin, the first line of stdin, or on a terminal typed unseen twice; otherwise a generated one (24 characters), printed once alone on the last line (with --quiet, alone on stdout). Never taken as an argument. Ends the account\'s login sessions and OAuth grants; its API keys stay valid',
    async run(context) {
      const { values } = context;
      const username = values.user ?? context.config.adminUsername;
      let password: string;
      if (values['password-stdin']) {
        password = await passwordFromStdin(username);
      } else {
        password = (await import('../modules/identity/identity.module.js')).generatePassword();
      }
      // Unknown account (NotFoundError) or the current password (ConflictError): exit 1 with its message.
      const outcome = await (await context.modules()).identity.provides.accounts.resetPassword(username, password);
      if (!values.quiet) {
        console.log(`password of "${username}" reset: ${outcome.loginSessionsEnded} login session(s) ended, ${outcome.oauthGrantsRevoked} OAuth grant(s) revoked; API keys stay valid`);
        if (!values['password-stdin']) console.log('The new password is shown only now; store it safely:');
      }
      if (!values['password-stdin']) console.log(password);
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
      const { GRANTS } = await import('../modules/identity/identity.module.js');
      const words = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter(Boolean);
      if (!values.name || (values.type !== 'confidential' && values.type !== 'public')) throw new UsageError('--name and --type confidential|public are required');
      const scopes = words(values.scopes);
      if (scopes.length === 0 || scopes.some((s) => !isOAuthScope(s))) throw new UsageError(`--scopes must list scopes among: ${OAUTH_SCOPES.join(' ')}`);
      const grants = words(values.grants);
      if (grants.length === 0 || grants.some((g) => !(GRANTS as readonly string[]).includes(g))) throw new UsageError(`--grants must list grants among: ${GRANTS.join(' ')}`);
      // The owner (the admin unless --user names another): client-credentials tokens act as it.
      const owner = await accountOf({ ...context, values: { ...values, user: values.user ?? context.config.adminUsername } });
      const client = await (await context.modules()).identity.provides.oauthClients.register(
        { name: values.name, type: values.type, redirectUris: values['redirect-uri'] ?? [], grants: grants as (typeof GRANTS)[number][], scopes: scopes as OAuthScope[] },
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
    help: 'list the registered OAuth clients (never their secrets), under a header row',
    async run(context) {
      const clients = await (await context.modules()).identity.provides.oauthClients.list();
      printTable(
        ['id', 'client_id', 'type', 'grants', 'scopes', 'name'],
        clients.map((c) => [c.id, c.clientId, c.type, c.grants.join(' '), c.scopes.join(' '), c.name]),
      );
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
