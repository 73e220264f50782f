import { parseArgs } from 'node:util';
// Only light modules load at the top: `help` and `--help` never touch the configuration or the
// database, and each command imports what it needs (the app's module graph, the drivers) when
// it runs. Under tsx every imported file is transpiled on load, so this is most of a call's time.
// The developer commands (listen, trigger, events resend) are HTTP clients: they load neither.
import type { Modules } from '../modules.js';
import { AppError } from '../kernel/errors.js';
import { Refusal, UsageError } from './cli.errors.js';
import { COMMANDS, OPTIONS, type Context } from './operator-commands.js';
import { DEV_COMMANDS, devCommandOf } from './dev/commands.js';

const USAGE = `Fromagerie operator CLI

Usage: npm run cli -- <command> [options]     (or: fromagerie <command> [options])

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.help}`)
  .join('\n')}

Configuration comes from the same environment variables as the server (see README).

Developer commands (HTTP clients of a running API: no database):
${Object.values(DEV_COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.help}`)
  .join('\n')}`;

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  const name = positionals.join(' ');
  // The name is the operator's: only the table's own entries are commands (`constructor` is not).
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (values.help || name === '' || name === 'help') {
    // Help never loads the configuration nor opens the database.
    console.log(command ? `Usage: npm run cli -- ${command.usage}\n\n  ${command.help}` : USAGE);
    return;
  }
  if (!command) throw new UsageError(`unknown command "${name}"`);
  if (values.password !== undefined) {
    throw new UsageError('--password is refused: a password in the arguments lands in the shell history and `ps`. Pipe it with --password-stdin, or omit both to have one generated');
  }
  if (command.noDatabase) {
    await command.run({ values } as Context);
    return;
  }
  const [{ loadConfig }, { openDatabase }] = await Promise.all([import('../config.js'), import('../db/database.js')]);
  const config = loadConfig();
  const database = openDatabase(config);
  let modules: Modules | undefined;
  // A revocation made here (api-keys revoke, admin reset-password) reaches running instances' caches.
  let broadcast: { close(): Promise<void> } | undefined;
  try {
    await command.run({
      config,
      database,
      values,
      modules: async () => {
        if (!modules) {
          const [{ migrateToLatest }, { createModules }, { openChangeBroadcast }] = await Promise.all([import('../db/migrate.js'), import('../modules.js'), import('../db/change-broadcast.js')]);
          await migrateToLatest(database.db as never, database.schema);
          const tells = openChangeBroadcast(database, { listen: false });
          broadcast = tells;
          modules = createModules(config, database, undefined, tells);
        }
        return modules;
      },
    });
  } finally {
    await (modules as Modules | undefined)?.limits.provides.close();
    await broadcast?.close();
    await database.close();
  }
}

function unexpected(error: unknown): string {
  const { message, code } = error instanceof Error ? (error as Error & { code?: unknown }) : { message: String(error), code: undefined };
  const line = message.split('\n')[0]!.trim() || 'failed';
  return typeof code === 'string' && !line.includes(code) ? `${line} (${code})` : line;
}

/** A developer command: its own flags, and its exits (2 usage, 3 refused, 4 gone: issue 30). */
async function runDev(name: string, rest: string[]): Promise<void> {
  const command = DEV_COMMANDS[name]!;
  const { Exit, EXIT } = await import('./dev/connection.js');
  try {
    const { parseDevArgs } = await import('./dev/commands.js');
    const { values, positionals } = parseDevArgs(command, rest);
    if (values.help) {
      console.log(`Usage: fromagerie ${command.usage}\n\n  ${command.help}`);
      return;
    }
    await command.run(values, positionals);
  } catch (error) {
    if (error instanceof Exit) {
      console.error(error.code === EXIT.usage && /^(--|no API key)/.test(error.message) ? `${error.message}\n\nUsage: fromagerie ${command.usage}` : error.message);
      process.exit(error.code);
    }
    if (error instanceof TypeError && ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') || error.message.startsWith('--'))) {
      console.error(`${error.message}\n\nUsage: fromagerie ${command.usage}`);
      process.exit(EXIT.usage);
    }
    console.error(`error: ${unexpected(error)}`);
    process.exit(EXIT.failed);
  }
  // Nothing may keep the process up once the command is done (a socket kept alive, a timer).
  process.exit(0);
}

const argv = process.argv.slice(2);
const dev = devCommandOf(argv);
if (dev) await runDev(dev.name, dev.rest);
else run(argv).catch(async (error: unknown) => {
  const { ConfigError } = await import('../config/variable.js').catch(() => ({ ConfigError: undefined }));
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof Refusal) console.error(error.message);
  else if ((ConfigError && error instanceof ConfigError) || error instanceof AppError) console.error(error.message);
  else if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) console.error(`${error.message}\n\n${USAGE}`);
  // Anything else (the database busy or gone, a bug): its message on one line, never a stack.
  else console.error(`error: ${unexpected(error)}`);
  process.exit(1);
});
